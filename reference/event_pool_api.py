"""The Windows thread-pool work API on the event pool: ``CreateThreadpoolWork`` and friends.

    work = ThreadpoolWork(pool, callback, context)       # CreateThreadpoolWork(callback, context)
    work.submit(); work.submit()                          # SubmitThreadpoolWork: two callbacks
    waited = work.wait_for_callbacks(cancel_pending=True) # WaitForThreadpoolWorkCallbacks(work, TRUE)
    waited.cancelled                                      # how many submissions never started
    work.close()                                          # CloseThreadpoolWork

Each ``submit`` posts one callback to the pool (``reference.event_pool``), so a
work object submitted N times runs ``callback(context, work)`` N times, possibly
at once on several pool threads. ``wait_for_callbacks`` returns when every
submission made so far ran to its end; with ``cancel_pending`` the submissions
still in the pool's list are cancelled first (taken out, never run, counted in
``cancelled`` and traced as ``cancel items=[...]``); a submission a pool thread
has already taken counts as started and is waited for. A callback that raises is
reported to the work object's ``on_error(work, exc)`` (default: the pool's
``on_error``) and the pool thread carries on; it counts as run.

Closing follows Windows: ``close`` is allowed with callbacks pending or running,
and they still run (the work object is released after the last one); a closed
work object refuses ``submit`` and ``wait_for_callbacks`` with
``Result.INVALID_STATE`` (on Windows using it is undefined), and a second
``close`` too. The usual order is wait, then close.

``wait_for_callbacks`` from a pool thread (a callback) is refused with
INVALID_STATE: it could wait for itself, or hold the thread a waited-for
callback needs (Windows deadlocks there). On a pool that failed it returns
``Result.UNKNOWN`` instead of waiting for callbacks that will never settle.
Submissions the pool's ``stop(StopMode.DISCARD)`` dropped count as
``discarded``, not cancelled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import arguments
from .event_pool import EventPool
from .results import Result
from .win32_events import WAIT_OBJECT_0

Callback = Callable[[Any, "ThreadpoolWork"], object]


@dataclass(frozen=True)
class Waited:
    """What ``wait_for_callbacks`` did: its result and how many submissions it cancelled."""

    result: Result
    cancelled: int = 0


class ThreadpoolWork:
    """A work object: a callback and its context, submitted to one pool any number of times.

    Counts (read them after a wait): ``submitted``, ``returned``, ``raised``,
    ``cancelled`` (by ``wait_for_callbacks(cancel_pending=True)``) and
    ``discarded`` (by the pool's stop); ``pending`` is the submissions not yet
    settled.
    """

    def __init__(
        self,
        pool: EventPool,
        callback: Callback,
        context: Any = None,
        *,
        name: str = "",
        on_error: Callable[[ThreadpoolWork, BaseException], None] | None = None,
    ) -> None:
        arguments.instance("pool", pool, EventPool)
        arguments.function("callback", callback)
        arguments.text("name", name)
        arguments.function("on_error", on_error, optional=True)
        self.pool = pool
        self.callback = callback
        self.context = context
        self.name = name or f"work@{id(self):x}"
        self._on_error = on_error
        self._lock = pool._lock  # the pool's list lock guards every count below
        # Set while no submission is pending: manual-reset, reset by the submission that makes one.
        self._quiet = pool._kernel.create_event(
            manual_reset=True, initial_state=True, name=f"{self.name}.quiet"
        )
        self._closed = False
        self.submitted = 0
        self.returned = 0
        self.raised = 0
        self.cancelled = 0
        self.discarded = 0

    def __repr__(self) -> str:
        return f"ThreadpoolWork({self.name}, pending={self.pending}{', closed' if self._closed else ''})"

    def __call__(self) -> object:
        """One callback (what a pool thread runs for each submission)."""
        return self.callback(self.context, self)

    @property
    def pending(self) -> int:
        """Submissions not yet run to their end, cancelled or discarded (a plain read, for checkers)."""
        return self.submitted - self.returned - self.raised - self.cancelled - self.discarded

    @property
    def closed(self) -> bool:
        with self._lock:
            return self._closed

    # -- the API ---------------------------------------------------------------------------

    def submit(self) -> Result:
        """``SubmitThreadpoolWork``: one more callback. INVALID_STATE if closed or the pool is stopping."""
        return self.pool._post(self, self)

    def wait_for_callbacks(self, cancel_pending: bool = False) -> Waited:
        """``WaitForThreadpoolWorkCallbacks``: wait until no submission is pending or running.

        With ``cancel_pending``, the submissions not yet taken by a pool thread
        are cancelled first (never run). INVALID_ARGUMENT if ``cancel_pending``
        is not a bool; INVALID_STATE if the work object is closed or the caller
        is a pool thread; UNKNOWN if the pool failed.
        """
        if not isinstance(cancel_pending, bool):
            return Waited(Result.INVALID_ARGUMENT)
        pool = self.pool
        if pool.is_pool_thread():
            return Waited(Result.INVALID_STATE)
        tracer = pool._tracer
        with self._lock:
            if self._closed:
                return Waited(Result.INVALID_STATE)
            dropped = pool._cancel_listed(self) if cancel_pending else []
            if tracer is not None:
                tracer.emit(
                    pool._runtime.thread_name(),
                    "cancel",
                    {"items": [e.index for e in dropped], "work": self.name},
                )
        woke = pool._kernel.wait_for_multiple((self._quiet, pool._failed), False)
        return Waited(Result.SUCCESS if woke == WAIT_OBJECT_0 else Result.UNKNOWN, len(dropped))

    def close(self) -> Result:
        """``CloseThreadpoolWork``: no more submissions; pending and running callbacks still run."""
        with self._lock:
            if self._closed:
                return Result.INVALID_STATE
            self._closed = True
            return Result.SUCCESS

    # -- the pool's side (under its list lock) ---------------------------------------------

    def _admit(self) -> bool:
        if self._closed:
            return False
        if self.pending == 0:
            self._quiet.reset()
        self.submitted += 1
        return True

    def _settled(self, fate: str) -> None:
        if fate == "returned":
            self.returned += 1
        elif fate == "raised":
            self.raised += 1
        elif fate == "cancelled":
            self.cancelled += 1
        else:
            self.discarded += 1
        if self.pending == 0:
            self._quiet.set()

    def _report_error(self, error: BaseException) -> bool:
        on_error = self._on_error
        if on_error is None:
            return False
        on_error(self, error)
        return True


__all__ = ["Callback", "ThreadpoolWork", "Waited"]
