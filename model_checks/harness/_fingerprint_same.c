/* The state fingerprint's checks that what it keeps between dumps is unchanged, in C
 * (rt/seeds.py, rt/dict_versions.py; why: _fingerprint_hot.c's opening comment):
 *
 *   same_readings  ``_Seeds.refresh``'s check that every seeded object's inputs are still the
 *                  objects recorded; a function's six inputs read from its struct.
 *   same_versions, same_items
 *                  the checks that the static section, the classes and the modules are unchanged:
 *                  dict versions read from the dicts' structs, the items of lists and sets compared
 *                  in one loop.
 *
 * Compiled into the ``_race_tracer`` extension (setup.py) and registered by its module init.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_native.h"

/* A function's inputs as ``seeds._FUNCTION_INPUTS`` reads them (its attribute getters return
 * None for an unset default, keyword default or closure). */
static void
function_inputs(PyFunctionObject *f, PyObject *out[6])
{
    out[0] = f->func_code;
    out[1] = f->func_defaults ? f->func_defaults : Py_None;
    out[2] = f->func_kwdefaults ? f->func_kwdefaults : Py_None;
    out[3] = f->func_closure ? f->func_closure : Py_None;
    out[4] = f->func_dict; /* (NULL before its first reading: never the object recorded) */
    out[5] = f->func_globals;
}

/* same_readings(getters, checked, flat, function_getter): every getters[i](checked[i]), in
 * order, is the objects of ``flat`` (by identity); False as soon as one is not, or a getter
 * raises ValueError or AttributeError (an emptied cell, a slot not set). */
static PyObject *
same_readings(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "same_readings(getters, checked, flat, function_getter)");
        return NULL;
    }
    PyObject *getters = args[0], *checked = args[1], *flat = args[2], *function_getter = args[3];
    if (!PyList_Check(getters) || !PyList_Check(checked) || !PyList_Check(flat)) {
        PyErr_SetString(PyExc_TypeError, "getters, checked and flat are lists");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(getters), nflat = PyList_GET_SIZE(flat), k = 0;
    if (PyList_GET_SIZE(checked) != n) {
        Py_RETURN_FALSE;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyList_GET_SIZE(getters) != n || PyList_GET_SIZE(checked) != n ||
            PyList_GET_SIZE(flat) != nflat) {
            Py_RETURN_FALSE; /* (a getter's Python code changed the lists) */
        }
        PyObject *getter = PyList_GET_ITEM(getters, i), *x = PyList_GET_ITEM(checked, i);
        if (getter == function_getter && PyFunction_Check(x)) {
            PyObject *inputs[6];
            function_inputs((PyFunctionObject *)x, inputs);
            if (k + 6 > nflat) {
                Py_RETURN_FALSE;
            }
            for (int j = 0; j < 6; j++) {
                if (inputs[j] != PyList_GET_ITEM(flat, k + j)) {
                    Py_RETURN_FALSE;
                }
            }
            k += 6;
            continue;
        }
        /* (a getter may run Python code: keep both alive across the call) */
        Py_INCREF(getter);
        Py_INCREF(x);
        PyObject *read = PyObject_CallOneArg(getter, x);
        Py_DECREF(getter);
        Py_DECREF(x);
        if (read == NULL) {
            if (PyErr_ExceptionMatches(PyExc_ValueError) ||
                PyErr_ExceptionMatches(PyExc_AttributeError)) {
                PyErr_Clear();
                Py_RETURN_FALSE;
            }
            return NULL;
        }
        int same = PyTuple_Check(read) && PyList_GET_SIZE(flat) == nflat &&
                   k + PyTuple_GET_SIZE(read) <= nflat;
        if (same) {
            Py_ssize_t m = PyTuple_GET_SIZE(read);
            for (Py_ssize_t j = 0; j < m && same; j++) {
                same = PyTuple_GET_ITEM(read, j) == PyList_GET_ITEM(flat, k + j);
            }
            k += m;
        }
        Py_DECREF(read);
        if (!same) {
            Py_RETURN_FALSE;
        }
    }
    return PyBool_FromLong(k == nflat);
}

/* The dict whose version stands for ``x``: ``x`` itself, or a class's namespace. */
static PyDictObject *
versioned_dict(PyObject *x)
{
    if (PyDict_Check(x)) {
        return (PyDictObject *)x;
    }
    if (PyType_Check(x) && ((PyTypeObject *)x)->tp_dict != NULL) {
        return (PyDictObject *)((PyTypeObject *)x)->tp_dict;
    }
    PyErr_Format(PyExc_TypeError, "a dict or a class, not %.100s", Py_TYPE(x)->tp_name);
    return NULL;
}

/* same_versions(objects, versions): is each dict (or class namespace) of ``objects`` at the
 * version (PEP 509) recorded in ``versions``? Read from the dict's struct, as
 * rt/dict_versions.py reads it through a ctypes view. */
static PyObject *
same_versions(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyList_Check(args[0]) || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "same_versions(objects: list, versions: list)");
        return NULL;
    }
    PyObject *objects = args[0], *versions = args[1];
    Py_ssize_t n = PyList_GET_SIZE(objects);
    if (PyList_GET_SIZE(versions) != n) {
        Py_RETURN_FALSE;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyDictObject *d = versioned_dict(PyList_GET_ITEM(objects, i));
        if (d == NULL) {
            return NULL;
        }
        unsigned long long recorded = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(versions, i));
        if (recorded == (unsigned long long)-1 && PyErr_Occurred()) {
            return NULL;
        }
        if (d->ma_version_tag != recorded) {
            Py_RETURN_FALSE;
        }
    }
    Py_RETURN_TRUE;
}

/* same_items(sequences, lengths, items): does each list or set of ``sequences`` still have its
 * recorded length and, in iteration order, the objects of ``items`` (by identity), all of them
 * one after another? */
static PyObject *
same_items(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyList_Check(args[0]) || !PyList_Check(args[1]) || !PyList_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "same_items(sequences: list, lengths: list, items: list)");
        return NULL;
    }
    PyObject *sequences = args[0], *lengths = args[1], *items = args[2];
    Py_ssize_t n = PyList_GET_SIZE(sequences), nitems = PyList_GET_SIZE(items), k = 0;
    if (PyList_GET_SIZE(lengths) != n) {
        Py_RETURN_FALSE;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *seq = PyList_GET_ITEM(sequences, i);
        Py_ssize_t length = PyLong_AsSsize_t(PyList_GET_ITEM(lengths, i));
        if (length == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (PyObject_Length(seq) != length || k + length > nitems) {
            if (PyErr_Occurred()) {
                return NULL;
            }
            Py_RETURN_FALSE;
        }
        if (PyList_Check(seq)) {
            for (Py_ssize_t j = 0; j < length; j++) {
                if (PyList_GET_ITEM(seq, j) != PyList_GET_ITEM(items, k + j)) {
                    Py_RETURN_FALSE;
                }
            }
            k += length;
            continue;
        }
        /* a set: its iteration order (no Python code runs while iterating a set) */
        PyObject *it = PyObject_GetIter(seq);
        if (it == NULL) {
            return NULL;
        }
        PyObject *x;
        int same = 1;
        while (same && (x = PyIter_Next(it)) != NULL) {
            same = k < nitems && x == PyList_GET_ITEM(items, k);
            k++;
            Py_DECREF(x);
        }
        Py_DECREF(it);
        if (PyErr_Occurred()) {
            return NULL;
        }
        if (!same) {
            Py_RETURN_FALSE;
        }
    }
    return PyBool_FromLong(k == nitems);
}

static PyMethodDef same_methods[] = {
    LANECHECK_FASTCALL(same_versions, "same_versions(objects, versions): every dict or class "
                                      "namespace at its recorded version."),
    LANECHECK_FASTCALL(same_items, "same_items(sequences, lengths, items): every list or set with "
                                   "its recorded items."),
    LANECHECK_FASTCALL(same_readings, "same_readings(getters, checked, flat, function_getter): "
                                      "_Seeds.refresh's check (rt/seeds.py)."),
    {NULL}};

int
lanecheck_add_fingerprint_same(PyObject *module)
{
    return PyModule_AddFunctions(module, same_methods);
}
