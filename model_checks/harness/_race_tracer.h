/* What the race detector's trace function (_race_tracer.c) and its filter (_race_filter.c) share:
 * the Tracer object and the entry kinds of ``race_sites``. */
#ifndef LANECHECK_RACE_TRACER_H
#define LANECHECK_RACE_TRACER_H

#include <Python.h>

#define TRACER_SEEN 32

typedef struct {
    PyObject_HEAD
    PyObject *ex;       /* the Execution: ``current`` is read at call events */
    PyObject *table_of; /* code -> tuple of entries by code unit, or None (a pure function) */
    PyObject *handler;  /* (frame, entry) -> None, at an access site */
    PyObject *code_types; /* race_sites.CODE_TYPES: reads of these are reads of code */
    PyObject *containers; /* race_sites.CONTAINERS and ITERATORS: what the filter lets through */
    PyObject *methods;    /* race_sites.METHODS: the container methods that are accesses */
    PyObject *len;        /* builtins.len */
    PyObject *named_calls; /* race_functions.NAMED_CALLS: getattr and kin, heapq.heappush and kin */
    PyObject *clocks;      /* the detector's vector clocks (a list of lists, by thread) */
    PyObject *subscripted; /* race_items: type -> is a subscript of it an access (no entry: ask) */
    long opcodes;          /* opcode events since the last LONG_RUN call */
    /* the detector's shadow memory, as ``own_loops`` gave it (NULL: not given): a loop's turn over
     * a container only this frame holds and no other thread wrote is no access to record
     * (``lanecheck_worth``, RUN) */
    PyObject *shadow;      /* RaceDetector.shadow: (id, key) -> _Loc */
    PyObject *keys;        /* RaceDetector.keys: container id -> its keys with a location */
    PyObject *whole;       /* race_sites.ALL, the key of the whole container */
    PyObject *points;      /* RaceDetector.points: the interleaved racy sites (a set), or None */
    /* the reads of code (a function, a class, a bound method in a global, a closure variable or
     * a module's attribute) let through in the running thread's epoch (``seen_tid``,
     * ``seen_epoch``: ``clocks[tid][tid]``): a site's read of one location again in the same
     * epoch is the same access (FastTrack's same-epoch read), so a loop calling a module's
     * function calls Python once a step, not once a call. Borrowed pointers: the entries live in
     * the code tables, a recorded location in the detector's ``alive`` list, for the execution. */
    long seen_tid, seen_epoch;
    int n_seen;
    PyObject *seen_entry[TRACER_SEEN];
    PyObject *seen_where[TRACER_SEEN];
} Tracer;

/* Every object member, once: init, traverse and clear walk this list, so a member added to the
 * struct and here cannot be left out of the garbage collector's view. */
#define TRACER_MEMBERS(X)                                                                  \
    X(ex) X(table_of) X(handler) X(code_types) X(containers) X(methods) X(len) X(named_calls)     \
    X(clocks) X(subscripted)
/* the members ``own_loops`` sets (NULL until then): traversed and cleared too */
#define TRACER_LOOP_MEMBERS(X) X(shadow) X(keys) X(whole) X(points)
#define TRACER_ALL_MEMBERS(X) TRACER_MEMBERS(X) TRACER_LOOP_MEMBERS(X)

/* The entry kinds of race_sites (``LOAD_ATTR, STORE_ATTR, ... = range(19)``; a test compares). */
enum { LOAD_ATTR, STORE_ATTR, SUBSCR, STORE_SUBSCR, GLOBAL_NAME, STORE_GLOBAL, CONTAINS, ITER,
       CALL, LOAD_CELL, STORE_CELL, DELETE_SUBSCR, BINARY, TRUTH, RUN, LOAD_METHOD, LOAD_NAME,
       STORE_NAME, CALL_EX };


struct _PyInterpreterFrame;

extern PyObject *lanecheck_str_current; /* "current", interned */

/* Does code under test store an object's ``__class__`` (``race_swaps``)? Then a method found as
 * code in an object's class is a read of the object's class (once a step per site and object). */
extern int lanecheck_class_reads;

/* The builtins' names rebound in the running check (``race_builtins``); its module attribute. */
extern PyObject *lanecheck_watched_builtins;
int lanecheck_add_race_filter(PyObject *module);

/* Could the handler record an access at the site ``entry`` of the frame about to run it? 0 only
 * where ``RaceDetector._site`` is sure to record nothing; 1 where it may; -1 on an error. */
int lanecheck_worth(Tracer *t, struct _PyInterpreterFrame *fr, PyObject *entry);

#endif
