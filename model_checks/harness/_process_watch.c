/* The process-state watch in C (process_watch.py, docs/harness.md "Process-wide state").
 *
 * A step's code may change state every thread of the process shares but no traced access and
 * no operation shows: the C locale, the collector's switch, the recursion limit, a rebound name
 * in a library module (``threading.excepthook``, ``tempfile.tempdir``, ``sys.modules["json"]``),
 * an entry of a list the interpreter reads (``sys.path``, the codec search functions), the
 * environment or a resource limit (seen through audit events). The scheduler asks ``changed()``
 * at the end of every step of an exhaustive search; DPOR then takes that step as dependent with
 * every other step. This runs at every step, so it reads only what is cheap: each watched dict's
 * version (PEP 509, one load; where it moved, its items against a copy, since a name rebound and
 * put back within the step is no change), each watched list's length and item pointers, one call
 * each for the locale, the collector and the recursion limit, the interpreter's settings that a
 * setter changes for every thread (read from its state: the int digit limit, the switch
 * interval, the stack size, the dlopen flags, the collector's thresholds), and a flag the hooks
 * set; and the library's C state that a call changes for every thread, read through its own
 * C reader (``faulthandler.is_enabled``, ``tracemalloc.is_tracing``, ``socket.getdefaulttimeout``:
 * ``readers``), and objects compared byte by byte (``decimal``'s context templates: ``raws``).
 * Writes that no reading finds cheaply (an audit event's call, a foreign call, a library class's
 * attribute, the ids' setters) are caught where they are made (_process_hooks.c), and noted in
 * ``lanecheck_watch_event``: a step reads that one flag for them.
 *
 * One watch at a time (a check does not run inside a check): the state is the module's.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <locale.h>
#include <stdint.h>
#include <string.h>

#define Py_BUILD_CORE 1
#include "internal/pycore_interp.h"
#undef Py_BUILD_CORE

#include "_native.h"

static PyObject *w_dicts = NULL; /* tuple of dicts */
static PyObject *w_copies = NULL; /* list: a copy of each dict as last seen */
static PyObject *w_lists = NULL; /* tuple of lists */
static PyObject *w_names = NULL; /* tuple of str: the dicts' names, the lists', the readers', the raws' */
static PyObject *w_readers = NULL; /* tuple of callables returning the state they read */
static PyObject *w_readings = NULL; /* list: each reader's last answer */
static PyObject *w_raws = NULL;    /* tuple of objects compared by their bytes past the header */
static uint64_t *w_raw_copies = NULL; /* their words past the header, one object after the other */
/* each reader's C function and its module (NULL: called through the object protocol), found at
 * arm time: a step calls the function directly */
static PyCFunction *w_reader_meth = NULL;
static PyObject **w_reader_self = NULL;
static uint64_t *w_versions = NULL;
static Py_ssize_t *w_sizes = NULL;
static uintptr_t *w_sums = NULL;
static char *w_locale = NULL;
static int w_gc = 0;
static int w_recursion = 0;
/* the interpreter's settings a setter in ``sys``, ``gc`` or ``threading`` changes for every
 * thread: the int digit limit, the switch interval, the new threads' stack size, the dlopen
 * flags and the collector's thresholds */
#define N_SETTINGS 7
static long long w_settings[N_SETTINGS];
static const char *const SETTING_NAMES[N_SETTINGS] = {
    "the int digit limit (sys.set_int_max_str_digits)", "the switch interval (sys.setswitchinterval)",
    "the threads' stack size (threading.stack_size)", "the dlopen flags (sys.setdlopenflags)",
    "the collector's thresholds (gc.set_threshold)", "the collector's thresholds (gc.set_threshold)",
    "the collector's thresholds (gc.set_threshold)"};

static void
read_settings(long long *into)
{
    PyInterpreterState *interp = PyInterpreterState_Get();
    into[0] = interp->int_max_str_digits;
    into[1] = (long long)_PyEval_GetSwitchInterval();
    into[2] = (long long)interp->threads.stacksize;
    into[3] = interp->dlopenflags;
    for (int g = 0; g < 3; g++) {
        into[4 + g] = interp->gc.generations[g].threshold;
    }
}

/* the state the hooks share (_native.h) */
int lanecheck_watch_armed = 0;
const char *lanecheck_watch_event = NULL;

/* The number of whole words of an object past its header (its C fields), which ``raws``
 * compares. */
static Py_ssize_t
raw_words(PyObject *o)
{
    return (Py_TYPE(o)->tp_basicsize - (Py_ssize_t)sizeof(PyObject)) / (Py_ssize_t)sizeof(uint64_t);
}

static const uint64_t *
raw_fields(PyObject *o)
{
    return (const uint64_t *)((const char *)o + sizeof(PyObject));
}

/* What reader ``i`` reads now, or NULL. */
static PyObject *
read_one(Py_ssize_t i)
{
    PyObject *now = w_reader_meth[i] != NULL ? w_reader_meth[i](w_reader_self[i], NULL)
                                             : PyObject_CallNoArgs(PyTuple_GET_ITEM(w_readers, i));
    if (now == NULL) {
        PyErr_Clear();
    }
    return now;
}

static uintptr_t
list_sum(PyObject *list)
{
    /* the items' addresses, each rotated by its place: a store, an insertion, a removal or a
     * reordering changes it (with the length) */
    uintptr_t sum = 0;
    Py_ssize_t n = PyList_GET_SIZE(list);
    for (Py_ssize_t i = 0; i < n; i++) {
        uintptr_t p = (uintptr_t)PyList_GET_ITEM(list, i);
        unsigned r = (unsigned)(i % (8 * sizeof(uintptr_t) - 1)) + 1;
        sum ^= (p << r) | (p >> (8 * sizeof(uintptr_t) - r));
        sum += p;
    }
    return sum;
}

static const char *
current_locale(void)
{
    const char *now = setlocale(LC_ALL, NULL);
    return now == NULL ? "" : now;
}

/* Take the state now as the one compared with. */
static int
take(void)
{
    Py_ssize_t nd = PyTuple_GET_SIZE(w_dicts), nl = PyTuple_GET_SIZE(w_lists);
    for (Py_ssize_t i = 0; i < nd; i++) {
        PyObject *d = PyTuple_GET_ITEM(w_dicts, i);
        if (((PyDictObject *)d)->ma_version_tag != w_versions[i] ||
            PyList_GET_ITEM(w_copies, i) == Py_None) {
            PyObject *copy = PyDict_Copy(d);
            if (copy == NULL) {
                return -1;
            }
            PyList_SetItem(w_copies, i, copy); /* (steals the copy, drops the old one) */
            w_versions[i] = ((PyDictObject *)d)->ma_version_tag;
        }
    }
    for (Py_ssize_t i = 0; i < nl; i++) {
        PyObject *list = PyTuple_GET_ITEM(w_lists, i);
        w_sizes[i] = PyList_GET_SIZE(list);
        w_sums[i] = list_sum(list);
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(w_readers); i++) {
        PyObject *now = read_one(i);
        PyList_SetItem(w_readings, i, now != NULL ? now : Py_NewRef(Py_None)); /* (steals) */
    }
    uint64_t *at = w_raw_copies;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(w_raws); i++) {
        PyObject *o = PyTuple_GET_ITEM(w_raws, i);
        memcpy(at, raw_fields(o), raw_words(o) * sizeof(uint64_t));
        at += raw_words(o);
    }
    const char *now = current_locale();
    if (w_locale == NULL || strcmp(w_locale, now) != 0) {
        char *copy = PyMem_RawMalloc(strlen(now) + 1);
        if (copy == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        strcpy(copy, now);
        PyMem_RawFree(w_locale);
        w_locale = copy;
    }
    w_gc = PyGC_IsEnabled();
    w_recursion = Py_GetRecursionLimit();
    read_settings(w_settings);
    lanecheck_watch_event = NULL;
    return 0;
}

/* Does ``d`` hold what ``copy`` holds, value by value (by identity)? A dict written and put
 * back within one step has a new version but no change another thread could see. */
static int
same_items(PyObject *d, PyObject *copy)
{
    if (PyDict_GET_SIZE(d) != PyDict_GET_SIZE(copy)) {
        return 0;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(copy, &pos, &key, &value)) {
        PyObject *now = PyDict_GetItemWithError(d, key);
        if (now != value) {
            PyErr_Clear();
            return 0;
        }
    }
    return 1;
}

static void
forget(void)
{
    lanecheck_watch_armed = 0;
    Py_CLEAR(w_copies);
    Py_CLEAR(w_dicts);
    Py_CLEAR(w_lists);
    Py_CLEAR(w_names);
    Py_CLEAR(w_readers);
    Py_CLEAR(w_readings);
    Py_CLEAR(w_raws);
#define W_FREE(p) (PyMem_Free(p), (p) = NULL)
    W_FREE(w_raw_copies);
    W_FREE(w_reader_meth);
    W_FREE(w_reader_self);
    W_FREE(w_versions);
    W_FREE(w_sizes);
    W_FREE(w_sums);
#undef W_FREE
}

static PyObject *
watch_arm(PyObject *module, PyObject *args)
{
    PyObject *dicts, *lists, *names, *readers = NULL, *raws = NULL;
    if (!PyArg_ParseTuple(args, "O!O!O!|O!O!", &PyTuple_Type, &dicts, &PyTuple_Type, &lists,
                          &PyTuple_Type, &names, &PyTuple_Type, &readers, &PyTuple_Type, &raws)) {
        return NULL;
    }
    static PyObject *none = NULL; /* (the empty tuple, kept) */
    if (none == NULL && (none = PyTuple_New(0)) == NULL) {
        return NULL;
    }
    readers = readers != NULL ? readers : none;
    raws = raws != NULL ? raws : none;
    Py_ssize_t nd = PyTuple_GET_SIZE(dicts), nl = PyTuple_GET_SIZE(lists);
    Py_ssize_t nr = PyTuple_GET_SIZE(readers), nw = PyTuple_GET_SIZE(raws);
    Py_ssize_t raw_bytes = 0;
    for (Py_ssize_t i = 0; i < nw; i++) {
        raw_bytes += raw_words(PyTuple_GET_ITEM(raws, i)) * (Py_ssize_t)sizeof(uint64_t);
    }
    if (PyTuple_GET_SIZE(names) != nd + nl + nr + nw) {
        PyErr_SetString(PyExc_ValueError,
                        "arm(dicts, lists, names, readers, raws): a name for each of them");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nd; i++) {
        if (!PyDict_CheckExact(PyTuple_GET_ITEM(dicts, i))) {
            PyErr_SetString(PyExc_TypeError, "arm: the watched dicts must be dicts");
            return NULL;
        }
    }
    for (Py_ssize_t i = 0; i < nl; i++) {
        if (!PyList_CheckExact(PyTuple_GET_ITEM(lists, i))) {
            PyErr_SetString(PyExc_TypeError, "arm: the watched lists must be lists");
            return NULL;
        }
    }
    if (lanecheck_watch_hook_audit() < 0) {
        return NULL;
    }
    forget();
    w_versions = PyMem_Calloc(nd + 1, sizeof(uint64_t));
    w_sizes = PyMem_Calloc(nl + 1, sizeof(Py_ssize_t));
    w_sums = PyMem_Calloc(nl + 1, sizeof(uintptr_t));
    if (w_versions == NULL || w_sizes == NULL || w_sums == NULL) {
        forget();
        return PyErr_NoMemory();
    }
    w_copies = PyList_New(nd);
    if (w_copies == NULL) {
        forget();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nd; i++) {
        PyList_SET_ITEM(w_copies, i, Py_NewRef(Py_None));
    }
    w_dicts = Py_NewRef(dicts);
    w_lists = Py_NewRef(lists);
    w_names = Py_NewRef(names);
    w_readers = Py_NewRef(readers);
    w_raws = Py_NewRef(raws);
    w_readings = PyList_New(nr);
    w_raw_copies = PyMem_Malloc(raw_bytes + sizeof(uint64_t));
    w_reader_meth = PyMem_Calloc(nr + 1, sizeof(PyCFunction));
    w_reader_self = PyMem_Calloc(nr + 1, sizeof(PyObject *));
    if (w_readings == NULL || w_raw_copies == NULL || w_reader_meth == NULL || w_reader_self == NULL) {
        forget();
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < nr; i++) {
        PyObject *reader = PyTuple_GET_ITEM(readers, i);
        PyList_SET_ITEM(w_readings, i, Py_NewRef(Py_None));
        if (PyCFunction_Check(reader) && PyCFunction_GET_FLAGS(reader) == METH_NOARGS) {
            w_reader_meth[i] = PyCFunction_GET_FUNCTION(reader);
            w_reader_self[i] = PyCFunction_GET_SELF(reader); /* (the reader, held, holds it) */
        }
    }
    if (take() < 0) {
        forget();
        return NULL;
    }
    lanecheck_watch_armed = 1;
    Py_RETURN_NONE;
}

static PyObject *
watch_disarm(PyObject *module, PyObject *unused)
{
    forget();
    Py_RETURN_NONE;
}

static PyObject *
watch_reset(PyObject *module, PyObject *unused)
{
    if (lanecheck_watch_armed && take() < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* What changed since the last look, named (None: nothing); the state now is the next look's. */
static PyObject *
watch_changed(PyObject *module, PyObject *unused)
{
    if (!lanecheck_watch_armed) {
        Py_RETURN_NONE;
    }
    PyObject *found = NULL;
    const char *what = NULL;
    Py_ssize_t nd = PyTuple_GET_SIZE(w_dicts), nl = PyTuple_GET_SIZE(w_lists);
    for (Py_ssize_t i = 0; i < nd && found == NULL; i++) {
        PyObject *d = PyTuple_GET_ITEM(w_dicts, i);
        if (((PyDictObject *)d)->ma_version_tag != w_versions[i]) {
            if (same_items(d, PyList_GET_ITEM(w_copies, i))) {
                w_versions[i] = ((PyDictObject *)d)->ma_version_tag; /* written and put back */
            }
            else {
                found = PyTuple_GET_ITEM(w_names, i);
            }
        }
    }
    for (Py_ssize_t i = 0; i < nl && found == NULL; i++) {
        PyObject *list = PyTuple_GET_ITEM(w_lists, i);
        if (PyList_GET_SIZE(list) != w_sizes[i] || list_sum(list) != w_sums[i]) {
            found = PyTuple_GET_ITEM(w_names, nd + i);
        }
    }
    Py_ssize_t nr = PyTuple_GET_SIZE(w_readers);
    for (Py_ssize_t i = 0; i < nr && found == NULL; i++) {
        PyObject *now = read_one(i);
        PyObject *was = PyList_GET_ITEM(w_readings, i);
        if (now != NULL && now != was && PyObject_RichCompareBool(now, was, Py_EQ) != 1) {
            PyErr_Clear();
            found = PyTuple_GET_ITEM(w_names, nd + nl + i);
        }
        Py_XDECREF(now);
    }
    const uint64_t *at = w_raw_copies;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(w_raws) && found == NULL; i++) {
        PyObject *o = PyTuple_GET_ITEM(w_raws, i);
        if (memcmp(at, raw_fields(o), raw_words(o) * sizeof(uint64_t)) != 0) {
            found = PyTuple_GET_ITEM(w_names, nd + nl + nr + i);
        }
        at += raw_words(o);
    }
    if (found == NULL) {
        if (lanecheck_watch_event != NULL) {
            what = lanecheck_watch_event;
        }
        else if (PyGC_IsEnabled() != w_gc) {
            what = "the garbage collector's switch";
        }
        else if (Py_GetRecursionLimit() != w_recursion) {
            what = "the recursion limit";
        }
        else if (strcmp(current_locale(), w_locale) != 0) {
            what = "the C locale";
        }
        else {
            long long now[N_SETTINGS];
            read_settings(now);
            for (int k = 0; k < N_SETTINGS && what == NULL; k++) {
                if (now[k] != w_settings[k]) {
                    what = SETTING_NAMES[k];
                }
            }
        }
    }
    if (found == NULL && what == NULL) {
        Py_RETURN_NONE;
    }
    PyObject *name = found != NULL ? Py_NewRef(found) : PyUnicode_FromString(what);
    if (name == NULL || take() < 0) {
        Py_XDECREF(name);
        return NULL;
    }
    return name;
}

/* The interpreter's list of codec search functions (``codecs.register`` appends to it). */
static PyObject *
watch_codec_search_path(PyObject *module, PyObject *unused)
{
    PyObject *path = PyInterpreterState_Get()->codec_search_path;
    if (path == NULL || !PyList_CheckExact(path)) {
        Py_RETURN_NONE;
    }
    return Py_NewRef(path);
}

static PyMethodDef watch_methods[] = {
    LANECHECK_METHOD(watch_codec_search_path, METH_NOARGS,
        "watch_codec_search_path(): the interpreter's codec search functions (a list), or None."),
    LANECHECK_METHOD(watch_arm, METH_VARARGS,
        "watch_arm(dicts, lists, names, readers=(), raws=()): watch these dicts' versions, these "
        "lists' items, what these C readers answer, these objects' bytes, the C locale, the "
        "collector's switch, the recursion limit and the writes the hooks catch."),
    LANECHECK_METHOD(watch_reset, METH_NOARGS,
        "watch_reset(): take the state now as the one compared with (an execution starts)."),
    LANECHECK_METHOD(watch_changed, METH_NOARGS,
        "watch_changed(): the name of what changed since the last look, or None."),
    LANECHECK_METHOD(watch_disarm, METH_NOARGS, "watch_disarm(): stop watching."),
    {NULL, NULL, 0, NULL},
};

int
lanecheck_add_process_watch(PyObject *module)
{
    if (PyModule_AddFunctions(module, watch_methods) < 0) {
        return -1;
    }
    return lanecheck_add_process_hooks(module);
}
