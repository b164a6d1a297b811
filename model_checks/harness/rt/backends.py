"""Back ends: how a controlled thread is suspended and resumed.

Exactly one controlled thread runs at a time. The scheduler calls ``resume(tid, value)``; the
thread runs until it announces its next operation with ``suspend(message)`` (or finishes), and
that message is what ``resume`` returns. Both back ends use only the raw ``_thread`` module, so
patch mode (which replaces names in ``threading``) never affects them.
"""

from __future__ import annotations

import _thread
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol

import greenlet


class Abort(BaseException):
    """Raised inside a controlled thread when its execution is abandoned."""


@dataclass
class Done:
    """A thread's body returned (``error`` is None) or raised."""

    error: BaseException | None
    value: object = None


ABORT = object()  # resume value: unwind with Abort


class Backend(Protocol):
    def spawn(self, tid: int, body: Callable[[], object]) -> None: ...

    def resume(self, tid: int, value: object) -> object: ...

    def suspend(self, message: object) -> object: ...

    def current(self) -> int | None: ...

    def frame(self, tid: int) -> FrameType | None: ...

    def close(self) -> None: ...


def _run(body: Callable[[], object]) -> Done:
    try:
        return Done(None, body())
    except BaseException as exc:  # every failure of a controlled thread is reported, never lost
        return Done(exc)


class GreenletBackend:
    """Controlled threads are greenlets; the scheduler is the greenlet that called ``check``."""

    def __init__(self) -> None:
        self._parent = greenlet.getcurrent()
        self._greenlets: dict[int, Any] = {}
        self._ids: dict[Any, int] = {}

    def spawn(self, tid: int, body: Callable[[], object]) -> None:
        def start(value: object) -> Done:
            if value is ABORT:
                return Done(Abort())
            return _run(body)

        g = greenlet.greenlet(start, parent=self._parent)
        self._greenlets[tid] = g
        self._ids[g] = tid

    def resume(self, tid: int, value: object) -> object:
        return self._greenlets[tid].switch(value)

    def suspend(self, message: object) -> object:
        return self._parent.switch(message)

    def current(self) -> int | None:
        return self._ids.get(greenlet.getcurrent())

    def frame(self, tid: int) -> FrameType | None:
        g = self._greenlets.get(tid)
        return None if g is None else g.gr_frame

    def close(self) -> None:
        self._greenlets.clear()
        self._ids.clear()


class ThreadBackend:
    """Controlled threads are real OS threads; a baton (one raw lock per thread) lets one run."""

    def __init__(self) -> None:
        self._batons: dict[int, Any] = {}
        self._ids: dict[int, int] = {}
        self._back = _thread.allocate_lock()
        self._back.acquire()
        self._slot: object = None

    def spawn(self, tid: int, body: Callable[[], object]) -> None:
        baton = _thread.allocate_lock()
        baton.acquire()
        self._batons[tid] = baton

        def main() -> None:
            baton.acquire()
            self._ids[_thread.get_ident()] = tid
            value = self._slot
            done = Done(Abort()) if value is ABORT else _run(body)
            self._ids.pop(_thread.get_ident(), None)
            self._slot = done
            self._back.release()

        _thread.start_new_thread(main, ())

    def resume(self, tid: int, value: object) -> object:
        self._slot = value
        self._batons[tid].release()
        self._back.acquire()
        return self._slot

    def suspend(self, message: object) -> object:
        tid = self._ids[_thread.get_ident()]
        self._slot = message
        self._back.release()
        self._batons[tid].acquire()
        return self._slot

    def current(self) -> int | None:
        return self._ids.get(_thread.get_ident())

    def frame(self, tid: int) -> FrameType | None:
        for ident, t in list(self._ids.items()):
            if t == tid:
                return sys._current_frames().get(ident)
        return None

    def close(self) -> None:
        self._batons.clear()


def make_backend(name: str) -> Backend:
    if name == "greenlet":
        return GreenletBackend()
    if name == "threads":
        return ThreadBackend()
    raise ValueError(f"unknown backend {name!r}: use 'greenlet' or 'threads'")


def format_frame(frame: FrameType | None, skip_prefixes: tuple[str, ...]) -> list[str]:
    """The user part of a suspended thread's stack, innermost last."""
    if frame is None:
        return []
    entries = traceback.extract_stack(frame)
    kept = [e for e in entries if not e.filename.startswith(skip_prefixes)]
    return [f'  File "{e.filename}", line {e.lineno}, in {e.name}\n    {e.line or ""}' for e in kept]
