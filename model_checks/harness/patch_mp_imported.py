"""``multiprocessing``'s synchronisation objects made at import: a controlled twin per execution.

``LOCK = multiprocessing.Lock()`` at a module's top level (in a class body, on an object made at
import, or reached from one) is a real POSIX semaphore made before patching. Two controlled
threads share one OS thread: one thread's ``acquire`` of it held by another blocked the process
(a hang), and with no switch inside the critical section the lock was invisible (a correctly
locked counter reported as a data race). A ``multiprocessing.RLock`` is owned by the OS thread, so
it let every controlled thread in at once.

As for ``threading``'s (``patch_imported``), each such object stands in for a controlled one of
the same kind and state, made in each execution the first time a controlled thread touches it:
``patch_mp_sync``'s objects, with ``multiprocessing``'s signatures. ``Value``/``Array`` made at
import with their own lock keep their memory (views taken of it at import stay views of it), put
back as the check's first execution found it before each later one (``patch_mp_memory``; one
held only in a list or dict when an execution first touches it); only their lock stands in, so
``get_lock()``'s acquire and release are controlled operations. Outside a controlled thread each
is the real one. What no fresh object can start as (a lock held at patching, a bounded semaphore
below its bound, a barrier in use) is refused by name.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from multiprocessing import sharedctypes, synchronize
from typing import Any

from model_checks.harness import patch_imported, patch_mp_memory
from model_checks.harness.patch_imported import Running, StandIn
from model_checks.harness.rt.scheduler import UsageError

# the real classes, captured before ``patch_mp_sync`` replaces their names while patched
_LOCK, _RLOCK = synchronize.Lock, synchronize.RLock
_SEMAPHORE, _BOUNDED = synchronize.Semaphore, synchronize.BoundedSemaphore
_CONDITION, _EVENT, _BARRIER = synchronize.Condition, synchronize.Event, synchronize.Barrier
_SHARED = sharedctypes.SynchronizedBase
_OURS = (_LOCK, _RLOCK, _SEMAPHORE, _BOUNDED, _CONDITION, _EVENT, _BARRIER, _SHARED)
Made = dict[int, StandIn]
# ``patch_mp_sync.made_at_import``: the controlled object of a kind, ``(rt, *args)`` (registered by
# that module, which imports this one only once the program imported ``multiprocessing``)
_MAKE: list[Callable[[str], Callable[..., Any]]] = []


def register(make: Callable[[str], Callable[..., Any]]) -> None:
    """From now on, ``patch_imported.stand_in`` asks this module too, making twins with ``make``."""
    if not _MAKE:
        _MAKE.append(make)
        patch_imported.MORE_STAND_INS.append(stand_in)


def _runtime(running: Running) -> Any:
    return running()


def _lock(real: Any, name: str, running: Running, made: Made) -> Callable[[], object]:
    if real._semlock._is_zero():
        raise UsageError(
            f"{name} is a multiprocessing {type(real).__name__} held when patching began (acquired "
            "at import and not released): a fresh lock for each execution cannot start held; "
            "release it before patched() or `lanecheck explore` runs the program"
        )
    make = _MAKE[0](type(real).__name__)
    return lambda: make(_runtime(running))


def _semaphore(real: Any, name: str, running: Running, made: Made) -> Callable[[], object]:
    semlock = real._semlock
    value = int(semlock._get_value())
    if type(real) is _BOUNDED:
        if value != semlock.maxvalue:
            raise UsageError(
                f"{name} is a multiprocessing BoundedSemaphore acquired at import ({value} of "
                f"{semlock.maxvalue} left): a fresh bounded semaphore for each execution "
                "starts at its bound; release it before patching"
            )
        bounded = _MAKE[0]("BoundedSemaphore")
        return lambda: bounded(_runtime(running), value)
    plain = _MAKE[0]("Semaphore")
    return lambda: plain(_runtime(running), value)


def _part(real: Any, part: object, what: str, name: str, running: Running, made: Made) -> StandIn:
    """The stand-in of the lock ``real`` is made on (one per lock: a condition made on a module's
    lock, or a value given it, shares that lock's twin)."""
    found = patch_imported.stand_in(part, f"{name}'s {what}", running, made)
    if found is None:
        raise UsageError(
            f"{name} is a multiprocessing {type(real).__name__} made at import on {part!r}, which "
            "cannot be made afresh for each execution; make it inside the explored function"
        )
    return found


def _condition(real: Any, name: str, running: Running, made: Made) -> Callable[[], object]:
    lock = _part(real, real._lock, "lock", name, running, made)
    make = _MAKE[0]("Condition")
    return lambda: make(_runtime(running), lock._target())


def _event(real: Any, name: str, running: Running, made: Made) -> Callable[[], object]:
    was_set = real.is_set()
    make = _MAKE[0]("Event")

    def event() -> object:
        made_now = make(_runtime(running))
        if was_set:
            made_now.set()
        return made_now

    return event


def _barrier(real: Any, name: str, running: Running, made: Made) -> Callable[[], object]:
    if real._state != 0 or real._count != 0:
        raise UsageError(
            f"{name} is a multiprocessing Barrier broken or waited on at import: a fresh barrier "
            "for each execution cannot start so; make it inside the explored function"
        )
    parties, action, timeout = real._parties, real._action, real._timeout
    barrier = _MAKE[0]("Barrier")
    return lambda: barrier(_runtime(running), parties, action, timeout)


_MAKERS: dict[type, Callable[[Any, str, Running, Made], Callable[[], object]]] = {
    _LOCK: _lock,
    _RLOCK: _lock,
    _SEMAPHORE: _semaphore,
    _BOUNDED: _semaphore,
    _CONDITION: _condition,
    _EVENT: _event,
    _BARRIER: _barrier,
}


class ImportedValue(StandIn):
    """A ``Value`` made at import: ``v.value = 1`` reaches this execution's twin too (a stand-in's
    own ``__setattr__`` would keep the value on itself)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _STAND_IN_FIELDS:
            object.__setattr__(self, name, value)
        else:
            setattr(self._target(), name, value)


class ImportedArray(ImportedValue):
    """An ``Array`` made at import: ``a[0] += 1``, ``a[:]`` and ``len(a)`` too."""

    def __getitem__(self, index: Any) -> Any:
        return self._target()[index]

    def __setitem__(self, index: Any, value: Any) -> None:
        self._target()[index] = value

    def __len__(self) -> int:
        return len(self._target())


_STAND_IN_FIELDS = frozenset({"_real", "_make", "_running", "_name", "_runtime", "_twin"})


def _shared(real: Any, name: str, running: Running, made: Made) -> StandIn:
    lock = _part(real, real.get_lock(), "lock", name, running, made)
    # its own memory, not a copy: what the program took from it at import (``get_obj()``, a
    # ``memoryview``, a ``ctypes`` pointer) is the same memory, as in CPython (a copy let a
    # locked write and an unlocked one through ``get_obj()`` be proved race-free: session 42's
    # review). Each execution starts from its bytes as the check's first found them
    # (``patch_mp_memory``, through ``patch_state``).
    memory: ctypes._CData = real.get_obj()
    first: list[patch_mp_memory.Memory | None] = []

    def twin() -> object:
        # (one held only in a list or dict, which no snapshot reaches: put back when an
        # execution first touches it, as its first did find it)
        if not first:
            first.append(patch_mp_memory.saved(memory, snapshot=False))
        elif first[0] is not None and not patch_mp_memory.restored_by_snapshot(memory):
            first[0].put_back(memory)
        return sharedctypes.synchronized(memory, lock._target())

    kind = ImportedArray if isinstance(memory, ctypes.Array) else ImportedValue
    return kind(real, twin, running, name)


def stand_in(real: object, name: str, running: Running, made: Made) -> StandIn | None:
    """The stand-in of ``multiprocessing``'s ``real`` made at import, or None for another object."""
    if isinstance(real, _SHARED):
        return _shared(real, name, running, made)
    if not isinstance(real, _OURS):
        return None
    maker = _MAKERS.get(type(real))
    if maker is None:
        raise UsageError(
            f"{name} is a {type(real).__name__} (a subclass of multiprocessing's "
            f"{type(real).__mro__[1].__name__}) made at import: it cannot be made afresh for each "
            "execution with its own arguments; make it inside the explored function"
        )
    return StandIn(real, maker(real, name, running, made), running, name)
