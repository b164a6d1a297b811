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

#include "_native.h"
#include "_race_tracer.h"
#include <string.h>

/* The builtins' names a program (or a library on its behalf: ``mock.patch("builtins.open")``)
 * rebound in the running check (``race_builtins.WATCHED``, the module's ``WATCHED_BUILTINS``): a
 * ``LOAD_GLOBAL`` of one that the module's globals do not hold reads the builtins' entry. Empty
 * for most checks: one size test per look-up of a builtin. */
PyObject *lanecheck_watched_builtins = NULL;

/* The names of the methods a program (or ``mock.patch.object`` on its behalf) rebound in a class
 * in the running check (``race_methods.WATCHED``, the module's ``WATCHED_METHODS``): a look-up of
 * one found as code in a class is the handler's to judge. Empty for most checks. */
static PyObject *watched_methods = NULL;

/* The types whose methods are accesses though no container's (``race_objects.TABLE``, the
 * module's ``CALLED_TYPES``: an ``mmap``, the ``weakref`` mappings): type -> the names of its
 * methods that are. By the exact type: one dict look-up at a call of an object's method. */
static PyObject *called_types = NULL;

/* ``frame.f_code`` and ``id(obj)`` without their audit events: read from Python, each is one
 * (``object.__getattr__``, ``builtins.id``), and with the process watch's audit hook installed
 * CPython builds the event's arguments (the attribute's name decoded again) and calls the hook:
 * about 1,500 and 460 instructions, where the race detector's ``_access`` reads both at every
 * access it records (session 46: about 2% of patch mode's instructions an execution). What the
 * hook would be told is nothing it watches. A ``Where`` that is no frame (``race_calls.HandedAt``)
 * answers its own ``f_code``. */
static PyObject *
frame_code(PyObject *module, PyObject *where)
{
    if (PyFrame_Check(where)) {
        return (PyObject *)PyFrame_GetCode((PyFrameObject *)where);
    }
    return PyObject_GetAttrString(where, "f_code");
}

static PyObject *
address(PyObject *module, PyObject *obj)
{
    return PyLong_FromVoidPtr(obj);
}

/* The running thread state's recursion counters (CPython 3.11's ``recursion_remaining`` and
 * ``recursion_limit``, which greenlet saves and restores per greenlet), for rt/recursion.py:
 * read through ctypes, its ``PyThreadState_Get`` call and its views cost about 3,000
 * instructions a look, three looks a controlled thread (session 46). ``recursion_used()``: the
 * limit less the remaining frames as this call sees them (its own call counted), or None where
 * the limit does not read back as ``sys.getrecursionlimit()`` (a layout not read). */
static PyObject *
recursion_used(PyObject *module, PyObject *unused)
{
    PyThreadState *ts = PyThreadState_Get();
    if (ts->recursion_limit != Py_GetRecursionLimit()) {
        Py_RETURN_NONE;
    }
    return PyLong_FromLong((long)ts->recursion_limit - ts->recursion_remaining);
}

/* recursion_lend(n): ``n`` more frames left to the running thread state (negative: fewer). */
static PyObject *
recursion_lend(PyObject *module, PyObject *arg)
{
    int n = _PyLong_AsInt(arg);
    if (n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    PyThreadState_Get()->recursion_remaining += n;
    Py_RETURN_NONE;
}

/* thread_state_dict(): the running thread state's dict (``PyThreadState_GetDict``, where CPython
 * keeps ``Py_Repr``): repr_guard.py's, once an execution; through ctypes (the call, its
 * ``cast``) it cost about 11,000 instructions (session 46). */
static PyObject *
thread_state_dict(PyObject *module, PyObject *unused)
{
    PyObject *found = PyThreadState_GetDict();
    if (found == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_RuntimeError, "no thread state dict");
        }
        return NULL;
    }
    return Py_NewRef(found);
}

static PyMethodDef filter_methods[] = {
    LANECHECK_METHOD(thread_state_dict, METH_NOARGS, "thread_state_dict(): the thread state's dict."),
    LANECHECK_METHOD(recursion_used, METH_NOARGS,
                     "recursion_used(): the running thread state's limit less its remaining frames."),
    LANECHECK_METHOD(recursion_lend, METH_O, "recursion_lend(n): n more frames remaining."),
    LANECHECK_METHOD(frame_code, METH_O, "frame_code(where): ``where.f_code``, no audit event."),
    LANECHECK_METHOD(address, METH_O, "address(obj): ``id(obj)``, no audit event."),
    {NULL, NULL, 0, NULL},
};

int
lanecheck_add_race_filter(PyObject *module)
{
    if (PyModule_AddFunctions(module, filter_methods) < 0) {
        return -1;
    }
    lanecheck_watched_builtins = PySet_New(NULL);
    watched_methods = PySet_New(NULL);
    called_types = PyDict_New();
    if (lanecheck_watched_builtins == NULL || watched_methods == NULL || called_types == NULL) {
        return -1;
    }
    if (PyModule_AddObjectRef(module, "WATCHED_METHODS", watched_methods) < 0 ||
        PyModule_AddObjectRef(module, "CALLED_TYPES", called_types) < 0) {
        return -1;
    }
    return PyModule_AddObjectRef(module, "WATCHED_BUILTINS", lanecheck_watched_builtins);
}

/* Is ``name``, found as code in a class, a method rebound in the running check? 1, 0, -1. */
static int
method_watched(PyObject *name)
{
    return PySet_GET_SIZE(watched_methods) > 0 ? PySet_Contains(watched_methods, name) : 0;
}

/* Is ``obj`` of one of ``called_types`` and (``name`` not NULL) ``name`` one of its methods that
 * are accesses? 1, 0, or -1 on an error. */
static int
called(PyObject *obj, PyObject *name)
{
    if (obj == NULL || PyDict_GET_SIZE(called_types) == 0) {
        return 0;
    }
    PyObject *names = PyDict_GetItemWithError(called_types, (PyObject *)Py_TYPE(obj));
    if (names == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    if (name == NULL) {
        return 1;
    }
    return PyDict_Check(names) && PyUnicode_Check(name) ? PyDict_Contains(names, name) : 0;
}

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
        if (value == NULL) {
            return 0;
        }
        if (!is_instance(value, t->code_types)) {
            return 1;
        }
        int watched = method_watched(name); /* a method rebound (``race_methods``): once a step */
        return watched > 0 ? code_read(t, entry, obj) : watched;
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
    /* the class's code: a read of it where it was rebound (``race_methods``), and of the object's
     * class where a program stores one (only a class defined in Python may be swapped for
     * another: ``__class__`` assignment); once a step */
    int watched = method_watched(name);
    if (watched < 0) {
        return -1;
    }
    if (watched || (lanecheck_class_reads && PyType_HasFeature(Py_TYPE(obj), Py_TPFLAGS_HEAPTYPE))) {
        return code_read(t, entry, obj);
    }
    return 0;
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
        if (target != NULL && PyObject_TypeCheck(target, &PyMemberDescr_Type)) {
            return 1; /* a slot's descriptor called: ``C.n.__set__(c, v)`` (``race_paths``) */
        }
        if (PyFunction_Check(meth)) { /* ``cache.get(k)`` of a ``weakref`` mapping (``race_objects``) */
            return called(target, ((PyFunctionObject *)meth)->func_name);
        }
        /* a container's method: ``xs.append(x)``, or a slot's ``xs.__setitem__(0, x)`` */
        if (!PyObject_TypeCheck(meth, &PyMethodDescr_Type) && !PyObject_TypeCheck(meth, &PyWrapperDescr_Type)) {
            return 0;
        }
        int object = called(target, PyDescr_NAME(meth)); /* ``m.read_byte()`` of an ``mmap`` */
        if (object != 0) {
            return object;
        }
        int container = is_instance(target, t->containers);
        if (container <= 0) {
            return container;
        }
        return PyDict_Contains(t->methods, PyDescr_NAME(meth));
    }
    if (target == t->len && argc == 1) {
        int container = is_instance(args[0], t->containers);
        return container != 0 ? container : called(args[0], NULL);
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
        if (args[0] != NULL && PyObject_TypeCheck(args[0], &PyMemberDescr_Type)) {
            return 1; /* ``type(C.n).__set__(C.n, c, v)`` */
        }
        return is_instance(args[0], t->containers);
    }
    /* a bound builtin method called through a name: its __self__ a container */
    if (PyCFunction_Check(target)) {
        PyObject *self = PyCFunction_GET_SELF(target);
        int container = is_instance(self, t->containers);
        /* (an ``mmap``'s, ``f = m.read_byte; f()``: the handler judges its name) */
        return container != 0 ? container : called(self, NULL);
    }
    if (target != NULL && PyMethod_Check(target) && PyFunction_Check(PyMethod_GET_FUNCTION(target))) {
        /* a Python method bound (``get = cache.get; get(k)``): a ``weakref`` mapping's */
        return called(PyMethod_GET_SELF(target), ((PyFunctionObject *)PyMethod_GET_FUNCTION(target))->func_name);
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
        /* (or a slot's descriptor's: ``set_n = C.n.__set__; set_n(c, v)``) */
        int container = PyObject_TypeCheck(self, &PyMemberDescr_Type) ? 1 : is_instance(self, t->containers);
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

/* How many of the frame's fast locals and stack entries (``localsplus[0:top]``) hold ``obj``, and
 * of the values of its ``f_locals`` dict where only the frame holds that (made by ``locals()``, or
 * for a Python trace function at every event: the Python tracer's twin counts alike). */
static Py_ssize_t
frame_refs(_PyInterpreterFrame *fr, int top, PyObject *obj)
{
    Py_ssize_t n = 0;
    for (int i = 0; i < top; i++) {
        n += fr->localsplus[i] == obj;
    }
    PyObject *fields = fr->f_locals;
    if (fields != NULL && PyDict_CheckExact(fields) && Py_REFCNT(fields) == 1) {
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(fields, &pos, &k, &v)) {
            n += v == obj;
        }
    }
    return n;
}

/* Does the access ``site`` (``races.Site``: ``(tid, code, offset, (obj, key, label), write)``)
 * hold ``obj``? 1 or 0. */
static int
site_holds(PyObject *site, PyObject *obj)
{
    if (!PyTuple_Check(site) || PyTuple_GET_SIZE(site) < 4) {
        return 0;
    }
    PyObject *where = PyTuple_GET_ITEM(site, 3);
    return PyTuple_Check(where) && PyTuple_GET_SIZE(where) >= 1 && PyTuple_GET_ITEM(where, 0) == obj;
}

/* One location of ``seq`` (a ``race_shadow.Loc``): its last writer into ``*writer`` and the references
 * to ``seq`` it holds into ``*held`` (its write's site and its reads' sites). 0, or -1 on an
 * error; 1 where it is not laid out as expected (then the filter lets the handler judge). */
static PyObject *str_w_tid, *str_w_site, *str_reads; /* interned on first use */

static int
location_of(PyObject *loc, PyObject *seq, long *writer, Py_ssize_t *held)
{
    if (str_reads == NULL) {
        str_w_tid = PyUnicode_InternFromString("w_tid");
        str_w_site = PyUnicode_InternFromString("w_site");
        str_reads = PyUnicode_InternFromString("reads");
        if (str_w_tid == NULL || str_w_site == NULL || str_reads == NULL) {
            Py_CLEAR(str_reads);
            return -1;
        }
    }
    PyObject *w = PyObject_GetAttr(loc, str_w_tid);
    if (w == NULL) {
        return -1;
    }
    *writer = PyLong_AsLong(w);
    Py_DECREF(w);
    if (*writer == -1 && PyErr_Occurred()) {
        return -1;
    }
    PyObject *site = PyObject_GetAttr(loc, str_w_site);
    if (site == NULL) {
        return -1;
    }
    *held += site_holds(site, seq);
    Py_DECREF(site);
    PyObject *reads = PyObject_GetAttr(loc, str_reads);
    if (reads == NULL) {
        return -1;
    }
    int odd = !PyDict_Check(reads);
    Py_ssize_t pos = 0;
    PyObject *k, *read;
    while (!odd && PyDict_Next(reads, &pos, &k, &read)) {
        if (!PyTuple_Check(read) || PyTuple_GET_SIZE(read) != 2) {
            odd = 1;
            break;
        }
        *held += site_holds(PyTuple_GET_ITEM(read, 1), seq);
    }
    Py_DECREF(reads);
    return odd;
}

/* What the detector's shadow memory says of ``seq``: has a thread other than ``tid`` written it
 * (its whole, or one of its keys) in this execution? 1 (or the memory is not laid out as
 * expected), 0, or -1 on an error. ``*held``: the references to ``seq`` the detector holds (one
 * in ``alive`` per location, and its sites'). A write it has not recorded (an exempt container,
 * after the execution's race) is no access the handler would check a read against either. */
static int
foreign_write(Tracer *t, PyObject *seq, long tid, Py_ssize_t *held)
{
    PyObject *oid = PyLong_FromVoidPtr(seq);
    if (oid == NULL) {
        return -1;
    }
    int found = 0;
    PyObject *keyed = PyDict_GetItemWithError(t->keys, oid);
    if (keyed == NULL && PyErr_Occurred()) {
        found = -1;
    }
    else if (keyed != NULL && !PyList_Check(keyed)) {
        found = 1; /* not the detector's list: let the handler judge */
    }
    Py_ssize_t n = found == 0 && keyed != NULL ? PyList_GET_SIZE(keyed) : 0;
    /* the whole container's location first, then each key's */
    for (Py_ssize_t i = -1; found == 0 && i < n; i++) {
        PyObject *key = PyTuple_Pack(2, oid, i < 0 ? t->whole : PyList_GET_ITEM(keyed, i));
        if (key == NULL) {
            found = -1;
            break;
        }
        PyObject *loc = PyDict_GetItemWithError(t->shadow, key);
        Py_DECREF(key);
        if (loc == NULL) {
            found = PyErr_Occurred() ? -1 : (i >= 0); /* a key listed has a location */
            continue;
        }
        long writer = -1;
        *held += 1; /* ``alive``: one per location */
        found = location_of(loc, seq, &writer, held);
        if (found == 0) {
            found = writer >= 0 && writer != tid;
        }
    }
    Py_DECREF(oid);
    return found;
}

/* Is a loop's turn over ``it`` (reading ``seq``) at a container only this frame can reach, which
 * no other thread wrote? Then the read races with nothing, now or later: another thread could
 * write it only once this frame hands it over (a later store the detector checks, or a
 * synchronising operation, which orders this read before that write), and an earlier write by
 * another thread would be in the shadow memory (``foreign_write``: a thread given the list
 * between two turns may have let go of it by the next one). Held by this frame only: every
 * reference to the container, its iterator (and an ``enumerate`` around it) is the frame's own
 * (its fast locals, its stack, the iterator's one reference to what it goes over) or the
 * detector's (``foreign_write``'s ``held``: it keeps what it recorded alive): a list also in a
 * closure's cell, an object's field, a global, another frame or another container
 * is not. Only the exact builtin types (a subclass's object may be reached through a weak
 * reference, which adds no count), and a set only while no weak reference to it lives (a set,
 * unlike a list or a dict, takes them), and only while no racy site is interleaved (``points``: an interleaved turn is a
 * scheduling point of its own). 1 (no access), 0 (the usual filter decides), -1 on an error. */
static int
frame_owned(Tracer *t, _PyInterpreterFrame *fr, int top, PyObject *it, PyObject *seq)
{
    if (t->shadow == NULL || (t->points != Py_None && PySet_GET_SIZE(t->points) > 0)) {
        return 0;
    }
    if (!PyList_CheckExact(seq) && !PyDict_CheckExact(seq) && !PySet_CheckExact(seq)) {
        return 0;
    }
    if (PySet_CheckExact(seq) && ((PySetObject *)seq)->weakreflist != NULL) {
        return 0; /* a weak reference reaches it and adds no count */
    }
    PyObject *inner = it;
    if (Py_IS_TYPE(it, &PyEnum_Type)) {
        inner = ((enum_iter *)it)->en_sit;
        if (Py_REFCNT(it) != frame_refs(fr, top, it) || Py_REFCNT(inner) != 1 + frame_refs(fr, top, inner)) {
            return 0;
        }
    }
    else if (Py_REFCNT(it) != frame_refs(fr, top, it)) {
        return 0;
    }
    Py_ssize_t refs = 1 + frame_refs(fr, top, seq); /* (1: the iterator's) */
    if (Py_REFCNT(seq) < refs) {
        return 0;
    }
    PyObject *current = PyObject_GetAttr(t->ex, lanecheck_str_current);
    if (current == NULL) {
        return -1;
    }
    long tid = current == Py_None ? -1 : PyLong_AsLong(current);
    Py_DECREF(current);
    if (tid == -1) {
        return PyErr_Occurred() ? -1 : 0;
    }
    Py_ssize_t held = 0;
    int foreign = foreign_write(t, seq, tid, &held);
    if (foreign != 0) {
        return foreign < 0 ? -1 : 0;
    }
    return Py_REFCNT(seq) == refs + held;
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
    case CONTAINS: { /* ``k in cache`` of a ``weakref`` mapping too (``race_objects``) */
        int container = is_instance(STACK(1), t->containers);
        return container != 0 ? container : called(STACK(1), NULL);
    }
    case TRUTH: /* ``if xs:``, ``not d``, ``xs or ys``: a container's truth is its length */
        return is_instance(STACK(1), t->containers);
    case ITER: { /* a container read whole (or its iterator moved), or a generator run */
        PyObject *iterated = STACK(1);
        if (iterated != NULL && Py_REFCNT(iterated) == 1) {
            /* held by this frame's stack alone (``for i, x in enumerate(xs)``: made by the call
             * before, which read ``xs``): no other thread can reach it, so no race on it */
            return 0;
        }
        if (iterated != NULL && PyGen_Check(iterated)) {
            return 1;
        }
        int container = is_instance(iterated, t->containers);
        return container != 0 ? container : called(iterated, NULL); /* ``for k in cache`` */
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
        if (seq == NULL) {
            return 0;
        }
        /* (the once-a-step test first: a long loop's later turns in one step cost no more) */
        int first = code_read(t, entry, seq);
        if (first <= 0) {
            return first;
        }
        int owned = frame_owned(t, fr, top, it, seq);
        return owned < 0 ? -1 : !owned;
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
        PyObject *found = PyDict_GetItemWithError(fr->f_globals, arg);
        if (found == NULL && !PyErr_Occurred() && PySet_GET_SIZE(lanecheck_watched_builtins) > 0) {
            /* a builtin the program rebound in this check (``race_builtins``): a read of it */
            return PySet_Contains(lanecheck_watched_builtins, arg);
        }
        /* NULL: a builtin, or not defined yet: no global */
        return value_worth(t, entry, fr->f_globals, found);
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
