/* What the _race_tracer extension's C files share: the state fingerprint's hot paths
 * (_fingerprint_hot.c) and its field reader (_field_reader.c), added to the module by its init
 * (_race_tracer.c), and the collector methods of their types and of the race tracer's. */
#ifndef LANECHECK_FINGERPRINT_HOT_H
#define LANECHECK_FINGERPRINT_HOT_H

#include <Python.h>

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

/* Adds ``Reducer``, ``same_readings`` and ``REDUCER_KINDS`` to ``module``; -1 with an error set. */
int lanecheck_add_fingerprint_hot(PyObject *module);

/* Adds ``FieldReader`` (_field_reader.c) to ``module``; -1 with an error set. */
int lanecheck_add_field_reader(PyObject *module);

#endif
