/* Reading a Python frame's slots from C (CPython 3.11's frame layout): a traced frame's value
 * stack and fast locals for the race detector (races.py: ``stack_value``, ``fast_local``), and a
 * suspended frame's locals and stack, or a thread's frames, for the state fingerprint
 * (rt/frames.py, rt/thread_frames.py). Compiled into the ``_race_tracer`` extension (setup.py)
 * and registered by its module init.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "_frame_reader reads CPython 3.11's frames"
#endif

#define Py_BUILD_CORE 1
#include "internal/pycore_frame.h"
#undef Py_BUILD_CORE

#include "_native.h"

/* The frame and the depth of ``stack_value`` and ``frame_contents`` (``expected`` arguments in
 * all): 0, or -1 with the error set. */
static int
frame_args(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t expected, const char *usage,
           _PyInterpreterFrame **fr, long *depth)
{
    if (nargs != expected || !PyFrame_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    *depth = PyLong_AsLong(args[1]);
    if (*depth == -1 && PyErr_Occurred()) {
        return -1;
    }
    *fr = ((PyFrameObject *)args[0])->f_frame;
    return 0;
}

/* A new reference to a frame slot's content, None for an empty slot. */
static PyObject *
slot_or_none(PyObject *value)
{
    return Py_NewRef(value == NULL ? Py_None : value);
}

/* A frame's slot: with ``from_top``, ``stack_value(frame, depth)``: the value ``depth`` entries
 * below the top of a traced frame's value stack (1 = top; ValueError when the frame has no stored
 * stack pointer, as only a frame inside a trace event has, or the depth is past its stack);
 * else ``fast_local(frame, slot)``: the raw content of a fast-locals slot (for a cell or free
 * variable, its cell; ValueError past the frame's locals). None for an empty slot. */
static PyObject *
frame_slot(PyObject *const *args, Py_ssize_t nargs, const char *usage, int from_top)
{
    _PyInterpreterFrame *fr;
    long n;
    if (frame_args(args, nargs, 2, usage, &fr, &n) < 0) {
        return NULL;
    }
    int locals = fr->f_code->co_nlocalsplus;
    long index = from_top ? (long)fr->stacktop - n : n;
    if (from_top ? fr->stacktop < 0 || n < 1 || index < locals : n < 0 || n >= locals) {
        PyErr_Format(PyExc_ValueError,
                     from_top ? "no value %ld deep on this frame's stack" : "no local slot %ld in this frame", n);
        return NULL;
    }
    return slot_or_none(fr->localsplus[index]);
}

static PyObject *
stack_value(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return frame_slot(args, nargs, "stack_value(frame, depth)", 1);
}

static PyObject *
fast_local(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    return frame_slot(args, nargs, "fast_local(frame, slot)", 0);
}

/* The fast locals (with cells and free variables) and the ``depth`` values of the stack, bottom
 * first, of a suspended frame, ``null`` where a slot is empty: a new (locals, stack) tuple, or
 * NULL with ValueError when the depth is out of the frame's range. */
static PyObject *
read_slots(_PyInterpreterFrame *fr, long depth, PyObject *null)
{
    PyCodeObject *code = fr->f_code;
    Py_ssize_t n = code->co_nlocalsplus;
    if (depth < 0 || depth > code->co_stacksize) {
        PyErr_Format(PyExc_ValueError, "%U: stack depth %ld out of range", code->co_qualname, depth);
        return NULL;
    }
    PyObject *locals = PyList_New(n);
    PyObject *stack = PyList_New(depth);
    PyObject *both = PyTuple_New(2);
    if (locals == NULL || stack == NULL || both == NULL) {
        Py_XDECREF(locals);
        Py_XDECREF(stack);
        Py_XDECREF(both);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n + depth; i++) {
        PyObject *value = fr->localsplus[i];
        value = Py_NewRef(value == NULL ? null : value);
        if (i < n) {
            PyList_SET_ITEM(locals, i, value);
        }
        else {
            PyList_SET_ITEM(stack, i - n, value);
        }
    }
    PyTuple_SET_ITEM(both, 0, locals);
    PyTuple_SET_ITEM(both, 1, stack);
    return both;
}

/* frame_contents(frame, depth, null) -> (locals, stack): what ``rt/frames.py``'s ``contents``
 * reads of a suspended frame (``read_slots``) in one call instead of a ctypes read per slot.
 * ``depth`` -1: the depth the frame recorded (``stacktop``), or None when it recorded none (the
 * caller then computes it from the bytecode). ValueError where the frame cannot be read. */
static PyObject *
frame_contents(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    _PyInterpreterFrame *fr;
    long depth;
    if (frame_args(args, nargs, 3, "frame_contents(frame, depth, null)", &fr, &depth) < 0) {
        return NULL;
    }
    if (fr == NULL) {
        PyErr_SetString(PyExc_ValueError, "a frame with no interpreter frame");
        return NULL;
    }
    if (depth == -1) {
        if (fr->stacktop < 0) {
            Py_RETURN_NONE;
        }
        depth = (long)fr->stacktop - (long)fr->f_code->co_nlocalsplus;
    }
    return read_slots(fr, depth, args[2]);
}

/* The kinds of a code's entry in ``thread_frames``' table (rt/thread_frames.py names the same
 * numbers; a test compares). */
enum { FRAME_SKIP, FRAME_STOP, FRAME_READ, FRAME_READ_GLOBALS };

/* One frame's part, (atom, position, locals, stack), as rt/thread_frames.py's Python twin builds
 * it from ``entry`` = (kind, atom, positions or None, depths or None); NULL with an error set. */
static PyObject *
frame_part(PyFrameObject *f, PyObject *entry, PyObject *null)
{
    _PyInterpreterFrame *fr = f->f_frame;
    if (fr == NULL) {
        PyErr_SetString(PyExc_ValueError, "a frame with no interpreter frame");
        return NULL;
    }
    PyObject *positions = PyTuple_GET_ITEM(entry, 2), *depths = PyTuple_GET_ITEM(entry, 3);
    PyObject *lasti = PyLong_FromLong(PyFrame_GetLasti(f));
    if (lasti == NULL) {
        return NULL;
    }
    long depth;
    if (fr->stacktop >= 0) {
        depth = (long)fr->stacktop - (long)fr->f_code->co_nlocalsplus;
    }
    else {
        /* running, or calling C code: the depth before the instruction, from the bytecode */
        PyObject *known = depths == Py_None ? NULL : PyDict_GetItemWithError(depths, lasti);
        if (known == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_Format(PyExc_ValueError, "%U: no stack depth at offset %S",
                             fr->f_code->co_qualname, lasti);
            }
            Py_DECREF(lasti);
            return NULL;
        }
        depth = PyLong_AsLong(known);
        if (depth == -1 && PyErr_Occurred()) {
            Py_DECREF(lasti);
            return NULL;
        }
    }
    /* a call suspended in PRECALL is named by its CALL (``frames.position``) */
    PyObject *mapped = positions == Py_None ? NULL : PyDict_GetItemWithError(positions, lasti);
    if (mapped == NULL && PyErr_Occurred()) {
        Py_DECREF(lasti);
        return NULL;
    }
    PyObject *position = lasti;
    if (mapped != NULL) {
        position = Py_NewRef(mapped);
        Py_DECREF(lasti);
    }
    PyObject *both = read_slots(fr, depth, null);
    if (both == NULL) {
        Py_DECREF(position);
        return NULL;
    }
    PyObject *part = PyTuple_Pack(4, PyTuple_GET_ITEM(entry, 1), position, PyTuple_GET_ITEM(both, 0),
                                  PyTuple_GET_ITEM(both, 1));
    Py_DECREF(position);
    Py_DECREF(both);
    return part;
}

/* thread_frames(frame, table, null) -> (parts, globals), or a code object missing from ``table``
 * (the caller enters it and calls again): a thread's frames from ``frame`` outwards, read as
 * rt/thread_frames.py's Python twin reads them (the state fingerprint reads every frame of every
 * thread at each state; in Python that walk was a third of a fingerprint). ``parts`` and
 * ``globals`` are outermost first. ValueError where a frame cannot be read. */
static PyObject *
thread_frames(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || (args[0] != Py_None && !PyFrame_Check(args[0])) || !PyDict_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "thread_frames(frame or None, table, null)");
        return NULL;
    }
    PyObject *table = args[1], *null = args[2];
    PyObject *parts = PyList_New(0), *globals = PyList_New(0);
    if (parts == NULL || globals == NULL) {
        goto fail;
    }
    PyFrameObject *f = args[0] == Py_None ? NULL : (PyFrameObject *)Py_NewRef(args[0]);
    PyObject *entry = NULL;
    while (f != NULL) {
        PyCodeObject *code = PyFrame_GetCode(f);
        entry = PyDict_GetItemWithError(table, (PyObject *)code);
        if (entry == NULL) {
            Py_DECREF(f);
            Py_DECREF(parts);
            Py_DECREF(globals);
            if (PyErr_Occurred()) {
                Py_DECREF(code);
                return NULL;
            }
            return (PyObject *)code;
        }
        Py_DECREF(code);
        /* held: the allocations below may run a collection, and a finalizer may change the table */
        Py_INCREF(entry);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 4) {
            PyErr_SetString(PyExc_TypeError, "thread_frames: an entry is (kind, atom, positions, depths)");
            goto fail_in_frame;
        }
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
        if (kind == -1 && PyErr_Occurred()) {
            goto fail_in_frame;
        }
        if (kind == FRAME_STOP) {
            Py_DECREF(entry);
            Py_DECREF(f);
            break;
        }
        if (kind == FRAME_READ || kind == FRAME_READ_GLOBALS) {
            PyObject *part = frame_part(f, entry, null);
            if (part == NULL || PyList_Append(parts, part) < 0) {
                Py_XDECREF(part);
                goto fail_in_frame;
            }
            Py_DECREF(part);
            if (kind == FRAME_READ_GLOBALS) {
                PyObject *g = PyFrame_GetGlobals(f);
                if (g == NULL || PyList_Append(globals, g) < 0) {
                    Py_XDECREF(g);
                    goto fail_in_frame;
                }
                Py_DECREF(g);
            }
        }
        Py_DECREF(entry);
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    if (PyList_Reverse(parts) < 0 || PyList_Reverse(globals) < 0) {
        goto fail;
    }
    PyObject *out = PyTuple_Pack(2, parts, globals);
    Py_DECREF(parts);
    Py_DECREF(globals);
    return out;
fail_in_frame:
    Py_DECREF(entry);
    Py_DECREF(f);
fail:
    Py_XDECREF(parts);
    Py_XDECREF(globals);
    return NULL;
}

static PyMethodDef frame_methods[] = {
    LANECHECK_FASTCALL(frame_contents, "frame_contents(frame, depth, null): (locals, stack) of a "
                                       "suspended frame (rt/frames.py)."),
    LANECHECK_FASTCALL(thread_frames, "thread_frames(frame, table, null): a thread's frames as the "
                                      "state fingerprint reads them (rt/thread_frames.py)."),
    LANECHECK_FASTCALL(fast_local, "fast_local(frame, slot): a frame's fast-locals slot (a cell for "
                                   "a closure variable)."),
    LANECHECK_FASTCALL(stack_value, "stack_value(frame, depth): a value of a traced frame's stack "
                                    "(1 = top)."),
    {NULL}};

int
lanecheck_add_frame_reader(PyObject *module)
{
    if (PyModule_AddFunctions(module, frame_methods) < 0) {
        return -1;
    }
    PyObject *kinds = Py_BuildValue("(ssss)", "SKIP", "STOP", "READ", "READ_GLOBALS");
    if (kinds == NULL || PyModule_AddObject(module, "FRAME_KINDS", kinds) < 0) {
        Py_XDECREF(kinds);
        return -1;
    }
    return 0;
}
