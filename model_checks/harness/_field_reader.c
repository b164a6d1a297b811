/* FieldReader: ``operator.attrgetter(*names)`` for the instances of one type, its descriptors
 * looked up once (rt/reducers.py, rt/seeds.py: the state fingerprint reads every instance's fields,
 * and the seeded objects' inputs, at each state).
 *
 * Profiled on ``work-lane/stop-drain-races-posts`` under the state search (session 20), about 5%
 * of the search was ``attrgetter`` reading the fields of compiled classes (the controlled objects'
 * models, the harness's primitives): each name went through ``PyObject_GetAttr``, the type's MRO
 * look-up and the getset descriptor's ``__get__``. Here the look-up is done once per type, kept
 * while the type's version tag says the type is unchanged, and a field whose descriptor is a
 * getset or a member (a data descriptor, which an instance's ``__dict__`` cannot shadow) is read
 * by its getter directly. Anything else (another type, a type changed since, a type with its own
 * ``__getattribute__`` or ``__getattr__``, another kind of attribute) is read by
 * ``PyObject_GetAttr``, as ``attrgetter`` reads it. Same results, same errors: one name gives the
 * value, several a tuple.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "_native.h"

typedef struct {
    PyObject_HEAD
    PyTypeObject *type;       /* the type whose descriptors ``descrs`` holds */
    PyObject *names;          /* tuple of str */
    PyObject *descrs;         /* tuple: each name's data descriptor on ``type``, or None */
    unsigned int version;     /* ``type``'s version tag when ``descrs`` was filled (0: never) */
    vectorcallfunc vectorcall;
} FieldReader;

#define FIELD_READER_MEMBERS(X) X(type) X(names) X(descrs)

/* ``descrs`` filled from ``type`` as it is now; 0, or -1 with an error set. */
static int
look_up(FieldReader *self)
{
    PyTypeObject *type = self->type;
    Py_ssize_t n = PyTuple_GET_SIZE(self->names);
    PyObject *descrs = PyTuple_New(n);
    if (descrs == NULL) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = _PyType_Lookup(type, PyTuple_GET_ITEM(self->names, i)); /* borrowed */
        int direct = d != NULL && (Py_IS_TYPE(d, &PyGetSetDescr_Type) || Py_IS_TYPE(d, &PyMemberDescr_Type));
        PyTuple_SET_ITEM(descrs, i, Py_NewRef(direct ? d : Py_None));
    }
    Py_XSETREF(self->descrs, descrs);
    self->version = type->tp_version_tag;
    return 0;
}

/* Is ``type``'s look-up as kept (the version tag valid and unchanged)? */
static int
kept(FieldReader *self)
{
    PyTypeObject *type = self->type;
    return self->version != 0 && PyType_HasFeature(type, Py_TPFLAGS_VALID_VERSION_TAG) &&
           type->tp_version_tag == self->version;
}

/* ``obj.name`` as ``object.__getattribute__`` reads it where ``obj``'s class (a Python class)
 * hooks attribute access (``__getattribute__``, ``__getattr__``): the hook is the program's code,
 * which the fingerprint must not run (one that takes a lock took a controlled lock outside any
 * controlled thread: session 40's review, p095). */
static PyObject *
raw_attr(PyObject *obj, PyObject *name)
{
    PyTypeObject *t = Py_TYPE(obj);
    if (t->tp_getattro != PyObject_GenericGetAttr && PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE)) {
        return PyObject_GenericGetAttr(obj, name);
    }
    return PyObject_GetAttr(obj, name);
}

static PyObject *
read_one(FieldReader *self, PyObject *obj, Py_ssize_t i, int direct)
{
    if (direct) {
        PyObject *d = PyTuple_GET_ITEM(self->descrs, i);
        if (Py_IS_TYPE(d, &PyGetSetDescr_Type)) {
            PyGetSetDef *gs = ((PyGetSetDescrObject *)d)->d_getset;
            if (gs->get != NULL) {
                return gs->get(obj, gs->closure);
            }
        }
        else if (Py_IS_TYPE(d, &PyMemberDescr_Type)) {
            return PyMember_GetOne((const char *)obj, ((PyMemberDescrObject *)d)->d_member);
        }
    }
    return raw_attr(obj, PyTuple_GET_ITEM(self->names, i));
}

static PyObject *
FieldReader_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FieldReader *self = (FieldReader *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_SetString(PyExc_TypeError, "FieldReader takes one positional argument");
        return NULL;
    }
    PyObject *obj = args[0];
    /* the descriptors are the instance's own only for exactly this type, read generically */
    int direct = Py_IS_TYPE(obj, self->type) && self->type->tp_getattro == PyObject_GenericGetAttr;
    if (direct && !kept(self)) {
        /* (re)filled: the look-up gives the type a valid tag where it can have one; where it
         * cannot, the fields are read generically */
        if (look_up(self) < 0) {
            return NULL;
        }
        direct = kept(self);
    }
    Py_ssize_t n = PyTuple_GET_SIZE(self->names);
    if (n == 1) {
        return read_one(self, obj, 0, direct);
    }
    PyObject *out = PyTuple_New(n);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = read_one(self, obj, i, direct);
        if (value == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, value);
    }
    return out;
}

static int
FieldReader_init(FieldReader *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"type", "names", NULL};
    PyObject *type, *names;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!:FieldReader", kwlist, &PyType_Type, &type,
                                     &PyTuple_Type, &names)) {
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    if (n == 0) {
        PyErr_SetString(PyExc_ValueError, "FieldReader needs at least one name");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(names, i))) {
            PyErr_SetString(PyExc_TypeError, "FieldReader: each name is a str");
            return -1;
        }
    }
    Py_XSETREF(self->type, (PyTypeObject *)Py_NewRef(type));
    Py_XSETREF(self->names, Py_NewRef(names));
    Py_XSETREF(self->descrs, Py_NewRef(Py_None));
    self->version = 0;
    self->vectorcall = FieldReader_vectorcall;
    return 0;
}

LANECHECK_GC_METHODS(FieldReader, FIELD_READER_MEMBERS)

LANECHECK_VECTORCALL_TYPE(
    FieldReader, "FieldReader",
    "FieldReader(type, names): operator.attrgetter(*names) for instances of ``type``, its data "
    "descriptors looked up once while the type is unchanged.")

int
lanecheck_add_field_reader(PyObject *module)
{
    return PyModule_AddType(module, &FieldReaderType);
}
