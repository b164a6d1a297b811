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
 * interval, the stack size, the dlopen flags, the collector's thresholds), and a flag the audit
 * hook sets; and the library's C state that a call changes for every thread, read through its own
 * C reader (``faulthandler.is_enabled``, ``tracemalloc.is_tracing``, ``socket.getdefaulttimeout``:
 * ``readers``), and objects compared byte by byte (``decimal``'s context templates: ``raws``).
 * Writes that no reading finds cheaply (a foreign call, a library class's attribute, the ids'
 * setters) are caught where they are made (the hooks, below).
 *
 * One watch at a time (a check does not run inside a check): the state is the module's.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <sys/stat.h>
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
static int w_armed = 0;
static int w_hooked = 0;
/* the audit event that changed process state since the last look (a static string), or NULL */
static const char *w_event = NULL;

/* Audit events whose call changes what every thread of the process sees. */
static const char *const WRITES[] = {
    "os.putenv", "os.unsetenv", "os.chdir", "os.rename", "os.remove", "os.rmdir", "os.mkdir",
    "os.link", "os.symlink", "os.chmod", "os.chown", "os.truncate", "os.utime", "os.setxattr",
    "os.removexattr", "os.chflags", "resource.setrlimit", "resource.prlimit",
    "ctypes.call_function", NULL};

/* ---- The hooks: writes of process state that no audit event shows and no cheap reading finds,
 * caught where the interpreter makes them, so a step pays nothing for them (docs/harness.md,
 * "Process-wide state").
 *
 * - A foreign call (``ctypes``): the C function may change anything (``libc.chdir``,
 *   ``libc.setegid``), and CPython 3.11 raises no audit event for it (``ctypes.call_function`` is
 *   only raised by the helper ``_ctypes.call_function``). The call slot of ``_ctypes.CFuncPtr``,
 *   of its subclasses made so far and of its ``__call__`` descriptor (a subclass made later takes
 *   its slot from there) is replaced by one that notes the call. Calls into the interpreter's own
 *   API (``ctypes.pythonapi``, the flag ``FUNCFLAG_PYTHONAPI``: the harness reads thread states
 *   through it) are not counted.
 * - A class's attribute set or deleted (``json.JSONDecoder.decode = f``, ``mock.patch.object``):
 *   ``type.__setattr__`` raises no audit event in 3.11 (``object.__setattr__`` is raised only for
 *   ``__name__``, ``__module__``, ``__bases__``...). The set-attribute slot of ``type`` (and of the
 *   metaclasses made so far, and its descriptors) is replaced by one that, when the watch is
 *   armed and the write succeeded, asks ``process_watch`` whether the class is the library's and
 *   hands it the old value to put back.
 * - The C setters of the process's ids (``os.setegid``...): syscalls that read the ids cost about
 *   0.1 us each, three a step; instead the C function of each setter's method definition is
 *   replaced by a wrapper that notes a successful call, whoever calls it (``getattr``, an alias).
 */

/* ---- foreign calls ---- */

static ternaryfunc h_call_orig = NULL;
#define LANECHECK_FUNCFLAG_PYTHONAPI 0x4

static int
h_into_the_interpreter(PyObject *f)
{
    PyObject *flags = PyObject_GetAttrString((PyObject *)Py_TYPE(f), "_flags_");
    long value = flags != NULL && PyLong_Check(flags) ? PyLong_AsLong(flags) : 0;
    Py_XDECREF(flags);
    PyErr_Clear();
    return value != -1 && (value & LANECHECK_FUNCFLAG_PYTHONAPI) != 0;
}

static PyObject *
h_call(PyObject *f, PyObject *args, PyObject *kwargs)
{
    if (w_armed && w_event == NULL) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        if (!h_into_the_interpreter(f)) {
            w_event = "a foreign call (ctypes)";
        }
        PyErr_Restore(type, value, tb);
    }
    return h_call_orig(f, args, kwargs);
}

/* ---- a slot replaced in a type, its subclasses made so far and its descriptors ---- */

/* ``type`` and each subclass (recursively) whose slot at ``offset`` holds ``orig`` now hold
 * ``hook``. */
static int
h_replace_slot(PyTypeObject *type, size_t offset, void *orig, void *hook)
{
    void **slot = (void **)((char *)type + offset);
    if (*slot == orig) {
        *slot = hook;
    }
    /* (``type.__subclasses__`` looked up on ``type`` is unbound: it is called with the class) */
    PyObject *subclasses = PyObject_CallMethod((PyObject *)&PyType_Type, "__subclasses__", "O", type);
    if (subclasses == NULL) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(subclasses); i++) {
        if (h_replace_slot((PyTypeObject *)PyList_GET_ITEM(subclasses, i), offset, orig, hook) < 0) {
            Py_DECREF(subclasses);
            return -1;
        }
    }
    Py_DECREF(subclasses);
    return 0;
}

/* The slot wrapper ``name`` of ``type`` (``__call__``, ``__setattr__``) calls ``hook`` too: a
 * subclass made later takes its slot from it. */
static void
h_replace_wrapped(PyTypeObject *type, const char *name, void *orig, void *hook)
{
    PyObject *descr = PyDict_GetItemString(type->tp_dict, name);
    if (descr != NULL && Py_IS_TYPE(descr, &PyWrapperDescr_Type) &&
        ((PyWrapperDescrObject *)descr)->d_wrapped == orig) {
        ((PyWrapperDescrObject *)descr)->d_wrapped = hook;
    }
}

static PyObject *
watch_hook_foreign(PyObject *module, PyObject *type)
{
    if (!PyType_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "watch_hook_foreign(_ctypes.CFuncPtr)");
        return NULL;
    }
    PyTypeObject *t = (PyTypeObject *)type;
    if (t->tp_call != h_call) {
        if (h_call_orig != NULL || t->tp_call == NULL) {
            PyErr_SetString(PyExc_RuntimeError, "watch_hook_foreign: one type, hooked once");
            return NULL;
        }
        h_call_orig = t->tp_call;
        h_replace_wrapped(t, "__call__", (void *)h_call_orig, (void *)h_call);
        if (h_replace_slot(t, offsetof(PyTypeObject, tp_call), (void *)h_call_orig, (void *)h_call) < 0) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

/* ---- class attributes ---- */

static setattrofunc h_setattr_orig = NULL;
static PyObject *h_on_class_write = NULL; /* process_watch's: (cls, name, old) -> bool */

static int
h_setattr(PyObject *type, PyObject *name, PyObject *value)
{
    /* (a type not ready yet has no dict: mypyc sets its classes' attributes before) */
    if (!w_armed || h_on_class_write == NULL || !PyUnicode_Check(name) || !PyType_Check(type) ||
        ((PyTypeObject *)type)->tp_dict == NULL) {
        return h_setattr_orig(type, name, value);
    }
    PyObject *old = PyDict_GetItemWithError(((PyTypeObject *)type)->tp_dict, name);
    if (old == NULL && PyErr_Occurred()) {
        return -1;
    }
    old = Py_XNewRef(old);
    int done = h_setattr_orig(type, name, value);
    if (done == 0) {
        PyObject *shared = PyObject_CallFunctionObjArgs(h_on_class_write, type, name,
                                                        old != NULL ? old : Py_Ellipsis, NULL);
        /* (a failing callback: the write counts, the program's own call succeeded) */
        if (shared == NULL || PyObject_IsTrue(shared) != 0) {
            if (w_event == NULL) {
                w_event = "a library class's attribute (set or deleted)";
            }
        }
        Py_XDECREF(shared);
        PyErr_Clear();
    }
    Py_XDECREF(old);
    return done;
}

static PyObject *
watch_hook_classes(PyObject *module, PyObject *callback)
{
    if (!PyCallable_Check(callback)) {
        PyErr_SetString(PyExc_TypeError, "watch_hook_classes(callback)");
        return NULL;
    }
    Py_XSETREF(h_on_class_write, Py_NewRef(callback));
    if (PyType_Type.tp_setattro != h_setattr) {
        h_setattr_orig = PyType_Type.tp_setattro;
        h_replace_wrapped(&PyType_Type, "__setattr__", (void *)h_setattr_orig, (void *)h_setattr);
        h_replace_wrapped(&PyType_Type, "__delattr__", (void *)h_setattr_orig, (void *)h_setattr);
        if (h_replace_slot(&PyType_Type, offsetof(PyTypeObject, tp_setattro), (void *)h_setattr_orig,
                           (void *)h_setattr) < 0) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

/* ---- C setters ---- */

#define H_SETTERS 16
static struct {
    PyCFunction meth; /* the original, cast back to its own signature by the wrapper of its kind */
    char *name;
} h_setters[H_SETTERS];
static int h_n_setters = 0;

#define H_NOTE(i, result)                                                                         \
    if ((result) != NULL && w_armed && w_event == NULL) {                                         \
        w_event = h_setters[i].name;                                                              \
    }
#define H_WRAPPERS(i)                                                                             \
    static PyObject *h_plain_##i(PyObject *s, PyObject *a)                                        \
    {                                                                                             \
        PyObject *r = h_setters[i].meth(s, a);                                                    \
        H_NOTE(i, r) return r;                                                                    \
    }                                                                                             \
    static PyObject *h_fast_##i(PyObject *s, PyObject *const *a, Py_ssize_t n)                    \
    {                                                                                             \
        PyObject *r = ((_PyCFunctionFast)(void (*)(void))h_setters[i].meth)(s, a, n);             \
        H_NOTE(i, r) return r;                                                                    \
    }                                                                                             \
    static PyObject *h_fastkw_##i(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *k)     \
    {                                                                                             \
        PyObject *r = ((_PyCFunctionFastWithKeywords)(void (*)(void))h_setters[i].meth)(s, a, n, k); \
        H_NOTE(i, r) return r;                                                                    \
    }                                                                                             \
    static PyObject *h_kw_##i(PyObject *s, PyObject *a, PyObject *k)                              \
    {                                                                                             \
        PyObject *r = ((PyCFunctionWithKeywords)(void (*)(void))h_setters[i].meth)(s, a, k);      \
        H_NOTE(i, r) return r;                                                                    \
    }
H_WRAPPERS(0)
H_WRAPPERS(1)
H_WRAPPERS(2)
H_WRAPPERS(3)
H_WRAPPERS(4)
H_WRAPPERS(5)
H_WRAPPERS(6)
H_WRAPPERS(7)
H_WRAPPERS(8)
H_WRAPPERS(9)
H_WRAPPERS(10)
H_WRAPPERS(11)
H_WRAPPERS(12)
H_WRAPPERS(13)
H_WRAPPERS(14)
H_WRAPPERS(15)
#define H_ROW(kind)                                                                               \
    {                                                                                             \
        (PyCFunction)(void (*)(void))h_##kind##_0, (PyCFunction)(void (*)(void))h_##kind##_1,     \
            (PyCFunction)(void (*)(void))h_##kind##_2, (PyCFunction)(void (*)(void))h_##kind##_3, \
            (PyCFunction)(void (*)(void))h_##kind##_4, (PyCFunction)(void (*)(void))h_##kind##_5, \
            (PyCFunction)(void (*)(void))h_##kind##_6, (PyCFunction)(void (*)(void))h_##kind##_7, \
            (PyCFunction)(void (*)(void))h_##kind##_8, (PyCFunction)(void (*)(void))h_##kind##_9, \
            (PyCFunction)(void (*)(void))h_##kind##_10,                                           \
            (PyCFunction)(void (*)(void))h_##kind##_11,                                           \
            (PyCFunction)(void (*)(void))h_##kind##_12,                                           \
            (PyCFunction)(void (*)(void))h_##kind##_13,                                           \
            (PyCFunction)(void (*)(void))h_##kind##_14,                                           \
            (PyCFunction)(void (*)(void))h_##kind##_15                                            \
    }
/* by kind: METH_O/NOARGS/VARARGS, METH_FASTCALL, METH_FASTCALL|METH_KEYWORDS, METH_VARARGS|KEYWORDS */
static const PyCFunction H_KINDS[4][H_SETTERS] = {H_ROW(plain), H_ROW(fast), H_ROW(fastkw), H_ROW(kw)};

static int
h_is_wrapper(PyCFunction meth)
{
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < H_SETTERS; i++) {
            if (H_KINDS[k][i] == meth) {
                return 1;
            }
        }
    }
    return 0;
}

/* watch_hook_setters(((name, builtin function), ...)): each function's C code noted when called. */
static PyObject *
watch_hook_setters(PyObject *module, PyObject *pairs)
{
    if (!PyTuple_Check(pairs)) {
        PyErr_SetString(PyExc_TypeError, "watch_hook_setters(((name, function), ...))");
        return NULL;
    }
    for (Py_ssize_t p = 0; p < PyTuple_GET_SIZE(pairs); p++) {
        PyObject *name, *fn;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(pairs, p), "UO", &name, &fn)) {
            return NULL;
        }
        if (!PyCFunction_Check(fn)) {
            PyErr_Format(PyExc_TypeError, "watch_hook_setters: %R is not a C function", fn);
            return NULL;
        }
        PyMethodDef *def = ((PyCFunctionObject *)fn)->m_ml;
        if (h_is_wrapper(def->ml_meth)) {
            continue;
        }
        int flags = def->ml_flags & (METH_VARARGS | METH_KEYWORDS | METH_NOARGS | METH_O |
                                      METH_FASTCALL | METH_METHOD);
        int kind = flags == METH_FASTCALL                       ? 1
                   : flags == (METH_FASTCALL | METH_KEYWORDS)   ? 2
                   : flags == (METH_VARARGS | METH_KEYWORDS)    ? 3
                   : (flags == METH_O || flags == METH_NOARGS || flags == METH_VARARGS) ? 0
                                                                : -1;
        if (kind < 0 || h_n_setters == H_SETTERS) {
            PyErr_Format(PyExc_ValueError, "watch_hook_setters: cannot wrap %R", fn);
            return NULL;
        }
        const char *text = PyUnicode_AsUTF8(name);
        char *copy = text == NULL ? NULL : PyMem_RawMalloc(strlen(text) + 1);
        if (copy == NULL) {
            return text == NULL ? NULL : PyErr_NoMemory();
        }
        strcpy(copy, text);
        h_setters[h_n_setters].meth = def->ml_meth;
        h_setters[h_n_setters].name = copy; /* (kept for the process's life, as the wrapper is) */
        def->ml_meth = H_KINDS[kind][h_n_setters];
        h_n_setters++;
    }
    Py_RETURN_NONE;
}

#define LANECHECK_PROCESS_HOOK_METHODS                                                             \
    {"watch_hook_foreign", (PyCFunction)watch_hook_foreign, METH_O,                               \
     "watch_hook_foreign(_ctypes.CFuncPtr): a foreign call (not into the interpreter's API) is a "  \
     "write of process state."},                                                                  \
        {"watch_hook_classes", (PyCFunction)watch_hook_classes, METH_O,                           \
         "watch_hook_classes(callback): a class attribute set or deleted while armed calls "      \
         "callback(cls, name, old or Ellipsis); a true answer makes it a write."},                \
        {"watch_hook_setters", (PyCFunction)watch_hook_setters, METH_O,                           \
         "watch_hook_setters(((name, function), ...)): a successful call of each C function "    \
         "is a write named name."},

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

/* Does ``open``'s audit (path, mode, flags) make a new name: a path that does not exist yet,
 * opened to create (a mode with w, x or a; flags with O_CREAT)? */
static int
creates(PyObject *args)
{
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 3) {
        return 0;
    }
    PyObject *path = PyTuple_GET_ITEM(args, 0), *mode = PyTuple_GET_ITEM(args, 1);
    PyObject *flags = PyTuple_GET_ITEM(args, 2);
    int creating = 0;
    if (PyUnicode_Check(mode)) {
        const char *m = PyUnicode_AsUTF8(mode);
        creating = m != NULL && strpbrk(m, "wxa") != NULL;
    }
    else if (PyLong_Check(flags)) {
        long f = PyLong_AsLong(flags);
        creating = f != -1 && (f & O_CREAT) != 0;
    }
    PyErr_Clear();
    if (!creating) {
        return 0;
    }
    const char *name = NULL;
    if (PyUnicode_Check(path)) {
        name = PyUnicode_AsUTF8(path);
    }
    else if (PyBytes_Check(path)) {
        name = PyBytes_AS_STRING(path);
    }
    PyErr_Clear();
    struct stat found;
    return name != NULL && stat(name, &found) != 0 && errno == ENOENT;
}

static int
audit_hook(const char *event, PyObject *args, void *data)
{
    (void)data;
    if (!w_armed || (event[0] != 'o' && event[0] != 'r' && event[0] != 'c')) {
        return 0;
    }
    if (strcmp(event, "open") == 0) {
        if (w_event == NULL && creates(args)) {
            w_event = "open (a new file)";
        }
        return 0;
    }
    for (const char *const *w = WRITES; *w != NULL; w++) {
        if (strcmp(event, *w) == 0) {
            /* prlimit(pid, resource) only reads: its third argument is the new limits or None */
            if (strcmp(event, "resource.prlimit") == 0 && PyTuple_Check(args) &&
                (PyTuple_GET_SIZE(args) < 3 || PyTuple_GET_ITEM(args, 2) == Py_None)) {
                return 0;
            }
            if (w_event == NULL) {
                w_event = *w;
            }
            return 0;
        }
    }
    return 0;
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
    w_event = NULL;
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
    w_armed = 0;
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
    if (!w_hooked) {
        if (PySys_AddAuditHook(audit_hook, NULL) < 0) {
            return NULL;
        }
        w_hooked = 1;
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
    w_armed = 1;
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
    if (w_armed && take() < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* What changed since the last look, named (None: nothing); the state now is the next look's. */
static PyObject *
watch_changed(PyObject *module, PyObject *unused)
{
    if (!w_armed) {
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
        if (w_event != NULL) {
            what = w_event;
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

/* The audit events counted as writes (process_watch.WRITES must hold the same). */
static PyObject *
watch_writes(PyObject *module, PyObject *unused)
{
    PyObject *out = PyList_New(0);
    for (const char *const *w = WRITES; out != NULL && *w != NULL; w++) {
        PyObject *name = PyUnicode_FromString(*w);
        if (name == NULL || PyList_Append(out, name) < 0) {
            Py_XDECREF(name);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(name);
    }
    PyObject *frozen = out == NULL ? NULL : PyFrozenSet_New(out);
    Py_XDECREF(out);
    return frozen;
}

static PyMethodDef watch_methods[] = {
    {"watch_writes", (PyCFunction)watch_writes, METH_NOARGS,
     "watch_writes(): the audit events counted as writes of process state (a frozenset)."},
    LANECHECK_PROCESS_HOOK_METHODS
    {"watch_codec_search_path", (PyCFunction)watch_codec_search_path, METH_NOARGS,
     "watch_codec_search_path(): the interpreter's codec search functions (a list), or None."},
    {"watch_arm", (PyCFunction)watch_arm, METH_VARARGS,
     "watch_arm(dicts, lists, names, readers=(), raws=()): watch these dicts' versions, these "
     "lists' items, what these C readers answer, these objects' bytes, the C locale, "
     "the collector's switch, the recursion limit and the audit events that change process state."},
    {"watch_reset", (PyCFunction)watch_reset, METH_NOARGS,
     "watch_reset(): take the state now as the one compared with (an execution starts)."},
    {"watch_changed", (PyCFunction)watch_changed, METH_NOARGS,
     "watch_changed(): the name of what changed since the last look, or None."},
    {"watch_disarm", (PyCFunction)watch_disarm, METH_NOARGS, "watch_disarm(): stop watching."},
    {NULL, NULL, 0, NULL},
};

int
lanecheck_add_process_watch(PyObject *module)
{
    return PyModule_AddFunctions(module, watch_methods);
}
