/* The race detector's trace function in C (docs/harness.md, "Data races"; races.py).
 *
 * A Python trace function is a Python call per traced opcode: on the Akka reference program
 * that call and its filter (is this instruction an access?) were most of the detector's cost.
 * Here the whole filter stays in C and Python is called only at an access site:
 *
 *   PyTrace_CALL    the code's access table (``race_sites.code_table`` as a tuple indexed by
 *                   code unit, None where an instruction is no access) is cached on the code
 *                   object itself (PEP 523's co_extra, computed once by calling back into
 *                   Python); opcode events are turned on only for code under test entered inside
 *                   a controlled thread's step (``Execution.current`` set): the scheduler's own
 *                   evaluation between steps (invariants, final checks) is never traced.
 *   PyTrace_OPCODE  one tuple index at the frame's last instruction; the Python handler
 *                   (``RaceDetector._site(frame, entry)``) runs only where it is not None.
 *
 * ``stack_value`` (a pointer read), ``join`` and ``sync_op`` (vector clocks, at every step) are
 * the detector's other hot helpers. CPython 3.11 only (its frame layout): setup.py builds this
 * on 3.11 alone and races.py falls back to the identical pure-Python tracer without it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "_race_tracer reads CPython 3.11's frames"
#endif

#define Py_BUILD_CORE 1
#include "internal/pycore_frame.h"
#undef Py_BUILD_CORE

#include "_fingerprint_hot.h"

static Py_ssize_t extra_index = -1;
static PyObject *str_current = NULL;

static void
free_extra(void *extra)
{
    Py_XDECREF((PyObject *)extra);
}

typedef struct {
    PyObject_HEAD
    PyObject *ex;       /* the Execution: ``current`` is read at call events */
    PyObject *table_of; /* code -> tuple of entries by code unit, or None (a pure function) */
    PyObject *handler;  /* (frame, entry) -> None, at an access site */
    PyObject *code_types; /* race_sites.CODE_TYPES: reads of these are reads of code */
    PyObject *containers; /* race_sites.CONTAINERS */
    PyObject *methods;    /* race_sites.METHODS: the container methods that are accesses */
    PyObject *len;        /* builtins.len */
    PyObject *named_calls; /* race_sites.NAMED_CALLS: getattr and kin, heapq.heappush and kin */
} Tracer;

/* Every object member, once: init, traverse and clear walk this list, so a member added to the
 * struct and here cannot be left out of the garbage collector's view. */
#define TRACER_MEMBERS(X)                                                                  \
    X(ex) X(table_of) X(handler) X(code_types) X(containers) X(methods) X(len) X(named_calls)
#define SET_MEMBER(m) Py_XSETREF(self->m, Py_NewRef(m));

/* The entry kinds of race_sites (``LOAD_ATTR, STORE_ATTR, ... = range(13)``; a test compares). */
enum { LOAD_ATTR, STORE_ATTR, SUBSCR, STORE_SUBSCR, GLOBAL_NAME, STORE_GLOBAL, CONTAINS, ITER,
       CALL, LOAD_CELL, STORE_CELL, DELETE_SUBSCR, BINARY };

static int
is_instance(PyObject *obj, PyObject *types)
{
    return obj != NULL && PyObject_IsInstance(obj, types);
}

/* Is ``value`` (NULL: not there) data, not code? 1, 0, or -1 on an error. */
static int
is_data(Tracer *t, PyObject *value)
{
    if (value == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    int code = is_instance(value, t->code_types);
    return code < 0 ? -1 : !code;
}

/* ``races._load_attr``'s filter: a module's global or a class's data where its body (or a base's)
 * defines it as data (``race_sites.class_owner``), any other object's attribute unless the
 * object is code. */
static int
attr_worth(Tracer *t, PyObject *obj, PyObject *name)
{
    if (obj == NULL || !PyUnicode_Check(name)) {
        return 1;
    }
    if (PyModule_Check(obj)) {
        PyObject *dict = PyModule_GetDict(obj);
        return dict == NULL ? 1 : is_data(t, PyDict_GetItemWithError(dict, name));
    }
    if (PyType_Check(obj)) {
        return is_data(t, _PyType_Lookup((PyTypeObject *)obj, name));
    }
    int code = is_instance(obj, t->code_types);
    return code < 0 ? -1 : !code;
}

/* Could the handler record an access at this site? 0 only where ``RaceDetector._site`` is sure
 * to record nothing (the same tests on the same stack values); 1 where it may; -1 on an error.
 * Most sites are calls of anything but a container method and loads of functions and classes:
 * they stay here, in C. */
static int
worth(Tracer *t, _PyInterpreterFrame *fr, PyObject *entry)
{
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 2) {
        return 1;
    }
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
    if (kind == -1 && PyErr_Occurred()) {
        return -1;
    }
    PyObject *arg = PyTuple_GET_ITEM(entry, 1);
    int base = fr->f_code->co_nlocalsplus, top = fr->stacktop;
#define STACK(depth) (top - (depth) >= base ? fr->localsplus[top - (depth)] : NULL)
    if (top < base) {
        return 1; /* no stack pointer stored: let the handler judge (and fail) */
    }
    switch (kind) {
    case LOAD_ATTR:
        return attr_worth(t, STACK(1), arg);
    case SUBSCR:
    case STORE_SUBSCR:
    case DELETE_SUBSCR:
        return is_instance(STACK(2), t->containers);
    case LOAD_CELL: { /* arg: (slot, name); a cell holding code is a read of code */
        if (!PyTuple_Check(arg) || PyTuple_GET_SIZE(arg) != 2) {
            return 1;
        }
        long slot = PyLong_AsLong(PyTuple_GET_ITEM(arg, 0));
        if (slot == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (slot < 0 || slot >= base) {
            return 1;
        }
        PyObject *cell = fr->localsplus[slot];
        if (cell == NULL || !PyCell_Check(cell)) {
            return 0;
        }
        PyObject *value = PyCell_GET(cell);
        return value == NULL ? 0 : is_data(t, value);
    }
    case CONTAINS:
        return is_instance(STACK(1), t->containers);
    case ITER: { /* a container read whole, or a generator run */
        PyObject *iterated = STACK(1);
        return iterated != NULL && PyGen_Check(iterated) ? 1 : is_instance(iterated, t->containers);
    }
    case BINARY: { /* either operand a container */
        int left = is_instance(STACK(2), t->containers);
        return left != 0 ? left : is_instance(STACK(1), t->containers);
    }
    case GLOBAL_NAME: {
        if (!PyDict_CheckExact(fr->f_globals) || !PyUnicode_CheckExact(arg)) {
            return 1;
        }
        PyObject *value = PyDict_GetItemWithError(fr->f_globals, arg);
        if (value == NULL) {
            return PyErr_Occurred() ? -1 : 0; /* a builtin, or not defined yet: no global */
        }
        int code = is_instance(value, t->code_types);
        return code < 0 ? -1 : !code;
    }
    case CALL: {
        long argc = PyLong_AsLong(arg);
        if (argc == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (argc < 0 || top - (argc + 2) < base) {
            return 1;
        }
        PyObject *meth = STACK(argc + 2), *target = STACK(argc + 1);
        if (meth != NULL) { /* obj.method(args) */
            if (!PyObject_TypeCheck(meth, &PyMethodDescr_Type)) {
                return 0;
            }
            int named = PyDict_Contains(t->named_calls, meth);
            if (named != 0) {
                return named; /* ", ".join(items): the handler reads the arguments */
            }
            int container = is_instance(target, t->containers);
            if (container <= 0) {
                return container;
            }
            return PyDict_Contains(t->methods, PyDescr_NAME(meth));
        }
        if (target == t->len && argc == 1) {
            return is_instance(STACK(1), t->containers);
        }
        if (target != NULL) {
            int named = PyDict_Contains(t->named_calls, target);
            if (named < 0) {
                PyErr_Clear(); /* an unhashable callable: not one of them */
            }
            else if (named) {
                return 1; /* getattr(obj, name), heapq.heappush(heap, x), ...: the handler decides */
            }
        }
        /* a bound builtin method called through a name: its __self__ a container */
        if (!PyCFunction_Check(target)) {
            return 0;
        }
        return is_instance(PyCFunction_GET_SELF(target), t->containers);
    }
    default: /* STORE_ATTR (the handler tests the object's owner), STORE_GLOBAL, STORE_CELL */
        return 1;
    }
#undef STACK
}

/* The code's entries (borrowed: its co_extra slot owns them), computed on first sight. */
static PyObject *
entries_of(Tracer *t, PyCodeObject *code)
{
    void *extra = NULL;
    if (_PyCode_GetExtra((PyObject *)code, extra_index, &extra) < 0) {
        return NULL;
    }
    if (extra != NULL) {
        return (PyObject *)extra;
    }
    PyObject *found = PyObject_CallOneArg(t->table_of, (PyObject *)code);
    if (found == NULL) {
        return NULL;
    }
    /* table_of ran Python code, so another OS thread may have stored a table meanwhile: keep
     * that one, since overwriting the slot would leak it or free it under its reader */
    if (_PyCode_GetExtra((PyObject *)code, extra_index, &extra) < 0) {
        Py_DECREF(found);
        return NULL;
    }
    if (extra != NULL) {
        Py_DECREF(found);
        return (PyObject *)extra;
    }
    if (found != Py_None &&
        (!PyTuple_Check(found) || PyTuple_GET_SIZE(found) != Py_SIZE(code))) {
        Py_DECREF(found);
        PyErr_SetString(PyExc_TypeError,
                        "table_of must return None or a tuple with one entry per code unit");
        return NULL;
    }
    if (_PyCode_SetExtra((PyObject *)code, extra_index, found) < 0) {
        Py_DECREF(found);
        return NULL;
    }
    return found;
}

/* As sys.settrace's trampoline does on an error: tracing stops and the exception propagates
 * into the traced code (an ``Abort`` raised at an interleaved point unwinds the thread so). */
static int
fail(void)
{
    PyEval_SetTrace(NULL, NULL);
    return -1;
}

static int
trace(PyObject *obj, PyFrameObject *f, int what, PyObject *arg)
{
    Tracer *t = (Tracer *)obj;
    _PyInterpreterFrame *fr = f->f_frame;
    if (what == PyTrace_OPCODE) {
        void *extra = NULL;
        if (_PyCode_GetExtra((PyObject *)fr->f_code, extra_index, &extra) < 0) {
            return fail();
        }
        PyObject *entries = (PyObject *)extra;
        if (entries == NULL || entries == Py_None) {
            return 0; /* opcode events turned on by someone else: not ours to judge */
        }
        int unit = _PyInterpreterFrame_LASTI(fr);
        if (unit < 0 || unit >= PyTuple_GET_SIZE(entries)) {
            return 0;
        }
        PyObject *entry = PyTuple_GET_ITEM(entries, unit);
        if (entry == Py_None) {
            return 0;
        }
        int go = worth(t, fr, entry);
        if (go <= 0) {
            return go < 0 ? fail() : 0;
        }
        PyObject *args[2] = {(PyObject *)f, entry};
        PyObject *out = PyObject_Vectorcall(t->handler, args, 2, NULL);
        if (out == NULL) {
            return fail();
        }
        Py_DECREF(out);
        return 0;
    }
    if (what == PyTrace_CALL) {
        PyObject *entries = entries_of(t, fr->f_code);
        if (entries == NULL) {
            return fail();
        }
        int on = 0;
        if (entries != Py_None) {
            PyObject *current = PyObject_GetAttr(t->ex, str_current);
            if (current == NULL) {
                return fail();
            }
            on = current != Py_None;
            Py_DECREF(current);
        }
        /* no line events at all: nothing here uses them, and each would be a call */
        f->f_trace_lines = 0;
        f->f_trace_opcodes = (char)on;
    }
    return 0;
}

static int
Tracer_init(Tracer *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"ex", "table_of", "handler", "code_types", "containers", "methods",
                             "named_calls", NULL};
    PyObject *ex, *table_of, *handler, *code_types, *containers, *methods, *named_calls;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOO!O!O!O!", kwlist, &ex, &table_of, &handler,
                                     &PyTuple_Type, &code_types, &PyTuple_Type, &containers,
                                     &PyDict_Type, &methods, &PyDict_Type, &named_calls)) {
        return -1;
    }
    if (!PyCallable_Check(table_of) || !PyCallable_Check(handler)) {
        PyErr_SetString(PyExc_TypeError, "table_of and handler must be callable");
        return -1;
    }
    PyObject *len = PyDict_GetItemString(PyEval_GetBuiltins(), "len");
    if (len == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "no builtins.len");
        return -1;
    }
    TRACER_MEMBERS(SET_MEMBER)
    return 0;
}

LANECHECK_GC_METHODS(Tracer, TRACER_MEMBERS)

static PyObject *
Tracer_install(Tracer *self, PyObject *Py_UNUSED(ignored))
{
    if (self->handler == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Tracer not initialised");
        return NULL;
    }
    PyEval_SetTrace(trace, (PyObject *)self);
    Py_RETURN_NONE;
}

/* A saved ``sys.gettrace()`` is this object: restored with ``sys.settrace(tracer)`` (a nested
 * ``check`` restoring its caller's tracer) it is called as a Python trace function at the next
 * call event; it then makes itself the C trace function again and judges that call as the C
 * function would have, or the frame of that call would run untraced. */
static PyObject *
Tracer_call(Tracer *self, PyObject *args, PyObject *kwds)
{
    PyObject *frame, *event, *arg;
    if (!PyArg_ParseTuple(args, "OOO", &frame, &event, &arg)) {
        return NULL;
    }
    if (self->handler == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Tracer not initialised");
        return NULL;
    }
    PyEval_SetTrace(trace, (PyObject *)self);
    if (PyFrame_Check(frame) && PyUnicode_Check(event) &&
        PyUnicode_CompareWithASCIIString(event, "call") == 0 &&
        trace((PyObject *)self, (PyFrameObject *)frame, PyTrace_CALL, arg) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef Tracer_methods[] = {
    {"install", (PyCFunction)Tracer_install, METH_NOARGS,
     "Make this the calling OS thread's trace function (as sys.settrace; sys.settrace(None) "
     "removes it)."},
    {NULL}};

static PyTypeObject TracerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "model_checks.harness._race_tracer.Tracer",
    .tp_basicsize = sizeof(Tracer),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Tracer(ex, table_of, handler, code_types, containers, methods, named_calls): the race "
              "detector's trace function.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Tracer_init,
    .tp_dealloc = (destructor)Tracer_dealloc,
    .tp_traverse = (traverseproc)Tracer_traverse,
    .tp_clear = (inquiry)Tracer_clear,
    .tp_methods = Tracer_methods,
    .tp_call = (ternaryfunc)Tracer_call,
};

/* The frame and the depth of ``stack_value`` and ``frame_contents`` (``expected`` arguments in
 * all): 0, or -1 with the error set. */
static int
frame_args(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t expected, const char *usage,
           _PyInterpreterFrame **fr, long *depth)
{
    if (nargs != expected || !PyFrame_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    *depth = PyLong_AsLong(args[1]);
    if (*depth == -1 && PyErr_Occurred()) {
        return -1;
    }
    *fr = ((PyFrameObject *)args[0])->f_frame;
    return 0;
}

/* A new reference to a frame slot's content, None for an empty slot. */
static PyObject *
slot_or_none(PyObject *value)
{
    return Py_NewRef(value == NULL ? Py_None : value);
}

/* stack_value(frame, depth): the value ``depth`` entries below the top of a traced frame's value
 * stack (1 = top), None for a NULL slot; ValueError when the frame has no stored stack pointer
 * or the depth is past its stack (only a frame inside a trace event has one). */
static PyObject *
stack_value(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    _PyInterpreterFrame *fr;
    long depth;
    if (frame_args(args, nargs, 2, "stack_value(frame, depth)", &fr, &depth) < 0) {
        return NULL;
    }
    long index = (long)fr->stacktop - depth;
    if (fr->stacktop < 0 || depth < 1 || index < fr->f_code->co_nlocalsplus) {
        PyErr_Format(PyExc_ValueError, "no value %ld deep on this frame's stack", depth);
        return NULL;
    }
    return slot_or_none(fr->localsplus[index]);
}

/* fast_local(frame, slot): the raw content of a frame's fast-locals slot (for a cell or free
 * variable, its cell), None for an empty slot; ValueError past the frame's locals. */
static PyObject *
fast_local(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    _PyInterpreterFrame *fr;
    long slot;
    if (frame_args(args, nargs, 2, "fast_local(frame, slot)", &fr, &slot) < 0) {
        return NULL;
    }
    if (slot < 0 || slot >= fr->f_code->co_nlocalsplus) {
        PyErr_Format(PyExc_ValueError, "no local slot %ld in this frame", slot);
        return NULL;
    }
    return slot_or_none(fr->localsplus[slot]);
}

/* The fast locals (with cells and free variables) and the ``depth`` values of the stack, bottom
 * first, of a suspended frame, ``null`` where a slot is empty: a new (locals, stack) tuple, or
 * NULL with ValueError when the depth is out of the frame's range. */
static PyObject *
read_slots(_PyInterpreterFrame *fr, long depth, PyObject *null)
{
    PyCodeObject *code = fr->f_code;
    Py_ssize_t n = code->co_nlocalsplus;
    if (depth < 0 || depth > code->co_stacksize) {
        PyErr_Format(PyExc_ValueError, "%U: stack depth %ld out of range", code->co_qualname, depth);
        return NULL;
    }
    PyObject *locals = PyList_New(n);
    PyObject *stack = PyList_New(depth);
    PyObject *both = PyTuple_New(2);
    if (locals == NULL || stack == NULL || both == NULL) {
        Py_XDECREF(locals);
        Py_XDECREF(stack);
        Py_XDECREF(both);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n + depth; i++) {
        PyObject *value = fr->localsplus[i];
        value = Py_NewRef(value == NULL ? null : value);
        if (i < n) {
            PyList_SET_ITEM(locals, i, value);
        }
        else {
            PyList_SET_ITEM(stack, i - n, value);
        }
    }
    PyTuple_SET_ITEM(both, 0, locals);
    PyTuple_SET_ITEM(both, 1, stack);
    return both;
}

/* frame_contents(frame, depth, null) -> (locals, stack): what ``rt/frames.py``'s ``contents``
 * reads of a suspended frame (``read_slots``) in one call instead of a ctypes read per slot.
 * ``depth`` -1: the depth the frame recorded (``stacktop``), or None when it recorded none (the
 * caller then computes it from the bytecode). ValueError where the frame cannot be read. */
static PyObject *
frame_contents(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    _PyInterpreterFrame *fr;
    long depth;
    if (frame_args(args, nargs, 3, "frame_contents(frame, depth, null)", &fr, &depth) < 0) {
        return NULL;
    }
    if (fr == NULL) {
        PyErr_SetString(PyExc_ValueError, "a frame with no interpreter frame");
        return NULL;
    }
    if (depth == -1) {
        if (fr->stacktop < 0) {
            Py_RETURN_NONE;
        }
        depth = (long)fr->stacktop - (long)fr->f_code->co_nlocalsplus;
    }
    return read_slots(fr, depth, args[2]);
}

/* The kinds of a code's entry in ``thread_frames``' table (rt/thread_frames.py names the same
 * numbers; a test compares). */
enum { FRAME_SKIP, FRAME_STOP, FRAME_READ, FRAME_READ_GLOBALS };

/* One frame's part, (atom, position, locals, stack), as rt/thread_frames.py's Python twin builds
 * it from ``entry`` = (kind, atom, positions or None, depths or None); NULL with an error set. */
static PyObject *
frame_part(PyFrameObject *f, PyObject *entry, PyObject *null)
{
    _PyInterpreterFrame *fr = f->f_frame;
    if (fr == NULL) {
        PyErr_SetString(PyExc_ValueError, "a frame with no interpreter frame");
        return NULL;
    }
    PyObject *positions = PyTuple_GET_ITEM(entry, 2), *depths = PyTuple_GET_ITEM(entry, 3);
    PyObject *lasti = PyLong_FromLong(PyFrame_GetLasti(f));
    if (lasti == NULL) {
        return NULL;
    }
    long depth;
    if (fr->stacktop >= 0) {
        depth = (long)fr->stacktop - (long)fr->f_code->co_nlocalsplus;
    }
    else {
        /* running, or calling C code: the depth before the instruction, from the bytecode */
        PyObject *known = depths == Py_None ? NULL : PyDict_GetItemWithError(depths, lasti);
        if (known == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_Format(PyExc_ValueError, "%U: no stack depth at offset %S",
                             fr->f_code->co_qualname, lasti);
            }
            Py_DECREF(lasti);
            return NULL;
        }
        depth = PyLong_AsLong(known);
        if (depth == -1 && PyErr_Occurred()) {
            Py_DECREF(lasti);
            return NULL;
        }
    }
    /* a call suspended in PRECALL is named by its CALL (``frames.position``) */
    PyObject *mapped = positions == Py_None ? NULL : PyDict_GetItemWithError(positions, lasti);
    if (mapped == NULL && PyErr_Occurred()) {
        Py_DECREF(lasti);
        return NULL;
    }
    PyObject *position = lasti;
    if (mapped != NULL) {
        position = Py_NewRef(mapped);
        Py_DECREF(lasti);
    }
    PyObject *both = read_slots(fr, depth, null);
    if (both == NULL) {
        Py_DECREF(position);
        return NULL;
    }
    PyObject *part = PyTuple_Pack(4, PyTuple_GET_ITEM(entry, 1), position, PyTuple_GET_ITEM(both, 0),
                                  PyTuple_GET_ITEM(both, 1));
    Py_DECREF(position);
    Py_DECREF(both);
    return part;
}

/* thread_frames(frame, table, null) -> (parts, globals), or a code object missing from ``table``
 * (the caller enters it and calls again): a thread's frames from ``frame`` outwards, read as
 * rt/thread_frames.py's Python twin reads them (the state fingerprint reads every frame of every
 * thread at each state; in Python that walk was a third of a fingerprint). ``parts`` and
 * ``globals`` are outermost first. ValueError where a frame cannot be read. */
static PyObject *
thread_frames(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || (args[0] != Py_None && !PyFrame_Check(args[0])) || !PyDict_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "thread_frames(frame or None, table, null)");
        return NULL;
    }
    PyObject *table = args[1], *null = args[2];
    PyObject *parts = PyList_New(0), *globals = PyList_New(0);
    if (parts == NULL || globals == NULL) {
        goto fail;
    }
    PyFrameObject *f = args[0] == Py_None ? NULL : (PyFrameObject *)Py_NewRef(args[0]);
    PyObject *entry = NULL;
    while (f != NULL) {
        PyCodeObject *code = PyFrame_GetCode(f);
        entry = PyDict_GetItemWithError(table, (PyObject *)code);
        if (entry == NULL) {
            Py_DECREF(f);
            Py_DECREF(parts);
            Py_DECREF(globals);
            if (PyErr_Occurred()) {
                Py_DECREF(code);
                return NULL;
            }
            return (PyObject *)code;
        }
        Py_DECREF(code);
        /* held: the allocations below may run a collection, and a finalizer may change the table */
        Py_INCREF(entry);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 4) {
            PyErr_SetString(PyExc_TypeError, "thread_frames: an entry is (kind, atom, positions, depths)");
            goto fail_in_frame;
        }
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
        if (kind == -1 && PyErr_Occurred()) {
            goto fail_in_frame;
        }
        if (kind == FRAME_STOP) {
            Py_DECREF(entry);
            Py_DECREF(f);
            break;
        }
        if (kind == FRAME_READ || kind == FRAME_READ_GLOBALS) {
            PyObject *part = frame_part(f, entry, null);
            if (part == NULL || PyList_Append(parts, part) < 0) {
                Py_XDECREF(part);
                goto fail_in_frame;
            }
            Py_DECREF(part);
            if (kind == FRAME_READ_GLOBALS) {
                PyObject *g = PyFrame_GetGlobals(f);
                if (g == NULL || PyList_Append(globals, g) < 0) {
                    Py_XDECREF(g);
                    goto fail_in_frame;
                }
                Py_DECREF(g);
            }
        }
        Py_DECREF(entry);
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    if (PyList_Reverse(parts) < 0 || PyList_Reverse(globals) < 0) {
        goto fail;
    }
    PyObject *out = PyTuple_Pack(2, parts, globals);
    Py_DECREF(parts);
    Py_DECREF(globals);
    return out;
fail_in_frame:
    Py_DECREF(entry);
    Py_DECREF(f);
fail:
    Py_XDECREF(parts);
    Py_XDECREF(globals);
    return NULL;
}

/* into[i] = max(into[i], other[i]), into grown with zeros to other's length (vector clocks). */
static int
join_into(PyObject *into, PyObject *other)
{
    Py_ssize_t n = PyList_GET_SIZE(other);
    while (PyList_GET_SIZE(into) < n) {
        PyObject *zero = PyLong_FromLong(0);
        if (zero == NULL || PyList_Append(into, zero) < 0) {
            Py_XDECREF(zero);
            return -1;
        }
        Py_DECREF(zero);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = PyList_GET_ITEM(into, i), *b = PyList_GET_ITEM(other, i);
        if (a == b) {
            continue;
        }
        int greater = PyObject_RichCompareBool(b, a, Py_GT);
        if (greater < 0) {
            return -1;
        }
        if (greater) {
            Py_INCREF(b);
            PyList_SET_ITEM(into, i, b);
            Py_DECREF(a);
        }
    }
    return 0;
}

static int
is_clock(PyObject *obj)
{
    if (!PyList_CheckExact(obj)) {
        PyErr_SetString(PyExc_TypeError, "a vector clock is a list of ints");
        return 0;
    }
    return 1;
}

/* join(into, other): the vector clock ``into`` joined with ``other``, in place. */
static PyObject *
join(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "join(into: list, other: list)");
        return NULL;
    }
    if (!is_clock(args[0]) || !is_clock(args[1]) || join_into(args[0], args[1]) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* sync_op(vc, tid, objs, read, writes, reads, yielded, everything): ``RaceDetector.sync`` for an
 * operation on the objects ``objs`` (race_frames.py_sync_op is the same in Python). */
static PyObject *
sync_op(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError,
                        "sync_op(vc, tid, objs, read, writes, reads, yielded, everything)");
        return NULL;
    }
    PyObject *vc = args[0], *objs = args[2], *writes = args[4], *reads = args[5];
    PyObject *yielded = args[6], *everything = args[7];
    if (!is_clock(vc) || !is_clock(everything) || (yielded != Py_None && !is_clock(yielded))) {
        return NULL;
    }
    if (!PyDict_CheckExact(writes) || !PyDict_CheckExact(reads)) {
        PyErr_SetString(PyExc_TypeError, "writes and reads are dicts");
        return NULL;
    }
    Py_ssize_t tid = PyLong_AsSsize_t(args[1]);
    if (tid == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (tid < 0 || tid >= PyList_GET_SIZE(vc)) {
        PyErr_SetString(PyExc_IndexError, "the thread has no entry in its clock");
        return NULL;
    }
    int read = PyObject_IsTrue(args[3]);
    if (read < 0) {
        return NULL;
    }
    PyObject *it = PyObject_GetIter(objs);
    if (it == NULL) {
        return NULL;
    }
    PyObject *oid;
    while ((oid = PyIter_Next(it)) != NULL) {
        PyObject *w = PyDict_GetItemWithError(writes, oid);
        int bad = (w == NULL && PyErr_Occurred()) || (w != NULL && (!is_clock(w) || join_into(vc, w) < 0));
        PyObject *r = bad ? NULL : PyDict_GetItemWithError(reads, oid);
        bad = bad || (r == NULL && PyErr_Occurred()) || (r != NULL && !is_clock(r));
        if (!bad) {
            if (read) {
                if (r == NULL) {
                    PyObject *copy = PyList_GetSlice(vc, 0, PyList_GET_SIZE(vc));
                    bad = copy == NULL || PyDict_SetItem(reads, oid, copy) < 0;
                    Py_XDECREF(copy);
                }
                else {
                    bad = join_into(r, vc) < 0;
                }
            }
            else {
                bad = r != NULL && join_into(vc, r) < 0;
                if (!bad) {
                    PyObject *copy = PyList_GetSlice(vc, 0, PyList_GET_SIZE(vc));
                    bad = copy == NULL || PyDict_SetItem(writes, oid, copy) < 0;
                    Py_XDECREF(copy);
                }
            }
        }
        Py_DECREF(oid);
        if (bad) {
            Py_DECREF(it);
            return NULL;
        }
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (yielded != Py_None && join_into(vc, yielded) < 0) {
        return NULL;
    }
    PyObject *old = PyList_GET_ITEM(vc, tid);
    long epoch = PyLong_AsLong(old);
    if (epoch == -1 && PyErr_Occurred()) {
        return NULL;
    }
    PyObject *next = PyLong_FromLong(epoch + 1);
    if (next == NULL) {
        return NULL;
    }
    PyList_SET_ITEM(vc, tid, next);
    Py_DECREF(old);
    if (join_into(everything, vc) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"frame_contents", (PyCFunction)(void (*)(void))frame_contents, METH_FASTCALL,
     "frame_contents(frame, depth, null): (locals, stack) of a suspended frame (rt/frames.py)."},
    {"thread_frames", (PyCFunction)(void (*)(void))thread_frames, METH_FASTCALL,
     "thread_frames(frame, table, null): a thread's frames as the state fingerprint reads them "
     "(rt/thread_frames.py)."},
    {"fast_local", (PyCFunction)(void (*)(void))fast_local, METH_FASTCALL,
     "fast_local(frame, slot): a frame's fast-locals slot (a cell for a closure variable)."},
    {"stack_value", (PyCFunction)(void (*)(void))stack_value, METH_FASTCALL,
     "stack_value(frame, depth): a value of a traced frame's stack (1 = top)."},
    {"join", (PyCFunction)(void (*)(void))join, METH_FASTCALL,
     "join(into, other): the vector clock ``into`` joined with ``other``, in place."},
    {"sync_op", (PyCFunction)(void (*)(void))sync_op, METH_FASTCALL,
     "sync_op(vc, tid, objs, read, writes, reads, yielded, everything): RaceDetector.sync of an "
     "operation on objects."},
    {NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_race_tracer",
    "The race detector's trace function, stack reader and clock join, and the fingerprint's frame "
    "reader, reducer and seed check, in C (races.py, rt/frames.py, _fingerprint_hot.c).", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__race_tracer(void)
{
    if (extra_index < 0) {
        extra_index = _PyEval_RequestCodeExtraIndex(free_extra);
        if (extra_index < 0) {
            PyErr_SetString(PyExc_RuntimeError, "no co_extra slot left for the race tracer");
            return NULL;
        }
    }
    if (str_current == NULL) {
        str_current = PyUnicode_InternFromString("current");
        if (str_current == NULL) {
            return NULL;
        }
    }
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddType(m, &TracerType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    PyObject *kinds = Py_BuildValue("(sssssssssssss)", "LOAD_ATTR", "STORE_ATTR", "SUBSCR",
                                    "STORE_SUBSCR", "GLOBAL_NAME", "STORE_GLOBAL", "CONTAINS",
                                    "ITER", "CALL", "LOAD_CELL", "STORE_CELL", "DELETE_SUBSCR",
                                    "BINARY");
    if (kinds == NULL || PyModule_AddObject(m, "KINDS", kinds) < 0) {
        Py_XDECREF(kinds);
        Py_DECREF(m);
        return NULL;
    }
    PyObject *frame_kinds = Py_BuildValue("(ssss)", "SKIP", "STOP", "READ", "READ_GLOBALS");
    if (frame_kinds == NULL || PyModule_AddObject(m, "FRAME_KINDS", frame_kinds) < 0) {
        Py_XDECREF(frame_kinds);
        Py_DECREF(m);
        return NULL;
    }
    if (lanecheck_add_fingerprint_hot(m) < 0 || lanecheck_add_field_reader(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
