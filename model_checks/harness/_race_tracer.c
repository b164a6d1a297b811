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

#include "_native.h"

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
    PyObject *containers; /* race_sites.CONTAINERS and ITERATORS: what the filter lets through */
    PyObject *methods;    /* race_sites.METHODS: the container methods that are accesses */
    PyObject *len;        /* builtins.len */
    PyObject *named_calls; /* race_sites.NAMED_CALLS: getattr and kin, heapq.heappush and kin */
    long opcodes;          /* opcode events since the last LONG_RUN call */
} Tracer;

/* Every object member, once: init, traverse and clear walk this list, so a member added to the
 * struct and here cannot be left out of the garbage collector's view. */
#define TRACER_MEMBERS(X)                                                                  \
    X(ex) X(table_of) X(handler) X(code_types) X(containers) X(methods) X(len) X(named_calls)
#define SET_MEMBER(m) Py_XSETREF(self->m, Py_NewRef(m));

/* The entry kinds of race_sites (``LOAD_ATTR, STORE_ATTR, ... = range(15)``; a test compares). */
enum { LOAD_ATTR, STORE_ATTR, SUBSCR, STORE_SUBSCR, GLOBAL_NAME, STORE_GLOBAL, CONTAINS, ITER,
       CALL, LOAD_CELL, STORE_CELL, DELETE_SUBSCR, BINARY, TRUTH, RUN };

/* Opcodes of code under test between two calls of the handler with no entry (``None``): the
 * detector then asks whether the running thread made any operation meanwhile, and a thread that
 * loops over its local variables only (no access, no operation: ``while True: n += 1``) gives
 * way (``busy_wait.BusyWait.long_run``), so the time limit and the livelock watch reach it. */
#define LONG_RUN (1L << 21)

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

/* Is any of the ``argc`` arguments of the call about to run a container? 1, 0, or -1. */
static int
containers_among(Tracer *t, _PyInterpreterFrame *fr, long argc)
{
    int base = fr->f_code->co_nlocalsplus, top = fr->stacktop;
    for (long depth = 1; depth <= argc && top - depth >= base; depth++) {
        int found = is_instance(fr->localsplus[top - depth], t->containers);
        if (found != 0) {
            return found;
        }
    }
    return 0;
}

/* A call of ``race_sites.NAMED_CALLS``'s ``callable``: 1 where the handler decides (getattr,
 * next, gen.send, ...), else whether a container is among the arguments (``str(x)``,
 * ``sorted(xs)``: the handler reads only those); -1 on an error, -2 when it is no named call. */
static int
named_worth(Tracer *t, _PyInterpreterFrame *fr, PyObject *callable, long argc)
{
    PyObject *how = PyDict_GetItemWithError(t->named_calls, callable);
    if (how == NULL) {
        if (PyErr_Occurred()) {
            PyErr_Clear(); /* an unhashable callable: not one of them */
        }
        return -2;
    }
    return how == Py_True ? containers_among(t, fr, argc) : 1;
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
    case TRUTH: /* ``if xs:``, ``not d``, ``xs or ys``: a container's truth is its length */
        return is_instance(STACK(1), t->containers);
    case ITER: { /* a container read whole (or its iterator moved), or a generator run */
        PyObject *iterated = STACK(1);
        return iterated != NULL && PyGen_Check(iterated) ? 1 : is_instance(iterated, t->containers);
    }
    case RUN: /* a loop's turn: only a generator's is an access (it runs the generator) */
        return STACK(1) != NULL && PyGen_Check(STACK(1));
    case BINARY: { /* either operand a container, or "%s" % (items,) */
        int left = is_instance(STACK(2), t->containers);
        if (left != 0) {
            return left;
        }
        PyObject *right = STACK(1);
        if (right != NULL && PyTuple_Check(right) && STACK(2) != NULL && PyUnicode_Check(STACK(2))) {
            return 1;
        }
        return is_instance(right, t->containers);
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
            int named = named_worth(t, fr, meth, argc);
            if (named != -2) {
                return named; /* ", ".join(items), log.info("%s", xs): the containers handed */
            }
            /* a container's method: ``xs.append(x)``, or a slot's ``xs.__setitem__(0, x)`` */
            if (!PyObject_TypeCheck(meth, &PyMethodDescr_Type) && !PyObject_TypeCheck(meth, &PyWrapperDescr_Type)) {
                return 0;
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
            int named = named_worth(t, fr, target, argc);
            if (named != -2) {
                return named; /* getattr(obj, name), heapq.heappush(heap, x), str(x), ... */
            }
        }
        /* an unbound method called as a function: ``list.append(xs, 9)`` */
        if (target != NULL && argc >= 1 &&
            (PyObject_TypeCheck(target, &PyMethodDescr_Type) || PyObject_TypeCheck(target, &PyWrapperDescr_Type))) {
            return is_instance(STACK(argc), t->containers);
        }
        /* a bound builtin method called through a name: its __self__ a container */
        if (PyCFunction_Check(target)) {
            return is_instance(PyCFunction_GET_SELF(target), t->containers);
        }
        if (target != NULL && Py_IS_TYPE(target, &_PyMethodWrapper_Type)) { /* xs.__setitem__(0, 1) */
            PyObject *self = PyObject_GetAttrString(target, "__self__");
            if (self == NULL) {
                return -1;
            }
            int container = is_instance(self, t->containers);
            Py_DECREF(self);
            return container;
        }
        return 0;
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
        if (++t->opcodes >= LONG_RUN) {
            t->opcodes = 0;
            PyObject *args[2] = {(PyObject *)f, Py_None};
            PyObject *out = PyObject_Vectorcall(t->handler, args, 2, NULL);
            if (out == NULL) {
                return fail();
            }
            Py_DECREF(out);
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


static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_race_tracer",
    "The race detector's trace function, stack reader and clock join, and the fingerprint's frame "
    "reader, reducer and seed check, in C (races.py, rt/frames.py, _fingerprint_hot.c).", -1,
    NULL, NULL, NULL, NULL, NULL,
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
    PyObject *kinds = Py_BuildValue("(sssssssssssssss)", "LOAD_ATTR", "STORE_ATTR", "SUBSCR",
                                    "STORE_SUBSCR", "GLOBAL_NAME", "STORE_GLOBAL", "CONTAINS",
                                    "ITER", "CALL", "LOAD_CELL", "STORE_CELL", "DELETE_SUBSCR",
                                    "BINARY", "TRUTH", "RUN");
    if (kinds == NULL || PyModule_AddObject(m, "KINDS", kinds) < 0) {
        Py_XDECREF(kinds);
        Py_DECREF(m);
        return NULL;
    }
    if (lanecheck_add_frame_reader(m) < 0 || lanecheck_add_race_clocks(m) < 0 ||
        lanecheck_add_fingerprint_hot(m) < 0 || lanecheck_add_fingerprint_same(m) < 0 ||
        lanecheck_add_field_reader(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
