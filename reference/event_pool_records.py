"""What an ``EventPool`` (``reference.event_pool``) is built from: the records of its work list and
thread list, the owner a pooled work may have, its arguments' checks, its default error hook, and
its trace: the header and the events.

Trace events
------------

With a tracer, ``tracer.begin({"threads": n})`` is called once (the header's
``design`` is ``"event-pool"``, see ``header``) and then
``tracer.emit(thread, event, fields)`` for each step; with no tracer each emit
is skipped behind one ``is not None`` test. ``item`` is a work's index in the
work array: 0, 1, 2, ... in posting order over the pool's life. Pool threads
are named ``t0``, ``t1``, ...; the others are whatever ``runtime.thread_name()``
says (the poster's, the stopper's).

Each event as ``event`` (thread) ``fields`` -- when it is emitted:

* ``post`` (poster) ``item`` (int; None if refused), ``to`` (the picked thread's
  name; None: none was idle), ``result`` (``ok``, ``invalid_state``,
  ``invalid_argument``) -- under the list lock (``invalid_argument``: before it);
* ``signal`` (poster) ``to`` -- after the lock, just before ``SetEvent``, so
  before the wake it causes;
* ``wait`` (pool thread) no fields -- just before ``WaitForMultipleObjects``;
* ``wake`` (pool thread) ``result``: ``event``, ``stop`` or ``timeout`` -- just
  after the wait returned;
* ``take`` (pool thread) ``item``: the work taken, or None (the list was empty:
  the thread marked itself idle) -- under the list lock;
* ``run`` (pool thread) ``item`` -- just before the work is called;
* ``done`` (pool thread) ``item``, ``raised`` (bool) -- just after it returned
  or raised;
* ``cancel`` (the thread in ``wait_for_callbacks``) ``items``: the works taken
  out of the list (possibly none), ``work``: the work object's name -- under the
  list lock;
* ``stop_begin`` (stopper) ``mode`` (``drain``, ``discard``) -- under the list
  lock, admission closed;
* ``discard`` (stopper) ``items``: the works taken out of the list -- under the
  list lock, right after ``stop_begin`` in discard mode; for a failed pool,
  after the threads were joined (the listed works, then those taken but never
  run);
* ``stop_end`` (stopper) ``mode``, ``result`` (``ok``, ``failed``) -- after
  every thread was joined.

So a trace obeys: each ``take``/``cancel``/``discard`` hands out indices
``next, next + 1, ...`` in order (taken items one at a time, cancelled and
discarded ones in a block); a ``signal to=t`` precedes the ``wake result=event``
it causes; a pool thread's own events follow ``wait wake (take (run done)?)*``
with its last ``take`` before a ``wait`` being ``item=None``; ``run``/``done``
of an item follow its ``take`` on the same thread.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from typing import Protocol

from . import arguments
from .runtime import ThreadHandle
from .tracing import TRACE_NAME, TRACE_VERSION, Fields
from .win32_events import Win32Event

DESIGN = "event-pool"
# The pool's logger, named as before the module was split (users may filter on it).
_log = logging.getLogger("reference.event_pool")

Work = Callable[[], object]

# Where a pool thread is, for checkers (read by harness invariants, written by the thread only).
WAITING, TAKING, CALLING, EXITED = "waiting", "taking", "calling", "exited"


def header(config: Mapping[str, int]) -> Fields:
    """The header object of an event-pool trace."""
    return {"trace": TRACE_NAME, "version": TRACE_VERSION, "design": DESIGN, "config": dict(config)}


def log_error(work: object, error: BaseException) -> None:
    """The default ``on_error``: log what a work raised."""
    _log.error("work %r raised", work, exc_info=(type(error), error, error.__traceback__))


class Owner(Protocol):
    """Who a pooled work belongs to (a work object of ``reference.event_pool_api``).

    The pool calls ``_admit`` and ``_settled`` under its list lock, so the
    owner's counts change in the same critical sections as the list.
    """

    name: str

    def _admit(self) -> bool:
        """One more work of the owner is being posted: True to accept it, False to refuse it."""
        ...

    def _settled(self, fate: str) -> None:
        """One of its works settled: ``returned``, ``raised``, ``cancelled`` or ``discarded``."""
        ...

    def _report_error(self, error: BaseException) -> bool:
        """Report what one of its works raised; False: let the pool's ``on_error`` have it."""
        ...


class Entry:
    """One posted work in the work array."""

    __slots__ = ("cancelled", "index", "owner", "raised", "work")

    def __init__(self, work: Work, index: int, owner: Owner | None) -> None:
        self.work = work
        self.index = index  # its position in the array over the pool's life: the trace's ``item``
        self.owner = owner
        self.cancelled = False  # taken out of the list by a cancel: skipped by every take
        self.raised = False  # it was run and raised


def finished_fate(entry: Entry) -> str:
    """How a work that was run ended (``Entry.raised``)."""
    return "raised" if entry.raised else "returned"


class PoolThread:
    """A thread-list record: the thread's event, its idle flag, and what it holds (for checkers)."""

    __slots__ = ("event", "handle", "ident", "idle", "in_hand", "name", "state")

    def __init__(self, name: str, event: Win32Event) -> None:
        self.name = name
        self.event = event
        self.idle = True  # guarded by the list lock
        self.state = WAITING  # written by the thread itself
        self.in_hand: Entry | None = None  # taken and not yet started (reported if the pool fails)
        self.handle: ThreadHandle | None = None
        self.ident: object = None  # the thread's identity, recorded (under the lock) at its first take


def checked_timeout(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"wait_timeout must be None or a number of seconds, got {arguments.show(value)}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"wait_timeout must be a finite number of seconds above 0, got {value!r}")
    return float(value)
