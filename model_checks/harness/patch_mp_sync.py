"""``multiprocessing``'s synchronisation objects made in a controlled thread: controlled ones.

``multiprocessing.Lock()`` is a real POSIX semaphore. Two threads of one process sharing one, with
a ``time.sleep`` inside the critical section: the sleep switched controlled threads, and the next
one's ``acquire`` blocked the one OS thread the controlled threads share, holder included: no
verdict (review 9, s25). Made in a controlled thread, ``Lock``, ``RLock``, ``Semaphore``,
``BoundedSemaphore``, ``Condition`` and ``Event`` of ``multiprocessing`` (of any context: each
context's method imports its class from ``multiprocessing.synchronize`` when called) are the
controlled ``threading`` ones, with ``multiprocessing``'s signatures (``acquire(block=True,
timeout=None)``, ``get_value()``). They are objects of this process's threads only: sending one to
another process is refused by name (so is forking, ``patch_fork``). Made outside a controlled
thread they are the real ones.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from model_checks.harness.patch_either import either
from model_checks.harness.rt.scheduler import UsageError
from model_checks.harness.runtime import ControlledRuntime

_ONE_PROCESS = (
    "a multiprocessing {kind} made in a controlled thread is modelled as one of this process's "
    "threads (lanecheck schedules threads, not processes): it cannot be sent to another process"
)


class _Shared:
    """What every one of them refuses: going to another process."""

    _kind = "object"

    def __reduce__(self) -> Any:
        raise UsageError(_ONE_PROCESS.format(kind=self._kind))


class _Lock(_Shared):
    """``multiprocessing.Lock``/``RLock`` on a controlled lock (``timeout=None`` waits for ever)."""

    def __init__(self, inner: Any, kind: str) -> None:
        self._inner = inner
        self._kind = kind

    def acquire(self, block: bool = True, timeout: float | None = None) -> bool:
        return bool(self._inner.acquire(block, -1 if timeout is None or not block else max(timeout, 0.0)))

    def release(self) -> None:
        self._inner.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<{self._kind} (controlled) {self._inner!r}>"


class _Semaphore(_Shared):
    _kind = "Semaphore"

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def acquire(self, block: bool = True, timeout: float | None = None) -> bool:
        return bool(self._inner.acquire(block, timeout))

    def release(self) -> None:
        self._inner.release()

    def get_value(self) -> int:
        return int(self._inner._value)

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


class _Condition(_Shared):
    _kind = "Condition"

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:  # acquire, release, wait, wait_for, notify, notify_all
        return getattr(self._inner, name)

    def __enter__(self) -> bool:
        return bool(self._inner.__enter__())

    def __exit__(self, *exc: object) -> None:
        self._inner.__exit__(*exc)


class _Event(_Condition):
    _kind = "Event"


def _lock(rt: ControlledRuntime, *, ctx: object = None) -> _Lock:
    return _Lock(rt.lock(), "Lock")


def _rlock(rt: ControlledRuntime, *, ctx: object = None) -> _Lock:
    return _Lock(rt.rlock(), "RLock")


def _semaphore(rt: ControlledRuntime, value: int = 1, *, ctx: object = None) -> _Semaphore:
    return _Semaphore(threading.Semaphore(value))


def _bounded(rt: ControlledRuntime, value: int = 1, *, ctx: object = None) -> _Semaphore:
    return _Semaphore(threading.BoundedSemaphore(value))


def _condition(rt: ControlledRuntime, lock: Any = None, *, ctx: object = None) -> _Condition:
    inner: Any = lock._inner if isinstance(lock, _Lock) else lock
    under: Any = inner if inner is not None else rt.rlock()
    return _Condition(threading.Condition(under))


def _event(rt: ControlledRuntime, *, ctx: object = None) -> _Event:
    return _Event(threading.Event())


_MADE: dict[str, Callable[..., Any]] = {
    "Lock": _lock,
    "RLock": _rlock,
    "Semaphore": _semaphore,
    "BoundedSemaphore": _bounded,
    "Condition": _condition,
    "Event": _event,
}


def made_at_import(kind: str) -> Callable[..., Any]:
    """The controlled ``kind`` (``Lock``, ``Event`` ...) for a twin of one made at import
    (``patch_mp_imported``), made as in a controlled thread: ``(rt, *args)``."""
    return _barrier if kind == "Barrier" else _MADE[kind]


def _barrier(rt: ControlledRuntime, parties: int, action: Any, timeout: float | None) -> Any:
    """A ``multiprocessing.Barrier``'s twin: ``threading``'s controlled one (the same class's code)."""
    return threading.Barrier(parties, action, timeout)


def at_patching() -> list[tuple[Any, str, Any, Any]]:
    """Where the program imported ``multiprocessing``: its ``synchronize`` classes, as controlled
    objects in a controlled thread (imported now, if not yet: a context's method imports it when
    called, which would be after patching)."""
    if "multiprocessing" not in sys.modules or sys.platform == "win32":
        return []
    try:
        from multiprocessing import sharedctypes, synchronize
    except ImportError:  # (no working sem_open: multiprocessing's locks are refused by CPython)
        return []
    # those made at import stand in (``patch_imported``; imported here, once ``multiprocessing`` is)
    from model_checks.harness import patch_mp_imported

    patch_mp_imported.register(made_at_import)
    return [
        *(either(synchronize, name, made) for name, made in _MADE.items()),
        *(
            either(sharedctypes, name, _synchronised(getattr(sharedctypes, name), synchronize.RLock))
            for name in ("Value", "Array")
        ),
    ]


_SHARED_MEMORY = (
    "multiprocessing.{name} synchronised by a lock made in a controlled thread: the explorer does "
    "not see the accesses of its shared memory, so it would take every order of them as the same "
    "(a lost update between two get/set pairs would go unseen): share a plain object under a "
    "threading.Lock between threads, or give {name} lock=True or lock=False"
)


def _synchronised(real: Callable[..., Any], real_rlock: Callable[..., Any]) -> Callable[..., Any]:
    """``Value``/``Array`` in a controlled thread: their own lock (``lock=True``) is the real one,
    as before patching, which the race detector sees through (review 9, s24: two threads'
    ``v.value += 1``, a read and a write each under the lock, are reported as a data race); a
    controlled one would order the accesses it cannot see, and prove the lost update absent."""

    def made(rt: ControlledRuntime, *args: Any, lock: Any = True, ctx: Any = None) -> Any:
        if isinstance(lock, _Shared):
            raise UsageError(_SHARED_MEMORY.format(name=real.__name__))
        if lock is True or lock is None:
            import multiprocessing  # (imported: the program did)

            lock = real_rlock(ctx=ctx or multiprocessing.get_context())
        return real(*args, lock=lock, ctx=ctx)

    return made
