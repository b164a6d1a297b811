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
 *                   (``RaceDetector._site(frame, entry)``) runs only where it is not None and
 *                   the filter (``_race_filter.c``) finds an access may be made there.
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
#include "_race_tracer.h"

static Py_ssize_t extra_index = -1;
PyObject *lanecheck_str_current = NULL;
int lanecheck_class_reads = 0;
#define str_current lanecheck_str_current

static void
free_extra(void *extra)
{
    Py_XDECREF((PyObject *)extra);
}

#define SET_MEMBER(m) Py_XSETREF(self->m, Py_NewRef(m));

/* Opcodes of code under test between two calls of the handler with no entry (``None``): the
 * detector then asks what the run did (``busy_wait.BusyWait.long_run``): the time limit is
 * looked at there, a spin's run gives way, and a thread looping over its local variables only
 * (no access, no operation) is checked for a loop it can never leave (``endless_loops``). */
#define LONG_RUN (1L << 21)

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
        int go = lanecheck_worth(t, fr, entry);
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
                             "named_calls", "clocks", "subscripted", NULL};
    PyObject *ex, *table_of, *handler, *code_types, *containers, *methods, *named_calls, *clocks,
        *subscripted;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOO!O!O!O!O!O!", kwlist, &ex, &table_of, &handler,
                                     &PyTuple_Type, &code_types, &PyTuple_Type, &containers,
                                     &PyDict_Type, &methods, &PyDict_Type, &named_calls,
                                     &PyList_Type, &clocks, &PyDict_Type, &subscripted)) {
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
    self->seen_tid = -1;
    self->n_seen = 0;
    return 0;
}

LANECHECK_GC_METHODS(Tracer, TRACER_ALL_MEMBERS)

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

/* ``own_loops(shadow, keys, whole, points)``: the detector's shadow memory, read by the filter
 * to let a loop's turn over a container only the looping frame holds go unrecorded
 * (``lanecheck_worth``, RUN). */
static PyObject *
Tracer_own_loops(Tracer *self, PyObject *args)
{
    PyObject *shadow, *keys, *whole, *points;
    if (!PyArg_ParseTuple(args, "O!O!OO", &PyDict_Type, &shadow, &PyDict_Type, &keys, &whole, &points)) {
        return NULL;
    }
    if (points != Py_None && !PyAnySet_Check(points)) {
        PyErr_SetString(PyExc_TypeError, "points must be a set or None");
        return NULL;
    }
    TRACER_LOOP_MEMBERS(SET_MEMBER)
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
    {"own_loops", (PyCFunction)Tracer_own_loops, METH_VARARGS,
     "own_loops(shadow, keys, whole, points): the detector's shadow memory, its keys by container, "
     "the whole-container key and the interleaved sites, for the loop turns' filter."},
    {NULL}};

static PyTypeObject TracerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "model_checks.harness._race_tracer.Tracer",
    .tp_basicsize = sizeof(Tracer),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Tracer(ex, table_of, handler, code_types, containers, methods, named_calls, clocks, subscripted): the race "
              "detector's trace function.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Tracer_init,
    .tp_dealloc = (destructor)Tracer_dealloc,
    .tp_traverse = (traverseproc)Tracer_traverse,
    .tp_clear = (inquiry)Tracer_clear,
    .tp_methods = Tracer_methods,
    .tp_call = (ternaryfunc)Tracer_call,
};


static PyObject *
read_classes(PyObject *module, PyObject *on)
{
    int flag = PyObject_IsTrue(on);
    if (flag < 0) {
        return NULL;
    }
    lanecheck_class_reads = flag;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"read_classes", (PyCFunction)read_classes, METH_O,
     "read_classes(on): is a method found in an object's class a read of its class (race_swaps)?"},
    {NULL, NULL, 0, NULL},
};

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
    PyObject *kinds = Py_BuildValue("(sssssssssssssssssss)", "LOAD_ATTR", "STORE_ATTR", "SUBSCR",
                                    "STORE_SUBSCR", "GLOBAL_NAME", "STORE_GLOBAL", "CONTAINS",
                                    "ITER", "CALL", "LOAD_CELL", "STORE_CELL", "DELETE_SUBSCR",
                                    "BINARY", "TRUTH", "RUN", "LOAD_METHOD", "LOAD_NAME",
                                    "STORE_NAME", "CALL_EX");
    if (kinds == NULL || PyModule_AddObject(m, "KINDS", kinds) < 0) {
        Py_XDECREF(kinds);
        Py_DECREF(m);
        return NULL;
    }
    if (lanecheck_add_frame_reader(m) < 0 || lanecheck_add_race_clocks(m) < 0 ||
        lanecheck_add_fingerprint_hot(m) < 0 || lanecheck_add_fingerprint_same(m) < 0 ||
        lanecheck_add_field_reader(m) < 0 || lanecheck_add_race_filter(m) < 0 ||
        lanecheck_add_process_watch(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
