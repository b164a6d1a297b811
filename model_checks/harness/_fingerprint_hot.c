/* The state fingerprint's hottest Python paths, in C (rt/encoder.py, rt/seeds.py,
 * rt/dict_versions.py).
 *
 * Profiled on ``work-lane/stop-drain-races-posts`` under the state search (docs/performance.md,
 * session 19), a fingerprint spent about a quarter of its time in the pickler's calls back into
 * Python for the ~90 objects an execution creates, and as much again in checking that what it
 * keeps between dumps is unchanged (~150 seeded objects' inputs, ~150 dict versions read through
 * ctypes, ~300 list items). Those are here, each exactly what the Python it replaces does:
 *
 *   Reducer       the pickler's ``reducer_override`` for objects of the types listed in a table
 *                 that rt/reducers.py fills (``native_entry``) with the very head objects its
 *                 Python reducers use: the reduce tuples are equal, item by item and head by
 *                 identity, so a state is written to the same bytes either way (the pickler
 *                 memoises by identity). Any other object, and any object that existed before
 *                 the search (``pre``: a candidate for seeding), goes to the Python reducer.
 *   same_readings ``_Seeds.refresh``'s check that every seeded object's inputs are still the
 *                 objects recorded; a function's six inputs are read from its struct (what its
 *                 attribute getters return) instead of six attribute lookups.
 *   same_versions, same_items
 *                 the checks that the static section (``_Section.valid``), the classes and the
 *                 modules are unchanged: dict versions read from the dicts' structs, the items
 *                 of lists and sets compared in one loop.
 *
 * Compiled into the ``_race_tracer`` extension (setup.py) and registered by its module init.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

#include "_native.h"

/* The entry kinds (rt/reducers.py names the same numbers; a test compares):
 *   (INSTANCE, head, getter, base, single, dict_name)
 *                                -> (tag, head, (None or base(x), fields)), the fields as
 *                                   ``reducers._fields_of`` reads them (``instance_fields``)
 *   (ATTRS, head, getter)        -> (tag, head, getter(x))
 *   (CONST, head)                -> (tag, head)
 *   (CELL, head, empty_head)     -> (tag, head, (x.cell_contents,)), or (tag, empty_head)
 *   (MODEL, letter, name)        -> (tag, (letter, getattr(x, name)))
 *   (DEQUE, head, name)          -> (tag, head, (list(x),)) where getattr(x, name) is None (an
 *                                   unbounded deque; a bounded one goes to the Python reducer)
 *   (FUNCTION, heads, module_data)
 *                                -> (tag, head, (defaults, kwdefaults, closure, __dict__, g))
 *                                   where heads[x.__code__] is (head, reads_globals) and g is
 *                                   module_data(x.__globals__) if reads_globals else None (a code
 *                                   not in ``heads`` yet goes to the Python reducer, which adds it)
 * A getter that raises AttributeError (a slot not set) hands the object to the Python reducer,
 * which reads it attribute by attribute; so does a function whose code is not in ``heads`` yet. */
enum { K_INSTANCE, K_ATTRS, K_CONST, K_CELL, K_MODEL, K_DEQUE, K_FUNCTION, K_COUNT };

typedef struct {
    PyObject_HEAD
    PyObject *table;    /* dict: type -> entry tuple */
    PyObject *pre;      /* set of the ids of the search's pre-existing objects, or None */
    PyObject *fallback; /* obj -> reduce tuple: the Python reducer */
    PyObject *tag;      /* reducers._K, the first item of every reduce tuple */
    vectorcallfunc vectorcall;
} Reducer;

#define REDUCER_MEMBERS(X) X(table) X(pre) X(fallback) X(tag)

static PyObject *
call_fallback(Reducer *self, PyObject *obj)
{
    return PyObject_CallOneArg(self->fallback, obj);
}

/* getter(x), or NULL with no error set where it raised AttributeError (the Python reducer then
 * reads the object), or NULL with the error set. */
static PyObject *
read_fields(PyObject *getter, PyObject *obj)
{
    PyObject *fields = PyObject_CallOneArg(getter, obj);
    if (fields == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
    }
    return fields;
}

/* An instance's fields as ``reducers._fields_of`` reads them: its slots, by ``getter`` (None: no
 * slots; ``single``: one name, whose bare value it returns), then its ``dict_name`` attribute
 * (None: it has no ``__dict__``) if that is a dict, left out if the instance has none (a compiled
 * class's dict is made only when an attribute outside its slots is set). NULL with no error set
 * where a slot is not set or the ``__dict__`` is no dict: the Python reducer reads it. */
static PyObject *
instance_fields(PyObject *entry, PyObject *obj)
{
    PyObject *getter = PyTuple_GET_ITEM(entry, 2), *dict_name = PyTuple_GET_ITEM(entry, 5);
    int single = PyObject_IsTrue(PyTuple_GET_ITEM(entry, 4));
    if (single < 0) {
        return NULL;
    }
    PyObject *slots;
    if (getter == Py_None) {
        slots = PyTuple_New(0);
    }
    else {
        PyObject *read = read_fields(getter, obj);
        if (read == NULL) {
            return NULL;
        }
        if (single) {
            slots = PyTuple_Pack(1, read);
            Py_DECREF(read);
        }
        else if (!PyTuple_Check(read)) {
            Py_DECREF(read);
            PyErr_SetString(PyExc_ValueError, "an instance's slots getter returned no tuple");
            return NULL;
        }
        else {
            slots = read;
        }
    }
    if (slots == NULL || dict_name == Py_None) {
        return slots;
    }
    /* (as ``object.__getattribute__``: a Python class's hook is the program's code, not run) */
    PyTypeObject *t = Py_TYPE(obj);
    int hooked = t->tp_getattro != PyObject_GenericGetAttr && PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE);
    PyObject *d = hooked ? PyObject_GenericGetAttr(obj, dict_name) : PyObject_GetAttr(obj, dict_name);
    if (d == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            Py_DECREF(slots);
            return NULL;
        }
        PyErr_Clear();
        return slots; /* no dict: as ``getattr(x, "__dict__", None)`` reads it */
    }
    if (!PyDict_Check(d)) {
        Py_DECREF(d);
        Py_DECREF(slots);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(slots);
    PyObject *out = PyTuple_New(n + 1);
    if (out == NULL) {
        Py_DECREF(d);
        Py_DECREF(slots);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTuple_SET_ITEM(out, i, Py_NewRef(PyTuple_GET_ITEM(slots, i)));
    }
    PyTuple_SET_ITEM(out, n, d);
    Py_DECREF(slots);
    return out;
}

static int
is_pre_existing(Reducer *self, PyObject *obj)
{
    if (self->pre == Py_None) {
        return 0;
    }
    PyObject *key = PyLong_FromVoidPtr(obj);
    if (key == NULL) {
        return -1;
    }
    int found = PySet_Contains(self->pre, key);
    Py_DECREF(key);
    return found;
}

static PyObject *
reduce_by_entry(Reducer *self, PyObject *obj, PyObject *entry)
{
    Py_ssize_t n = PyTuple_GET_SIZE(entry);
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
    if (kind == -1 && PyErr_Occurred()) {
        return NULL;
    }
    static const Py_ssize_t sizes[K_COUNT] = {6, 3, 2, 3, 3, 3, 3};
    if (kind < 0 || kind >= K_COUNT || n != sizes[kind]) {
        PyErr_Format(PyExc_ValueError, "a malformed reducer entry (kind %ld, %zd items)", kind, n);
        return NULL;
    }
    PyObject *head = PyTuple_GET_ITEM(entry, 1);
    PyObject *fields, *state;
    switch (kind) {
    case K_INSTANCE: {
        PyObject *base = PyTuple_GET_ITEM(entry, 3);
        PyObject *value = base == Py_None ? Py_NewRef(Py_None) : PyObject_CallOneArg(base, obj);
        if (value == NULL) {
            return NULL;
        }
        fields = instance_fields(entry, obj);
        if (fields == NULL) {
            Py_DECREF(value);
            return PyErr_Occurred() ? NULL : call_fallback(self, obj);
        }
        state = PyTuple_Pack(2, value, fields);
        Py_DECREF(value);
        Py_DECREF(fields);
        if (state == NULL) {
            return NULL;
        }
        break;
    }
    case K_ATTRS:
        state = read_fields(PyTuple_GET_ITEM(entry, 2), obj);
        if (state == NULL) {
            return PyErr_Occurred() ? NULL : call_fallback(self, obj);
        }
        break;
    case K_CONST:
        return PyTuple_Pack(2, self->tag, head);
    case K_CELL: {
        if (!PyCell_Check(obj)) {
            return call_fallback(self, obj);
        }
        PyObject *contents = PyCell_GET(obj);
        if (contents == NULL) {
            return PyTuple_Pack(2, self->tag, PyTuple_GET_ITEM(entry, 2));
        }
        state = PyTuple_Pack(1, contents);
        if (state == NULL) {
            return NULL;
        }
        break;
    }
    case K_DEQUE: {
        PyObject *maxlen = PyObject_GetAttr(obj, PyTuple_GET_ITEM(entry, 2));
        if (maxlen == NULL) {
            return NULL;
        }
        Py_DECREF(maxlen);
        if (maxlen != Py_None) {
            return call_fallback(self, obj);
        }
        PyObject *items = PySequence_List(obj);
        if (items == NULL) {
            return NULL;
        }
        state = PyTuple_Pack(1, items);
        Py_DECREF(items);
        if (state == NULL) {
            return NULL;
        }
        break;
    }
    case K_FUNCTION: {
        if (!PyFunction_Check(obj) || !PyDict_Check(head)) {
            return call_fallback(self, obj);
        }
        PyFunctionObject *f = (PyFunctionObject *)obj;
        PyObject *known = PyDict_GetItemWithError(head, f->func_code);
        if (known == NULL) {
            return PyErr_Occurred() ? NULL : call_fallback(self, obj);
        }
        if (!PyTuple_Check(known) || PyTuple_GET_SIZE(known) != 2) {
            PyErr_SetString(PyExc_ValueError, "a function head is (head, reads_globals)");
            return NULL;
        }
        PyObject *fhead = PyTuple_GET_ITEM(known, 0);
        int reads_globals = PyObject_IsTrue(PyTuple_GET_ITEM(known, 1));
        if (reads_globals < 0) {
            return NULL;
        }
        Py_INCREF(fhead); /* (module_data runs Python code, which may change ``heads``) */
        PyObject *g = reads_globals ? PyObject_CallOneArg(PyTuple_GET_ITEM(entry, 2), f->func_globals)
                                    : Py_NewRef(Py_None);
        PyObject *dict = g == NULL ? NULL : PyObject_GenericGetDict(obj, NULL);
        if (dict == NULL) {
            Py_DECREF(fhead);
            Py_XDECREF(g);
            return NULL;
        }
        state = PyTuple_Pack(5, f->func_defaults ? f->func_defaults : Py_None,
                             f->func_kwdefaults ? f->func_kwdefaults : Py_None,
                             f->func_closure ? f->func_closure : Py_None, dict, g);
        Py_DECREF(dict);
        Py_DECREF(g);
        if (state == NULL) {
            Py_DECREF(fhead);
            return NULL;
        }
        PyObject *reduced = PyTuple_Pack(3, self->tag, fhead, state);
        Py_DECREF(fhead);
        Py_DECREF(state);
        return reduced;
    }
    default: { /* K_MODEL */
        PyObject *value = PyObject_GetAttr(obj, PyTuple_GET_ITEM(entry, 2));
        if (value == NULL) {
            return NULL;
        }
        PyObject *named = PyTuple_Pack(2, head, value);
        Py_DECREF(value);
        if (named == NULL) {
            return NULL;
        }
        PyObject *reduced = PyTuple_Pack(2, self->tag, named);
        Py_DECREF(named);
        return reduced;
    }
    }
    PyObject *reduced = PyTuple_Pack(3, self->tag, head, state);
    Py_DECREF(state);
    return reduced;
}

static PyObject *
Reducer_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Reducer *self = (Reducer *)callable;
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a reducer takes one object");
        return NULL;
    }
    PyObject *obj = args[0];
    PyObject *entry = PyDict_GetItemWithError(self->table, (PyObject *)Py_TYPE(obj));
    if (entry == NULL) {
        return PyErr_Occurred() ? NULL : call_fallback(self, obj);
    }
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) < 2) {
        PyErr_SetString(PyExc_ValueError, "a reducer entry is a tuple (kind, head, ...)");
        return NULL;
    }
    int pre = is_pre_existing(self, obj);
    if (pre < 0) {
        return NULL;
    }
    if (pre) {
        return call_fallback(self, obj);
    }
    Py_INCREF(entry); /* (the table may change under a fallback) */
    PyObject *reduced = reduce_by_entry(self, obj, entry);
    Py_DECREF(entry);
    return reduced;
}

static int
Reducer_init(Reducer *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"table", "pre", "fallback", "tag", NULL};
    PyObject *table, *pre, *fallback, *tag;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!OOO", kwlist, &PyDict_Type, &table, &pre,
                                     &fallback, &tag)) {
        return -1;
    }
    if (pre != Py_None && !PySet_Check(pre)) {
        PyErr_SetString(PyExc_TypeError, "pre is a set of ids or None");
        return -1;
    }
    if (!PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "fallback must be callable");
        return -1;
    }
    Py_XSETREF(self->table, Py_NewRef(table));
    Py_XSETREF(self->pre, Py_NewRef(pre));
    Py_XSETREF(self->fallback, Py_NewRef(fallback));
    Py_XSETREF(self->tag, Py_NewRef(tag));
    self->vectorcall = Reducer_vectorcall;
    return 0;
}

LANECHECK_GC_METHODS(Reducer, REDUCER_MEMBERS)

LANECHECK_VECTORCALL_TYPE(
    Reducer, "Reducer",
    "Reducer(table, pre, fallback, tag): the fingerprint pickler's reducer_override in C for the "
    "types in ``table`` (rt/reducers.py's native_entry), the Python reducer ``fallback`` for the "
    "rest and for the objects whose ids are in ``pre``.")


int
lanecheck_add_fingerprint_hot(PyObject *module)
{
    if (PyModule_AddType(module, &ReducerType) < 0) {
        return -1;
    }
    PyObject *kinds =
        Py_BuildValue("(sssssss)", "INSTANCE", "ATTRS", "CONST", "CELL", "MODEL", "DEQUE", "FUNCTION");
    if (kinds == NULL || PyModule_AddObject(module, "REDUCER_KINDS", kinds) < 0) {
        Py_XDECREF(kinds);
        return -1;
    }
    return 0;
}
