"""A function the program caches with ``functools.lru_cache`` (or ``functools.cache``), made at
import, in patch mode: its cache's check-then-act is interleaved.

The cache lives in C: a call looks its key up and, on a miss, runs the function and stores the
result, with nothing the explorer sees. Two threads calling a cached "build the client once"
function were seen as independent, and the schedule where both miss (two clients built) was
never run: session 37's second review found it proved absent. While patched, such a function (a
module's global) stands in (``patch_imported.StandIn``) for a twin per execution that keeps its
cache in Python and makes the look-up and the store atomic operations on one cell of the
explorer's: the search then runs the other thread's look-up between a miss and its store. The
twin's cache has no size bound (``maxsize`` evictions are not modelled); the function itself runs
as the program's code, traced. A cached method of a class made at import stands in through a
descriptor (``CachedMethod``) that binds the instance, as the real wrapper does.

A cache made while an execution runs (``functools.lru_cache`` or ``functools.cache`` applied
inside the explored code, session 38) is the twin itself: in a controlled thread, the patched
``lru_cache`` gives a program's function a twin of this execution (``lru_cache_inside``), and a
library's function the real wrapper.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from model_checks.harness.patch_imported import StandIn
from model_checks.harness.race_sites import under_test
from model_checks.harness.rt.objects import AtomicState, Op
from model_checks.harness.runtime import ControlledRuntime

CACHED: type = functools._lru_cache_wrapper
REAL_LRU_CACHE = functools.lru_cache


class CachedTwin:
    """One execution's cache of a cached function: the look-up (a load) and the store (a store)
    are operations on one atomic cell, so two threads' calls are ordered by the explorer."""

    def __init__(self, real: Any, rt: ControlledRuntime) -> None:
        self.fn: Callable[..., Any] = real.__wrapped__
        self.typed: bool = real.cache_parameters().get("typed", False)
        self.cache: dict[object, object] = {}
        self.hits = self.misses = 0
        ex = rt._ex
        self._ex = ex
        label = f"{getattr(self.fn, '__qualname__', 'function')}'s cache"
        made = ex.new_object(lambda oid: AtomicState(oid, label, None, by_identity=True))
        assert isinstance(made, AtomicState)
        self._cell = made

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = functools._make_key(args, kwargs, self.typed)
        self._ex.perform(Op("load", self._cell, (), read=True))
        try:
            found = self.cache[key]
        except KeyError:
            pass
        else:
            self.hits += 1
            return found
        self.misses += 1
        result = self.fn(*args, **kwargs)
        self._ex.perform(Op("store", self._cell, (result,)))
        self.cache[key] = result
        return result

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        # a method of a class made inside the explored code binds its instance, as the real
        # wrapper does (the cache then keys on the instance)
        return self if obj is None else functools.partial(self, obj)

    def cache_info(self) -> Any:
        return functools._CacheInfo(self.hits, self.misses, None, len(self.cache))

    def cache_clear(self) -> None:
        self.cache.clear()
        self.hits = self.misses = 0


def stand_in(
    real: object, name: str, running: Callable[[], object], made: dict[int, StandIn]
) -> StandIn | None:
    """The stand-in of ``real`` where it is a cached function (one per object: ``made``, by id);
    None otherwise. Only for a module's global (a cached method of a class would lose its binding
    to the instance: not stood in)."""
    if not isinstance(real, CACHED):
        return None
    found = made.get(id(real))
    if found is None:

        def make() -> object:
            rt = running()
            assert isinstance(rt, ControlledRuntime)
            return CachedTwin(real, rt)

        found = made[id(real)] = StandIn(real, make, running, name)
    return found


class CachedMethod:
    """A cached method of a program's class while patched: ``obj.method`` binds ``obj`` to the
    cached function's stand-in, whose cache then keys on the instance as the real one does."""

    def __init__(self, calls: StandIn) -> None:
        self.calls = calls

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        return self.calls if obj is None else functools.partial(self.calls, obj)


def method_stand_in(
    real: object, name: str, running: Callable[[], object], made: dict[int, StandIn]
) -> CachedMethod | None:
    """The stand-in of a class's attribute ``real`` where it is a cached method."""
    calls = stand_in(real, name, running, made)
    return None if calls is None else CachedMethod(calls)


def lru_cache_inside(rt: ControlledRuntime, maxsize: Any = 128, typed: bool = False) -> Any:
    """``functools.lru_cache(...)`` called in a controlled thread (``functools.cache`` calls it
    too): the program's function cached by a twin of this execution, the real wrapper for any
    other (a library's cache outlives the execution)."""
    made = REAL_LRU_CACHE(maxsize, typed)
    if isinstance(made, CACHED):  # ``lru_cache(fn)``
        return _twin_of(made, rt)

    def decorating(fn: Callable[..., Any]) -> Any:
        return _twin_of(made(fn), rt)

    return decorating


def _twin_of(real: Any, rt: ControlledRuntime) -> Any:
    code = getattr(real.__wrapped__, "__code__", None)
    if code is None or not under_test(code.co_filename):
        return real
    return CachedTwin(real, rt)
