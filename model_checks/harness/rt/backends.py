"""Back ends: how a controlled thread is suspended and resumed.

Exactly one controlled thread runs at a time. The *driver* (the caller of ``check``) starts a
thread with ``resume(tid, value)``, which returns when a controlled thread hands control back
with ``suspend(message)`` or a thread's body ends (``resume`` then returns what the body
returned). Between those, controlled threads pass control among themselves with
``switch(tid, value)``: the scheduler's decisions are made on the stack of the thread that
announced an operation, so a thread that is chosen again goes on without any switch, and one
that is not hands over straight to the chosen one. Both back ends use only the raw ``_thread``
module, so patch mode (which replaces names in ``threading``) never affects them.
"""

from __future__ import annotations

import _thread
import sys
import traceback
import weakref
from collections.abc import Callable
from types import FrameType
from typing import Any, Protocol

import greenlet

from model_checks.harness.rt.repr_lists import DETACHED, ReprLists, hand_over

# The OS thread's identity, taken before patch mode replaces ``_thread.get_ident`` (whose
# controlled stand-in asks which controlled thread runs: this)
_os_thread = _thread.get_ident


class Abort(BaseException):
    """Raised inside a controlled thread when its execution is abandoned."""


class Done:
    """A thread's body returned (``error`` is None) or raised.

    (Not a dataclass: a dataclass's ``__init__`` is code made by ``exec`` (``<string>``), which the
    race detector traces as a program's, so each thread's end cost two handler calls.)"""

    __slots__ = ("error", "value")

    def __init__(self, error: BaseException | None, value: object = None) -> None:
        self.error = error
        self.value = value

    def __repr__(self) -> str:
        return f"Done(error={self.error!r}, value={self.value!r})"


ABORT = object()  # resume value: unwind with Abort
_getcurrent = greenlet.getcurrent


Body = Callable[[object], object]  # called with the first value the thread is resumed with


class Backend(Protocol):
    def spawn(self, tid: int, body: Body) -> None: ...

    def resume(self, tid: int, value: object) -> object:
        """Driver: run ``tid`` with ``value`` until control comes back to the driver."""
        ...

    def switch(self, tid: int, value: object) -> object:
        """Controlled thread: run ``tid`` with ``value``; return what this thread is resumed with."""
        ...

    def suspend(self, message: object) -> object:
        """Controlled thread: give ``message`` to the driver; return what this thread is resumed with."""
        ...

    def current(self) -> int | None: ...

    # ``ids.get(whoami())`` is ``current()`` without the call (the scheduler asks at every step)
    ids: dict[Any, int]
    whoami: Callable[[], Any]
    # Optional, ``direct``: a dict of objects by thread id whose ``switch(value)`` does what
    # ``switch(tid, value)`` and ``resume(tid, value)`` do (greenlets); the scheduler then calls
    # it itself (``GreenletBackend``)

    def frame(self, tid: int) -> FrameType | None: ...

    def close(self) -> None: ...


class _Reusable(greenlet.greenlet):  # type: ignore[misc]
    """A greenlet that runs one controlled thread's body after another.

    A new greenlet per controlled thread cost an mmap, its page faults and an munmap of its 16 KiB
    frame stack (CPython's per-thread data stack, which greenlet keeps per greenlet): about 7% of
    the standard scenario. A finished body hands its message to the driver exactly as a returning
    greenlet would (``parent.switch``); the greenlet then waits, idle, for its next body."""

    def __init__(self, parent: Any) -> None:
        super().__init__(self._loop, parent)
        self.body: Body | None = None
        self.idle = False

    def _loop(self, first: object) -> None:
        value = first
        while True:
            body, self.body = self.body, None
            assert body is not None
            message = body(value)
            # (idle, this frame would keep the body and what it holds until its next use, in a
            # later execution: objects freed there, their finalizers run in its middle)
            body = None
            self.idle = True
            value = self.parent.switch(message)
            self.idle = False


# idle reusable greenlets, per driver greenlet (greenlets belong to the OS thread of their parent)
_POOLS: weakref.WeakKeyDictionary[Any, list[_Reusable]] = weakref.WeakKeyDictionary()
# the last driver's pool: a check makes a back end per execution, from the same driver, and the
# weak dictionary's look-up is Python code
_LAST_POOL: list[tuple[weakref.ref[Any], list[_Reusable]]] = []


def _pool_of(parent: Any) -> list[_Reusable]:
    if _LAST_POOL:
        ref, pool = _LAST_POOL[0]
        if ref() is parent:
            return pool
    found = _POOLS.get(parent)
    if found is None:
        found = _POOLS[parent] = []
    _LAST_POOL[:] = [(weakref.ref(parent), found)]
    return found


class GreenletBackend:
    """Controlled threads are greenlets; the scheduler is the greenlet that called ``check``."""

    def __init__(self) -> None:
        self._parent = greenlet.getcurrent()
        self._greenlets: dict[int, Any] = {}
        # the same dictionary, for the compiled scheduler: it switches to a thread's greenlet
        # itself (``switch`` and ``resume`` below, without a Python call around each switch)
        self.direct = self._greenlets
        self.ids: dict[Any, int] = {}
        self.whoami = _getcurrent
        self._pool = _pool_of(self._parent)
        # its threads' repr lists kept apart (the execution's too: ``repr_guard.on_execution``)
        self.reprs: ReprLists = DETACHED

    def spawn(self, tid: int, body: Body) -> None:
        if self._pool:
            g = self._pool.pop()
            g.gr_context = None  # as a new greenlet: nothing of the last body's context variables
        else:
            g = _Reusable(self._parent)
        g.body = body
        self._greenlets[tid] = g
        self.ids[g] = tid

    def resume(self, tid: int, value: object) -> object:
        # a finished greenlet returns to its parent, the driver: the body's result arrives here
        return self._greenlets[tid].switch(value)

    def switch(self, tid: int, value: object) -> object:
        return self._greenlets[tid].switch(value)

    def suspend(self, message: object) -> object:
        return hand_over(self.reprs, self.ids[_getcurrent()], self._parent, message)

    def current(self) -> int | None:
        return self.ids.get(_getcurrent())

    def frame(self, tid: int) -> FrameType | None:
        g = self._greenlets.get(tid)
        return None if g is None else g.gr_frame

    def close(self) -> None:
        # a greenlet whose body returned is idle in its loop: kept for the next execution (one
        # still inside its body, a thread that swallowed every Abort, is left to the collector)
        pool = self._pool
        for g in self._greenlets.values():
            if g.idle and g.body is None:
                pool.append(g)
        self._greenlets.clear()
        self.ids.clear()


class ThreadBackend:
    """Controlled threads are real OS threads; a baton (one raw lock per thread) lets one run."""

    def __init__(self) -> None:
        self._batons: dict[int, Any] = {}
        self.ids: dict[Any, int] = {}
        self.whoami = _os_thread
        self._back = _thread.allocate_lock()
        self._back.acquire()
        self._slot: object = None

    def spawn(self, tid: int, body: Body) -> None:
        baton = _thread.allocate_lock()
        baton.acquire()
        self._batons[tid] = baton

        def main() -> None:
            baton.acquire()
            self.ids[_os_thread()] = tid
            try:
                message = body(self._slot)
            except BaseException as exc:  # never leave the driver waiting for the baton
                message = Done(exc)
            self.ids.pop(_os_thread(), None)
            self._slot = message
            self._back.release()

        _thread.start_new_thread(main, ())

    def resume(self, tid: int, value: object) -> object:
        self._slot = value
        self._batons[tid].release()
        self._back.acquire()
        return self._slot

    def switch(self, tid: int, value: object) -> object:
        me = self.ids[_os_thread()]
        self._slot = value
        self._batons[tid].release()
        self._batons[me].acquire()
        return self._slot

    def suspend(self, message: object) -> object:
        tid = self.ids[_os_thread()]
        self._slot = message
        self._back.release()
        self._batons[tid].acquire()
        return self._slot

    def current(self) -> int | None:
        return self.ids.get(_os_thread())

    def frame(self, tid: int) -> FrameType | None:
        for ident, t in list(self.ids.items()):
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
