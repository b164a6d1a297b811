"""A function the program caches with ``functools.lru_cache`` (or ``functools.cache``), made at
import, in patch mode: its cache's check-then-act is interleaved.

The cache lives in C: a call looks its key up and, on a miss, runs the function and stores the
result, with nothing the explorer sees. Two threads calling a cached "build the client once"
function were seen as independent, and the schedule where both miss (two clients built) was
never run: session 37's second review found it proved absent. While patched, such a function (a
module's global) stands in (``patch_imported.StandIn``) for a twin per execution that keeps its
cache in Python and makes the look-up and the store atomic operations on one cell of the
explorer's: the search then runs the other thread's look-up between a miss and its store. The
twin's cache keeps CPython's size bound and LRU order (``CachedTwin``); the function itself runs
as the program's code, traced. A cached method of a class made at import stands in through a
descriptor (``CachedMethod``) that binds the instance, as the real wrapper does.

A cache made while an execution runs (``functools.lru_cache`` or ``functools.cache`` applied
inside the explored code, session 38) is the twin itself: in a controlled thread, the patched
``lru_cache`` gives a program's function a twin of this execution (``lru_cache_inside``), and a
library's function the real wrapper.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
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
    are operations on one atomic cell, so two threads' calls are ordered by the explorer.

    A bounded cache (``maxsize`` a number) keeps CPython's order and evictions
    (``bounded_lru_cache_wrapper`` in ``_functoolsmodule.c``): a hit makes its key the most recent,
    a store into a full cache evicts the least recent, and a store of a key another thread stored
    meanwhile keeps that one (review 9's s32: ``maxsize=1`` kept every entry). Its look-up is then
    a write of the cell once a cache evicted (it reorders the entries, which decides a later
    eviction: ``_evicting``), and
    ``maxsize=0`` caches nothing, each call a miss, as CPython's. ``cache_clear`` and
    ``cache_info`` are writes of the cell (review 9's s28: a clear that was no operation was taken
    to commute with another thread's store of a value computed before it, "exhaustive" where 18
    of 20 real runs kept the stale value); ``cache_info`` reads the counters each look-up moves."""

    def __init__(self, real: Any, rt: ControlledRuntime) -> None:
        self.fn: Callable[..., Any] = real.__wrapped__
        parameters = real.cache_parameters()
        self.typed: bool = parameters.get("typed", False)
        self.maxsize: int | None = parameters.get("maxsize")
        self.cache: OrderedDict[object, object] = OrderedDict()
        self.hits = self.misses = 0
        ex = rt._ex
        self._ex = ex
        label = f"{getattr(self.fn, '__qualname__', 'function')}'s cache"
        made = ex.new_object(lambda oid: AtomicState(oid, label, None, by_identity=True))
        assert isinstance(made, AtomicState)
        self._cell = made

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        bounded = self.maxsize is not None
        # (a bounded look-up reorders the entries, which only an eviction shows: a read until a
        # cache evicts in this check, then a write and the search starts again, ``_evicting``)
        self._ex.perform(Op("load", self._cell, (), read=not (self.maxsize and ORDERED[0])))
        if self.maxsize == 0:  # CPython's ``uncached_lru_cache_wrapper``
            self.misses += 1
            return self.fn(*args, **kwargs)
        key = functools._make_key(args, kwargs, self.typed)
        try:
            found = self.cache[key]
        except KeyError:
            pass
        else:
            if bounded:
                self.cache.move_to_end(key)
            self.hits += 1
            return found
        self.misses += 1
        result = self.fn(*args, **kwargs)
        self._ex.perform(Op("store", self._cell, (result,)))
        if not bounded:
            self.cache[key] = result
        elif key not in self.cache:  # (another thread's store meanwhile is kept, unmoved)
            if self.maxsize is not None and len(self.cache) >= self.maxsize:
                self.cache.popitem(last=False)
                _evicting(self._cell.name)
            self.cache[key] = result
        return result

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        # a method of a class made inside the explored code binds its instance, as the real
        # wrapper does (the cache then keys on the instance)
        return self if obj is None else functools.partial(self, obj)

    def cache_info(self) -> Any:
        self._ex.perform(Op("load", self._cell, (), read=False))
        return functools._CacheInfo(self.hits, self.misses, self.maxsize, len(self.cache))

    def cache_clear(self) -> None:
        self._ex.perform(Op("store", self._cell, (None,)))
        self.cache.clear()
        self.hits = self.misses = 0

    def cache_parameters(self) -> dict[str, Any]:
        return {"maxsize": self.maxsize, "typed": self.typed}


# Are bounded caches' look-ups writes in this check (since one evicted)? And the cache whose
# eviction made them so, not yet told to the search (``take_switched``).
ORDERED: list[bool] = [False]
_SWITCHED: list[str] = []


def _evicting(label: str) -> None:
    """A bounded cache evicts. Until the first eviction of an execution the cache holds the same
    keys whatever the order of its hits, so hits may commute (as reads: a default
    ``lru_cache()``'s three threads' hits took 11 executions, as writes 565); the order decides
    which key an eviction drops, so from the first eviction seen in a check the hits are writes
    and the search starts again (review 9's s32)."""
    if not ORDERED[0]:
        ORDERED[0] = True
        _SWITCHED.append(label)


def new_check() -> None:
    ORDERED[0] = False
    _SWITCHED.clear()


def take_switched() -> str | None:
    """The cache whose eviction made bounded look-ups writes in the last execution, or None."""
    if not _SWITCHED:
        return None
    label = _SWITCHED[0]
    _SWITCHED.clear()
    return label


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
