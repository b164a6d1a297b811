/* The state fingerprint's hot paths in C (_fingerprint_hot.c), added to the _race_tracer module
 * by its init. */
#ifndef LANECHECK_FINGERPRINT_HOT_H
#define LANECHECK_FINGERPRINT_HOT_H

#include <Python.h>

/* Adds ``Reducer``, ``same_readings`` and ``REDUCER_KINDS`` to ``module``; -1 with an error set. */
int lanecheck_add_fingerprint_hot(PyObject *module);

/* Adds ``FieldReader`` (_field_reader.c) to ``module``; -1 with an error set. */
int lanecheck_add_field_reader(PyObject *module);

#endif
