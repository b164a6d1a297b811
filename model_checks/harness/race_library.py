"""The standard library's part in race detection: the modules written in Python whose code the
detector traces as the program's own, the state of theirs it leaves unchecked, and the C functions
they (and programs) call that read the containers they are handed.

The standard library is not traced (its own state is guarded by locks the harness does not
control, or is GIL-atomic by design: a report there would be a false alarm). But some of its
modules are plain algorithms over the caller's data: ``Counter.update`` writes the counter,
``heapq.nsmallest`` and ``statistics.mean`` read their argument, ``dataclasses.replace`` and
``copy.copy`` read an object's fields. Left untraced, a race through them was proved race free
(session 36's review). Those modules are traced (``TRACED_MODULES``): what they do to the data
they are handed is the caller's access. Their own module state (caches such as ``collections``'
namedtuple item getters, dispatch tables) is not shared data of the program: ``library_state``
exempts it.
"""

from __future__ import annotations

import _collections_abc
import collections
import concurrent.futures._base
import copy
import dataclasses
import heapq
import inspect
import itertools
import linecache
import math
import os
import pickle
import random
import statistics
import types
from typing import Any

from model_checks.harness.own_code import own

# Algorithms over the caller's data, with no state of their own that threads share unguarded
# (``functools`` is not here: ``cached_property`` guards its cache with a lock of its own).
TRACED_MODULES: tuple[types.ModuleType, ...] = (
    collections,
    _collections_abc,
    heapq,
    statistics,
    dataclasses,
    copy,
    random,
    # ``os.environ``: the process's environment, a mapping in Python over a dict of its own that
    # the program's threads write and read (session 38's review: a write racing a read was proved)
    os,
)
# (a module CPython freezes, ``os`` and ``_collections_abc``, names its code ``<frozen os>``, not
# its file: before session 38 the ``collections.abc`` mixins were never traced)
TRACED_FILES = frozenset(
    [m.__file__ for m in TRACED_MODULES if m.__file__]
    + [f"<frozen {m.__spec__.name}>" for m in TRACED_MODULES if m.__spec__ is not None]
)
# Their functions that keep state of their own, not traced: ``dataclasses``' recursion guard for
# ``__repr__`` (a set of the reprs running, keyed by ``_thread.get_ident()``: two threads
# formatting one dataclass were reported as a race on it, session 37's second review).
UNTRACED_CODE = frozenset({(dataclasses.__file__, "_recursive_repr.<locals>.wrapper")})
# And functions of untraced modules that are: where the library calls what the program handed it
# in another thread (session 39: ``f.add_done_callback(seen.append)``, a container's method the
# worker calls after ``result()`` woke the main thread, was proved race free). Its calls are
# traced call sites, so a container's method among them is its access.
TRACED_CODE = frozenset(
    (concurrent.futures._base.__file__, name)
    for name in ("Future._invoke_callbacks", "Future.add_done_callback")
)

# C functions (and iterator types) that read every container among their arguments, beside
# ``race_functions.CONTAINER_FUNCTIONS``'s: the traced modules call them on the caller's data
# (``statistics.mean`` groups its data with ``itertools.groupby``, ``Counter.update`` counts with
# ``_count_elements``, which writes the counter: True).
READERS: dict[object, bool] = {
    getattr(collections, "_count_elements", None): True,
    **dict.fromkeys(
        (
            itertools.groupby,
            itertools.islice,
            itertools.starmap,
            itertools.accumulate,
            itertools.compress,
            itertools.dropwhile,
            itertools.takewhile,
            itertools.filterfalse,
            itertools.zip_longest,
            itertools.product,
            itertools.permutations,
            itertools.combinations,
            itertools.combinations_with_replacement,
            itertools.pairwise,
            itertools.cycle,
            itertools.tee,
            math.fsum,
            math.prod,
            pickle.dump,
        ),
        False,
    ),
}
READERS.pop(None, None)  # a build of CPython without the C counter: Counter.update is traced code

# Serialisers read an object's fields, not only a container's items (``pickle.dumps(obj)``): the
# object's ``__dict__`` is read whole. Only these: ``str(obj)`` of an object reads what its
# ``__repr__`` (traced, if the program's) reads, nothing for the default one.
SERIALISES = frozenset({pickle.dumps, pickle.dump, inspect.getmembers})


_STATE: list[frozenset[int]] = []


def library_state() -> frozenset[int]:
    """The ids of the traced modules' own state: their globals and the containers among them (a
    cache written by two threads' calls is the library's concern, guarded or GIL-atomic)."""
    if not _STATE:
        ids: set[int] = set()
        for module in TRACED_MODULES:
            ids.add(id(module.__dict__))
            # (not their ``__builtins__``, the builtins' dict: the program's rebinding of a
            # builtin is no library's state, ``race_builtins``)
            ids.update(
                id(v)
                for k, v in module.__dict__.items()
                if isinstance(v, (dict, list, set)) and k != "__builtins__"
            )
        _STATE.append(frozenset(ids))
    return _STATE[0]


def library_caller(frame: Any, label: str) -> tuple[types.CodeType, int, str]:
    """An access made inside a traced standard-library function is reported at the program's line
    that called it, and the call named (``read (mean())``) where the label names no location."""
    called = frame.f_code
    caller = getattr(frame, "f_back", None)
    while caller is not None and caller.f_code.co_filename in TRACED_FILES:
        called, caller = caller.f_code, caller.f_back
    if caller is None:
        return frame.f_code, frame.f_lasti, label
    if not label or label.endswith(")"):
        label = f"{called.co_qualname}()"
    return caller.f_code, caller.f_lasti, label


def generated_caller(frame: Any) -> tuple[types.CodeType, int] | None:
    """An access made in code with no file of its own (``exec``'s ``<string>``: the property
    ``multiprocessing.Value`` generates, a dataclass's ``__init__``) is reported at the innermost
    calling frame whose file is real (review 9's s24 named ``<string>:11`` and an empty line for
    ``v.value += 1``) and not the harness's (a ``Value`` made at import is reached through its
    stand-in: session 42 named ``patch_mp_imported.py``); None where there is none, or where
    ``linecache`` holds the source."""
    if frame.f_code.co_filename in linecache.cache:
        return None
    caller = getattr(frame, "f_back", None)
    while caller is not None and (_generated(caller.f_code.co_filename) or own(caller.f_code.co_filename)):
        caller = caller.f_back
    return None if caller is None else (caller.f_code, caller.f_lasti)


def _generated(filename: str) -> bool:
    return filename.startswith("<") and not filename.startswith("<frozen") and filename not in linecache.cache
