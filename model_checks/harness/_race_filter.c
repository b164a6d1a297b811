/* The race detector's filter, in C (``_race_tracer.c`` asks it at every traced instruction with
 * an entry): is the instruction about to run an access ``RaceDetector._site`` would record? Most
 * are not (calls of anything but a container's method, loads of functions and classes), and they
 * stay here: Python is called only where an access may be. The same tests as the handler's, on
 * the same stack values (CPython 3.11's frame layout).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "_race_filter reads CPython 3.11's frames"
#endif

#define Py_BUILD_CORE 1
#include "internal/pycore_frame.h"
#undef Py_BUILD_CORE

#include "_race_tracer.h"
#include <string.h>

/* Is ``obj``'s type one of ``types`` (a tuple of types) or a subclass of one? By the type's
 * method resolution order alone: ``PyObject_IsInstance`` with a tuple asks each type's
 * ``__instancecheck__`` by name, which cost more with each type the tuple gained (50 since
 * session 38), at every traced conditional, subscript and call. The types here are the
 * builtins' and ``types``' own, whose ``isinstance`` is this test; an object that lies about its
 * ``__class__`` (a mock) is taken for what it is. */
static int
is_instance(PyObject *obj, PyObject *types)
{
    if (obj == NULL) {
        return 0;
    }
    PyTypeObject *tp = Py_TYPE(obj);
    Py_ssize_t n = PyTuple_GET_SIZE(types);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *kind = PyTuple_GET_ITEM(types, i);
        if ((PyTypeObject *)kind == tp || (PyType_Check(kind) && PyType_IsSubtype(tp, (PyTypeObject *)kind))) {
            return 1;
        }
    }
    return 0;
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

/* A call of ``race_functions.NAMED_CALLS``'s ``callable``: 1 where the handler decides (getattr,
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
int
lanecheck_worth(Tracer *t, _PyInterpreterFrame *fr, PyObject *entry)
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
        if (iterated != NULL && Py_REFCNT(iterated) == 1) {
            /* held by this frame's stack alone (``for i, x in enumerate(xs)``: made by the call
             * before, which read ``xs``): no other thread can reach it, so no race on it */
            return 0;
        }
        return iterated != NULL && PyGen_Check(iterated) ? 1 : is_instance(iterated, t->containers);
    }
    case RUN: /* a loop's turn: only a generator's is an access (it runs the generator) */
        return STACK(1) != NULL && Py_REFCNT(STACK(1)) > 1 && PyGen_Check(STACK(1));
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
        /* a call prepared with its arguments, or a method named for its object:
         * ``functools.partial(xs.append, 1)()``, ``operator.methodcaller("append", 1)(xs)`` */
        if (target != NULL && !PyFunction_Check(target) &&
            (strcmp(Py_TYPE(target)->tp_name, "functools.partial") == 0 ||
             strcmp(Py_TYPE(target)->tp_name, "operator.methodcaller") == 0)) {
            return 1;
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
