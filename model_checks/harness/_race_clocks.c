/* The race detector's vector clocks in C (races.py, ``RaceDetector.sync``): at every step of an
 * explored execution an operation joins the clocks of the objects it touches and publishes its
 * own. Compiled into the ``_race_tracer`` extension (setup.py) and registered by its module init.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_native.h"

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

static PyMethodDef clock_methods[] = {
    LANECHECK_FASTCALL(join, "join(into, other): the vector clock ``into`` joined with ``other``, "
                             "in place."),
    LANECHECK_FASTCALL(sync_op, "sync_op(vc, tid, objs, read, writes, reads, yielded, everything): "
                                "RaceDetector.sync of an operation on objects."),
    {NULL}};

int
lanecheck_add_race_clocks(PyObject *module)
{
    return PyModule_AddFunctions(module, clock_methods);
}
