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

So is the lock ``multiprocessing`` makes for a program there (``Value``, ``Array``,
``synchronized``: ``ctx.RLock()`` in ``sharedctypes``), and the one it is given: kept real, the OS
thread owned it, every controlled thread held it at once, and a correct ``with v.get_lock(): v.value
+= 1`` in two threads was a data race (session 42). Their memory is a plain ``ctypes`` object of
this process, not a block of ``multiprocessing.heap``: the heap's first block makes an arena (a
temporary file with a random name) in the check's first execution only, which then took steps no
later one did ("the test is not deterministic"). A ``multiprocessing.Queue`` (``JoinableQueue``)
made there is refused by name: its feeder thread, a controlled daemon thread, outlived each
execution, and ``multiprocessing``'s exit handlers then waited on its controlled condition; a
``SimpleQueue`` (a pipe, written and read by the thread calling ``put``/``get``) is explored as
the pipe it is (``patch_io_waits``).
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
        from multiprocessing import queues, sharedctypes, synchronize
    except ImportError:  # (no working sem_open: multiprocessing's locks are refused by CPython)
        return []
    # those made at import stand in (``patch_imported``; imported here, once ``multiprocessing`` is)
    from model_checks.harness import patch_mp_imported

    patch_mp_imported.register(made_at_import)
    return [
        *(either(synchronize, name, made) for name, made in _MADE.items()),
        either(sharedctypes, "_new_value", _private_memory),
        either(queues.Queue, "__init__", _refused_queue),
    ]


def _private_memory(rt: ControlledRuntime, type_: Any) -> Any:
    """``sharedctypes``' memory for a ``ctypes`` type (``RawValue``, ``Value``, ``Array``, ``copy``
    zero it or fill it next): this process's own."""
    return type_()


_QUEUE = (
    "a multiprocessing {kind} made in a controlled thread: its feeder thread outlives the "
    "execution that made it, and multiprocessing's exit handlers wait for it; between threads use "
    "queue.Queue (or multiprocessing.SimpleQueue, which has no feeder thread)"
)


def _refused_queue(rt: ControlledRuntime, queue: object, *args: Any, **kwargs: Any) -> None:
    raise UsageError(_QUEUE.format(kind=type(queue).__name__))
