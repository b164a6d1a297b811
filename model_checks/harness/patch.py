"""Patch mode: run unmodified code written against plain ``threading`` / ``queue``.

``with patched(module, ...):`` temporarily replaces ``Thread``, ``Lock``, ``RLock``, ``Condition``,
``Event``, ``Semaphore``, ``BoundedSemaphore``, ``current_thread``, ``get_ident`` in ``threading``,
``Queue``, ``SimpleQueue``, ``LifoQueue`` in ``queue`` and ``time.sleep`` -- and the same
objects wherever the given modules imported them by name (``from threading import Lock``).
Inside a controlled thread the replacements create controlled objects; anywhere else (pytest,
Hypothesis, the harness itself) they hand out the real ones, so nothing else is disturbed.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from model_checks.harness.rt.scheduler import UsageError
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.sync.primitives import Queue, Semaphore, ThreadHandle

_CURRENT: list[ControlledRuntime | None] = [None]


def set_current(rt: ControlledRuntime | None) -> None:
    _CURRENT[0] = rt


_ACTIVE = [0]  # how many ``patched`` blocks are open (race detection defaults on inside one)


def active() -> bool:
    """Is patch mode on (inside a ``patched`` block)?"""
    return _ACTIVE[0] > 0


def current_runtime() -> ControlledRuntime | None:
    """The runtime of the execution whose controlled thread is running here, if any."""
    return _controlled()


def _controlled() -> ControlledRuntime | None:
    rt = _CURRENT[0]
    if rt is None or rt._ex.running_thread() is None:
        return None
    return rt


_real_thread = threading.Thread


class _MainThread:
    name = "main"
    daemon = False

    def is_alive(self) -> bool:
        return True


class Thread:
    """``threading.Thread`` as a controlled thread (subclassing and ``run()`` overrides work)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if _controlled() is None:
            if cls is Thread:
                return _real_thread(*args, **kwargs)
            raise UsageError("a patched Thread subclass can only be created inside a controlled thread")
        return super().__new__(cls)

    def __init__(
        self,
        group: None = None,
        target: Callable[..., object] | None = None,
        name: str | None = None,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        *,
        daemon: bool | None = None,
    ) -> None:
        rt = _controlled()
        assert rt is not None
        self._rt = rt
        self._target = target
        self._args = args
        self._kwargs = kwargs or {}
        self._name = name or f"Thread-{len(rt._ex.objects)}"
        self.daemon = bool(daemon)
        self._handle: ThreadHandle | None = None

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    def getName(self) -> str:
        return self._name

    @property
    def ident(self) -> int | None:
        return None if self._handle is None else self._handle.ident

    def run(self) -> None:
        if self._target is not None:
            self._target(*self._args, **self._kwargs)

    def start(self) -> None:
        if self._handle is not None:
            raise RuntimeError("threads can only be started once")
        self._handle = self._rt.start_thread(self.run, self._name)
        _THREAD_OBJECTS[id(self._rt), self._handle.ident] = self

    def join(self, timeout: float | None = None) -> None:
        if self._handle is None:
            raise RuntimeError("cannot join thread before it is started")
        self._handle.join(timeout)

    def is_alive(self) -> bool:
        return self._handle is not None and self._handle.is_alive()


_THREAD_OBJECTS: dict[tuple[int, int], Thread] = {}


def _current_thread(rt: ControlledRuntime) -> Any:
    tid = rt._ex.running_thread()
    assert tid is not None
    return _THREAD_OBJECTS.get((id(rt), tid)) or (_MainThread() if tid == 0 else rt.current_thread())


def _either(
    module: ModuleType, attr: str, controlled: Callable[..., Any]
) -> tuple[ModuleType, str, Any, Any]:
    """The replacement of ``module.attr``: inside a controlled thread ``controlled(rt, *args)``,
    anywhere else the real one with the same arguments. As (module, attr, real, replacement)."""
    real = getattr(module, attr)

    def replacement(*args: Any, **kwargs: Any) -> Any:
        rt = _controlled()
        return real(*args, **kwargs) if rt is None else controlled(rt, *args, **kwargs)

    replacement.__name__ = replacement.__qualname__ = attr
    return module, attr, real, replacement


# What a controlled thread gets instead of each name (``threading.Thread`` is a class of its own).
_REPLACEMENTS: list[tuple[ModuleType, str, Any, Any]] = [
    (threading, "Thread", _real_thread, Thread),
    _either(threading, "Lock", lambda rt: rt.lock()),
    _either(threading, "RLock", lambda rt, *args, **kwargs: rt.rlock()),
    _either(threading, "Condition", lambda rt, lock=None: rt.condition(lock)),
    _either(threading, "Event", lambda rt: rt.event()),
    _either(threading, "Semaphore", lambda rt, value=1: rt.semaphore(value)),
    _either(threading, "BoundedSemaphore", lambda rt, value=1: Semaphore(rt._ex, value, bounded=True)),
    _either(threading, "current_thread", _current_thread),
    _either(threading, "get_ident", lambda rt: 1_000_000 + (rt._ex.running_thread() or 0)),
    _either(queue, "Queue", lambda rt, maxsize=0: rt.queue(maxsize)),
    _either(queue, "SimpleQueue", lambda rt: rt.queue(0)),
    _either(queue, "LifoQueue", lambda rt, maxsize=0: Queue(rt._ex, maxsize, lifo=True)),
    _either(time, "sleep", lambda rt, seconds: rt.sleep(seconds)),
]


@contextmanager
def patched(*modules: ModuleType) -> Iterator[None]:
    """Replace the ``threading``/``queue``/``time.sleep`` names (and their by-name imports in
    ``modules``) with controlled versions for the duration of the block."""
    undo: list[tuple[Any, str, Any]] = []
    _ACTIVE[0] += 1
    try:
        for mod, attr, _real, fake in _REPLACEMENTS:
            undo.append((mod, attr, getattr(mod, attr)))
            setattr(mod, attr, fake)
        by_identity = {id(real): fake for _, _, real, fake in _REPLACEMENTS}
        for module in modules:
            for name, value in list(vars(module).items()):
                fake = by_identity.get(id(value))
                if fake is not None:
                    undo.append((module, name, value))
                    setattr(module, name, fake)
        yield
    finally:
        _ACTIVE[0] -= 1
        for target, name, value in reversed(undo):
            setattr(target, name, value)
        _THREAD_OBJECTS.clear()
