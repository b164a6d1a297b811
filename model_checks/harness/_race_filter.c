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

/* A read of code at ``entry`` from ``where`` (a module's dict, a cell): let through once per
 * site and location in the running thread's epoch (``Tracer.seen_*``; the handler's
 * ``_code_read`` judges alike), so a loop calling a module's function calls Python once a step.
 * 1 the first time, else 0; -1 on an error. */
static int
code_read(Tracer *t, PyObject *entry, PyObject *where)
{
    PyObject *current = PyObject_GetAttr(t->ex, lanecheck_str_current);
    if (current == NULL) {
        return -1;
    }
    long tid = current == Py_None ? -1 : PyLong_AsLong(current);
    Py_DECREF(current);
    if (tid == -1 && PyErr_Occurred()) {
        return -1;
    }
    long epoch = 0; /* the thread's first access before any operation of its own: epoch 0 */
    if (tid >= 0 && tid < PyList_GET_SIZE(t->clocks)) {
        PyObject *vc = PyList_GET_ITEM(t->clocks, tid);
        if (PyList_Check(vc) && tid < PyList_GET_SIZE(vc)) {
            epoch = PyLong_AsLong(PyList_GET_ITEM(vc, tid));
            if (epoch == -1 && PyErr_Occurred()) {
                return -1;
            }
        }
    }
    if (tid != t->seen_tid || epoch != t->seen_epoch) {
        t->seen_tid = tid;
        t->seen_epoch = epoch;
        t->n_seen = 0;
    }
    for (int i = 0; i < t->n_seen; i++) {
        if (t->seen_entry[i] == entry && t->seen_where[i] == where) {
            return 0;
        }
    }
    if (t->n_seen < TRACER_SEEN) {
        t->seen_entry[t->n_seen] = entry;
        t->seen_where[t->n_seen] = where;
        t->n_seen++;
    }
    return 1;
}

/* Is the read of ``value`` (NULL: not there) from ``where`` at ``entry`` to be recorded? A
 * module (a name ``import`` bound) is not; code (a function, a class, a bound method, a
 * ``partial``'s kin) is, once a step (``code_read``; session 39: a handler swapped by one thread
 * while another calls it was proved race free); data always. 1, 0, or -1 on an error. */
static int
value_worth(Tracer *t, PyObject *entry, PyObject *where, PyObject *value)
{
    if (value == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    if (PyModule_Check(value)) {
        return 0;
    }
    return is_instance(value, t->code_types) ? code_read(t, entry, where) : 1;
}

/* An attribute of a function (``handler.enabled``): in its ``__dict__`` only. */
static int
function_attr(PyObject *fn, PyObject *name)
{
    PyObject *fields = ((PyFunctionObject *)fn)->func_dict;
    if (fields == NULL) {
        return 0;
    }
    return PyDict_GetItemWithError(fields, name) != NULL ? 1 : (PyErr_Occurred() ? -1 : 0);
}

/* ``races._load_attr``'s filter: a module's global (``value_worth``), a class's data where its
 * body (or a base's) defines it as data (``race_sites.class_owner``), a function's own attribute,
 * any other object's attribute unless the object is code. */
static int
attr_worth(Tracer *t, PyObject *entry, PyObject *obj, PyObject *name)
{
    if (obj == NULL || !PyUnicode_Check(name)) {
        return 1;
    }
    if (PyModule_Check(obj)) {
        PyObject *dict = PyModule_GetDict(obj);
        return dict == NULL ? 1 : value_worth(t, entry, dict, PyDict_GetItemWithError(dict, name));
    }
    if (PyType_Check(obj)) {
        PyObject *value = _PyType_Lookup((PyTypeObject *)obj, name);
        return value == NULL ? 0 : !is_instance(value, t->code_types);
    }
    if (PyFunction_Check(obj)) {
        return function_attr(obj, name);
    }
    return !is_instance(obj, t->code_types);
}

/* ``obj.name(...)`` (``LOAD_METHOD``): as ``attr_worth``, but an object's method found in its
 * class as code (``self.run()``, ``xs.append(x)``: the call's filter judges a container's method)
 * is no read of the object; what its class does not hold as code is (``svc.handler()``: a
 * callable kept in the object's fields, or in a slot). */
static int
method_worth(Tracer *t, PyObject *entry, PyObject *obj, PyObject *name)
{
    if (obj == NULL || !PyUnicode_Check(name) || PyModule_Check(obj) || PyType_Check(obj) ||
        PyFunction_Check(obj)) {
        return attr_worth(t, entry, obj, name);
    }
    if (is_instance(obj, t->code_types)) {
        return 0;
    }
    PyObject *found = _PyType_Lookup(Py_TYPE(obj), name);
    if (found == NULL || !is_instance(found, t->code_types) || PyObject_TypeCheck(found, &PyMemberDescr_Type)) {
        return 1;
    }
    /* the class's code: a read of the object's class where a program stores one (only a class
     * defined in Python may be swapped for another: ``__class__`` assignment) */
    return lanecheck_class_reads && PyType_HasFeature(Py_TYPE(obj), Py_TPFLAGS_HEAPTYPE) ? code_read(t, entry, obj) : 0;
}

/* Is any of the ``argc`` arguments ``args`` of the call about to run a container (or an
 * iterator), or a generator another reference holds (``list(gen)`` runs it: a generator made
 * for the call alone, ``sum(x for x in xs)``, is nobody else's)? 1 or 0. */
static int
containers_among(Tracer *t, PyObject **args, Py_ssize_t argc)
{
    for (Py_ssize_t i = 0; i < argc; i++) {
        PyObject *arg = args[i];
        if (is_instance(arg, t->containers) || (arg != NULL && PyGen_Check(arg) && Py_REFCNT(arg) > 1)) {
            return 1;
        }
    }
    return 0;
}

/* A call of ``race_functions.NAMED_CALLS``'s ``callable`` (on ``self``, a method's object, or
 * NULL): 1 where the handler decides (getattr, next, gen.send, ...), else whether a container is
 * among the arguments (``str(x)``, ``sorted(xs)``: the handler reads only those), or a format
 * string reaches into its arguments' fields (``"{0.x}".format(o)``: ``how`` is a string); -1 on
 * an error, -2 when it is no named call. */
static int
named_worth(Tracer *t, PyObject *callable, PyObject *self, PyObject **args, Py_ssize_t argc)
{
    PyObject *how = PyDict_GetItemWithError(t->named_calls, callable);
    if (how == NULL) {
        if (PyErr_Occurred()) {
            PyErr_Clear(); /* an unhashable callable: not one of them */
        }
        return -2;
    }
    if (how == Py_False) {
        return 1;
    }
    if (containers_among(t, args, argc)) {
        return 1;
    }
    if (PyUnicode_Check(how) && self != NULL && PyUnicode_Check(self)) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(self);
        Py_ssize_t dot = PyUnicode_FindChar(self, '.', 0, n, 1);
        Py_ssize_t item = dot == -1 ? PyUnicode_FindChar(self, '[', 0, n, 1) : dot;
        return item < -1 ? -1 : item >= 0;
    }
    return 0;
}

/* Could the call ``target(*args)`` (``meth`` not NULL: ``meth`` called on ``target``) record an
 * access? As the handler's ``CallSites._call`` decides; 1, 0, or -1 on an error. */
static int
call_worth(Tracer *t, PyObject *meth, PyObject *target, PyObject **args, Py_ssize_t argc)
{
    if (meth != NULL) { /* obj.method(args) */
        int named = named_worth(t, meth, target, args, argc);
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
        return is_instance(args[0], t->containers);
    }
    if (target != NULL) {
        int named = named_worth(t, target, NULL, args, argc);
        if (named != -2) {
            return named; /* getattr(obj, name), heapq.heappush(heap, x), str(x), ... */
        }
    }
    /* an unbound method called as a function: ``list.append(xs, 9)`` */
    if (target != NULL && argc >= 1 &&
        (PyObject_TypeCheck(target, &PyMethodDescr_Type) || PyObject_TypeCheck(target, &PyWrapperDescr_Type))) {
        return is_instance(args[0], t->containers);
    }
    /* a bound builtin method called through a name: its __self__ a container */
    if (PyCFunction_Check(target)) {
        return is_instance(PyCFunction_GET_SELF(target), t->containers);
    }
    /* a call prepared with its arguments, or a method named for its object:
     * ``functools.partial(xs.append, 1)()``, ``operator.methodcaller("append", 1)(xs)``; and
     * fields or items named for it: ``operator.attrgetter("a", "b")(p)``, ``itemgetter(0)(xs)`` */
    if (target != NULL && !PyFunction_Check(target) &&
        (strcmp(Py_TYPE(target)->tp_name, "functools.partial") == 0 ||
         strcmp(Py_TYPE(target)->tp_name, "operator.methodcaller") == 0 ||
         strcmp(Py_TYPE(target)->tp_name, "operator.attrgetter") == 0 ||
         strcmp(Py_TYPE(target)->tp_name, "operator.itemgetter") == 0)) {
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

/* CPython 3.11's iterator layouts (their structs are private to their files): the container a
 * loop over them reads at each turn (``race_items.loop_reads`` alike). */
typedef struct {
    PyObject_HEAD Py_ssize_t it_index;
    PyObject *it_seq; /* NULL once exhausted */
} list_iter;
typedef struct {
    PyObject_HEAD PyObject *di_dict; /* NULL once exhausted */
} dict_iter;
typedef struct {
    PyObject_HEAD PyObject *si_set; /* NULL once exhausted */
} set_iter;
typedef struct {
    PyObject_HEAD Py_ssize_t en_index;
    PyObject *en_sit;
} enum_iter;

/* The list, dict or set a loop's turn over ``it`` reads (through an ``enumerate``), or NULL. */
static PyObject *
loop_container(PyObject *it)
{
    if (Py_IS_TYPE(it, &PyEnum_Type)) {
        it = ((enum_iter *)it)->en_sit;
        if (it == NULL) {
            return NULL;
        }
    }
    PyTypeObject *tp = Py_TYPE(it);
    if (tp == &PyListIter_Type || tp == &PyListRevIter_Type) {
        return ((list_iter *)it)->it_seq;
    }
    if (tp == &PyDictIterKey_Type || tp == &PyDictIterValue_Type || tp == &PyDictIterItem_Type) {
        return ((dict_iter *)it)->di_dict;
    }
    if (tp == &PySetIter_Type) {
        return ((set_iter *)it)->si_set;
    }
    return NULL;
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
        return attr_worth(t, entry, STACK(1), arg);
    case LOAD_METHOD:
        return method_worth(t, entry, STACK(1), arg);
    case SUBSCR:
    case STORE_SUBSCR:
    case DELETE_SUBSCR: {
        PyObject *obj = STACK(2);
        if (obj == NULL || PyTuple_CheckExact(obj) || PyUnicode_CheckExact(obj)) {
            return 0;
        }
        int container = is_instance(obj, t->containers);
        if (container != 0) {
            return container;
        }
        /* another object's item (``mm[0]``, ``section["k"]``): as ``race_items`` decided for its
         * type; a type not decided yet is the handler's to decide (once) */
        PyObject *known = PyDict_GetItemWithError(t->subscripted, (PyObject *)Py_TYPE(obj));
        if (known == NULL) {
            return PyErr_Occurred() ? -1 : 1;
        }
        return known == Py_True;
    }
    case LOAD_CELL: { /* arg: (slot, name); a cell holding code: once a step */
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
        return value == NULL ? 0 : value_worth(t, entry, cell, value);
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
    case RUN: { /* a loop's turn: it runs a generator, or reads a list, dict or set (once a step
                 * per site and container: review 9's s04, a turn after an event was unseen) */
        PyObject *it = STACK(1);
        if (it == NULL) {
            return 0;
        }
        if (PyGen_Check(it)) {
            return Py_REFCNT(it) > 1;
        }
        PyObject *seq = loop_container(it);
        return seq == NULL ? 0 : code_read(t, entry, seq);
    }
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
        /* NULL: a builtin, or not defined yet: no global */
        return value_worth(t, entry, fr->f_globals, PyDict_GetItemWithError(fr->f_globals, arg));
    }
    case CALL: {
        long argc = PyLong_AsLong(arg);
        if (argc == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (argc < 0 || top - (argc + 2) < base) {
            return 1;
        }
        return call_worth(t, STACK(argc + 2), STACK(argc + 1), &fr->localsplus[top - argc], argc);
    }
    case CALL_EX: { /* f(*xs, **d): xs and d unpacked, and the call f(xs[0], ...) */
        long flags = PyLong_AsLong(arg);
        if (flags == -1 && PyErr_Occurred()) {
            return -1;
        }
        int with_kw = (flags & 1) != 0;
        PyObject *kwargs = with_kw ? STACK(1) : NULL, *callargs = STACK(1 + with_kw);
        if (is_instance(callargs, t->containers) || is_instance(kwargs, t->containers)) {
            return 1;
        }
        if (callargs == NULL || !PyTuple_CheckExact(callargs)) {
            return callargs != NULL; /* a sequence of another kind: let the handler judge */
        }
        return call_worth(t, NULL, STACK(2 + with_kw), &PyTuple_GET_ITEM(callargs, 0),
                          PyTuple_GET_SIZE(callargs));
    }
    default: /* STORE_ATTR (the handler tests the object's owner), STORE_GLOBAL, STORE_CELL,
              * LOAD_NAME and STORE_NAME (class bodies, ``exec``: rare) */
        return 1;
    }
#undef STACK
}
