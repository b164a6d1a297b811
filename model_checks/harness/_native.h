/* What the _race_tracer extension's C files share: each file's ``lanecheck_add_*``, called by the
 * module's init (_race_tracer.c), and the collector methods and type objects of their types. */
#ifndef LANECHECK_NATIVE_H
#define LANECHECK_NATIVE_H

#include <Python.h>
#include <stddef.h>

/* The garbage collector's methods of a C type whose object members ``MEMBERS(X)`` lists (each
 * ``X(name)``): ``Type_traverse``, ``Type_clear`` and ``Type_dealloc``. One list per type, walked
 * by all three, so a member added to the struct and to the list cannot be left out of the
 * collector's view (the Tracer, the Reducer and the FieldReader). */
#define LANECHECK_VISIT_MEMBER(m) Py_VISIT(self->m);
#define LANECHECK_CLEAR_MEMBER(m) Py_CLEAR(self->m);
#define LANECHECK_GC_METHODS(Type, MEMBERS)                                                       \
    static int Type##_traverse(Type *self, visitproc visit, void *arg)                            \
    {                                                                                             \
        MEMBERS(LANECHECK_VISIT_MEMBER)                                                           \
        return 0;                                                                                 \
    }                                                                                             \
    static int Type##_clear(Type *self)                                                           \
    {                                                                                             \
        MEMBERS(LANECHECK_CLEAR_MEMBER)                                                           \
        return 0;                                                                                 \
    }                                                                                             \
    static void Type##_dealloc(Type *self)                                                        \
    {                                                                                             \
        PyObject_GC_UnTrack(self);                                                                \
        Type##_clear(self);                                                                       \
        Py_TYPE(self)->tp_free((PyObject *)self);                                                 \
    }

/* The type object ``TType`` of a callable C type ``T`` with garbage-collected members
 * (``LANECHECK_GC_METHODS``), ``T_init`` and a ``vectorcall`` field: it is called through the
 * vectorcall protocol, and ``T_call`` serves callers that use tp_call. */
#define LANECHECK_VECTORCALL_TYPE(T, name, doc)                                                   \
    static PyObject *T##_call(PyObject *self, PyObject *args, PyObject *kwargs)                   \
    {                                                                                             \
        return PyVectorcall_Call(self, args, kwargs);                                             \
    }                                                                                             \
    static PyTypeObject T##Type = {                                                               \
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = "model_checks.harness._race_tracer." name,       \
        .tp_doc = doc,                                                                            \
        .tp_basicsize = sizeof(T),                                                                \
        .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,         \
        .tp_vectorcall_offset = offsetof(T, vectorcall),                                          \
        .tp_call = T##_call,                                                                      \
        .tp_new = PyType_GenericNew,                                                              \
        .tp_init = (initproc)T##_init,                                                            \
        .tp_traverse = (traverseproc)T##_traverse,                                                \
        .tp_clear = (inquiry)T##_clear,                                                           \
        .tp_dealloc = (destructor)T##_dealloc,                                                    \
    };

/* A method table's entry for the function ``fn``, named as it is. */
#define LANECHECK_METHOD(fn, flags, doc) {#fn, (PyCFunction)(void (*)(void))fn, flags, doc}
#define LANECHECK_FASTCALL(fn, doc) LANECHECK_METHOD(fn, METH_FASTCALL, doc)

/* Each adds its part to ``module``: 0, or -1 with an error set. */
int lanecheck_add_frame_reader(PyObject *module);     /* _frame_reader.c: stack_value, ... */
int lanecheck_add_race_clocks(PyObject *module);      /* _race_clocks.c: join, sync_op */
int lanecheck_add_fingerprint_hot(PyObject *module);  /* Reducer, REDUCER_KINDS */
int lanecheck_add_fingerprint_same(PyObject *module); /* same_readings, same_versions, same_items */
int lanecheck_add_field_reader(PyObject *module);     /* FieldReader */
int lanecheck_add_process_watch(PyObject *module);    /* watch_arm, ..., and the hooks' */
int lanecheck_add_process_hooks(PyObject *module);    /* watch_writes, watch_hook_foreign, ... */

/* What the process watch (_process_watch.c: the readings, at every step) and its hooks
 * (_process_hooks.c: the writes caught where they are made) share. */
extern int lanecheck_watch_armed; /* is a watch armed (the hooks note nothing otherwise)? */
/* the write the hooks caught since the watch's last look (a static string), or NULL */
extern const char *lanecheck_watch_event;
int lanecheck_watch_hook_audit(void); /* adds the audit hook, once a process: 0, or -1 */

#endif
