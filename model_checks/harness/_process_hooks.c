/* The process-state watch's hooks (process_watch.py, docs/harness.md "Process-wide state"): the
 * writes of process state that no cheap reading finds, caught where they are made and noted in
 * ``lanecheck_watch_event`` for the watch's next look (_process_watch.c reads the rest at every
 * step), so a step pays nothing for them.
 *
 * - A call that changes the environment, the file system's names or a resource limit: its audit
 *   event (``WRITES``, and ``open`` of a new name), seen by one audit hook, added when the watch
 *   is first armed.
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
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>

#include "_native.h"

/* ---- audit events ---- */

/* Audit events whose call changes what every thread of the process sees. */
static const char *const WRITES[] = {
    "os.putenv", "os.unsetenv", "os.chdir", "os.rename", "os.remove", "os.rmdir", "os.mkdir",
    "os.link", "os.symlink", "os.chmod", "os.chown", "os.truncate", "os.utime", "os.setxattr",
    "os.removexattr", "os.chflags", "resource.setrlimit", "resource.prlimit",
    "ctypes.call_function", NULL};

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
    if (!lanecheck_watch_armed || (event[0] != 'o' && event[0] != 'r' && event[0] != 'c')) {
        return 0;
    }
    if (strcmp(event, "open") == 0) {
        if (lanecheck_watch_event == NULL && creates(args)) {
            lanecheck_watch_event = "open (a new file)";
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
            if (lanecheck_watch_event == NULL) {
                lanecheck_watch_event = *w;
            }
            return 0;
        }
    }
    return 0;
}

int
lanecheck_watch_hook_audit(void)
{
    static int hooked = 0;
    if (!hooked) {
        if (PySys_AddAuditHook(audit_hook, NULL) < 0) {
            return -1;
        }
        hooked = 1;
    }
    return 0;
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
    if (lanecheck_watch_armed && lanecheck_watch_event == NULL) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        if (!h_into_the_interpreter(f)) {
            lanecheck_watch_event = "a foreign call (ctypes)";
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
    if (!lanecheck_watch_armed || h_on_class_write == NULL || !PyUnicode_Check(name) || !PyType_Check(type) ||
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
            if (lanecheck_watch_event == NULL) {
                lanecheck_watch_event = "a library class's attribute (set or deleted)";
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
    if ((result) != NULL && lanecheck_watch_armed && lanecheck_watch_event == NULL) {                                         \
        lanecheck_watch_event = h_setters[i].name;                                                              \
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

static PyMethodDef hook_methods[] = {
    LANECHECK_METHOD(watch_writes, METH_NOARGS,
        "watch_writes(): the audit events counted as writes of process state (a frozenset)."),
    LANECHECK_METHOD(watch_hook_foreign, METH_O,
        "watch_hook_foreign(_ctypes.CFuncPtr): a foreign call (not into the interpreter's API) "
        "is a write of process state."),
    LANECHECK_METHOD(watch_hook_classes, METH_O,
        "watch_hook_classes(callback): a class attribute set or deleted while armed calls "
        "callback(cls, name, old or Ellipsis); a true answer makes it a write."),
    LANECHECK_METHOD(watch_hook_setters, METH_O,
        "watch_hook_setters(((name, function), ...)): a successful call of each C function "
        "is a write named name."),
    {NULL, NULL, 0, NULL},
};

int
lanecheck_add_process_hooks(PyObject *module)
{
    return PyModule_AddFunctions(module, hook_methods);
}
