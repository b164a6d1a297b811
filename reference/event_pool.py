"""The event-object pool (design 003): a work list and one auto-reset Win32 event per pool thread.

    pool = EventPool(threads=4)
    pool.post(work)                  # Result.SUCCESS; INVALID_STATE once stop began; INVALID_ARGUMENT
    pool.stop(StopMode.DRAIN)        # run every posted work, then close the pool and join its threads

The seed's pool (seeds.md, 003; the spec is ``spec/event_pool.py``, the design
``docs/event-pool.md``), on the runtime seam and the Win32 events of
``reference.win32_events``:

* **the work list** is an array of posted works and ``next``, the index of the
  next one to hand out (the list is ``works[next:]``), guarded by the *list
  lock*;
* **the thread list**: each pool thread has its own auto-reset event and an
  ``idle`` flag. A thread waits with ``WaitForMultipleObjects({its event,
  stop}, any)``; ``stop`` is one manual-reset event that ``stop()`` sets;
* **a post** appends the work and, under the same lock, picks an *idle* thread
  (the most recently idle one: a stack) and clears its flag; after the lock it
  ``SetEvent``s that thread's event. With no idle thread it signals nobody: the
  work waits in the list;
* **a woken thread** takes works (``GetWorkFromPool``: under the lock,
  ``works[next]`` and ``next + 1``) and runs them *until the list is empty* —
  the ``while`` — so a work posted while every thread was busy is taken by the
  first thread that finishes its callback, **before** it waits again. Finding
  the list empty, the thread marks itself idle *in the same critical section*,
  then waits. A wait that returns to an empty list (the work was taken by a
  thread that finished first, or cancelled, or the wait timed out) just goes
  back to waiting: the pool never relies on a timeout.

These are the spec's choices (idle first, the all-busy rule, the idle mark under
the lock, ``while`` not ``if``); ``model_checks/designs/event_pool`` checks them
on this code under the harness, with one seeded bug per choice.

A work that raises is reported to ``on_error(work, exc)`` (default: logged) and
its thread carries on. ``stop(StopMode.DRAIN)`` closes admission, waits until
every posted work ran, sets ``stop`` and joins the threads;
``stop(StopMode.DISCARD)`` also takes the works still in the list out and
reports each to ``on_discard(work)`` (works already taken still run). A stop
called from a pool thread is refused (it would wait for itself). If the pool's
own code raises (a bug, a broken runtime; never a work), the pool *fails*:
posts are refused, no thread takes work any more, and ``stop`` reports every
accepted work not yet started to ``on_discard`` (and in ``failure.discarded``)
and returns ``Result.UNKNOWN``.

The Windows thread-pool API (work objects submitted N times, waiting for their
callbacks, cancelling the pending ones) is ``reference.event_pool_api``, built on
this pool's seams ``_post`` and ``_cancel_listed``.

What a pool thread does is ``reference.event_pool_threads``; the records, the arguments' checks
and the trace events (described there) are ``reference.event_pool_records``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from . import arguments
from .arguments import MAX_WORKERS
from .event_pool_records import (
    CALLING,
    DESIGN,
    EXITED,
    TAKING,
    WAITING,
    Entry,
    Owner,
    PoolThread,
    Work,
    checked_timeout,
    finished_fate,
    header,
    log_error,
)
from .event_pool_threads import PoolThreadLoop
from .failure import FailureState, SchedulerFailure
from .results import Result
from .runtime import DEFAULT_RUNTIME, Runtime
from .scheduler import StopMode
from .tracing import Tracer
from .win32_events import Win32Event, Win32Kernel

_log = logging.getLogger(__name__)

_SUCCESS = Result.SUCCESS


class EventPool(PoolThreadLoop, FailureState):
    """The seed's pool: a locked work list, one auto-reset event per thread, idle-first SetEvent.

    ``threads`` pool threads start at once, idle, each waiting on its event.
    ``on_error(work, exc)`` gets what a work raised (default: log it);
    ``on_discard(work)`` each work dropped by ``stop(StopMode.DISCARD)`` or by
    the stop of a failed pool. ``wait_timeout`` (seconds; None: INFINITE) is the
    timeout of a pool thread's wait: the pool does not need one (a timed-out
    wait looks at the list and waits again); it exists so checkers can explore
    that path. Used as a context manager, leaving the block stops the pool (drain,
    or discard when the block raised; a failed pool then raises
    ``SchedulerFailed``).

    Arguments are checked strictly (``reference.arguments``): a wrong type is a
    ``TypeError``, a wrong value a ``ValueError``, each naming the field.
    """

    def __init__(
        self,
        threads: int,
        *,
        runtime: Runtime | None = None,
        tracer: Tracer | None = None,
        on_error: Callable[[Any, BaseException], None] | None = None,
        on_discard: Callable[[Any], None] | None = None,
        wait_timeout: float | None = None,
    ) -> None:
        count = arguments.count("threads", threads, maximum=MAX_WORKERS)
        arguments.runtime(runtime)
        arguments.tracer(tracer)
        arguments.function("on_error", on_error, optional=True)
        arguments.function("on_discard", on_discard, optional=True)
        self.wait_timeout = checked_timeout(wait_timeout)
        self._runtime = rt = DEFAULT_RUNTIME if runtime is None else runtime
        self._tracer = tracer
        self._on_error = log_error if on_error is None else on_error
        self._on_discard = on_discard
        self._kernel = Win32Kernel(rt, name="event-pool")
        self._lock = rt.lock(name="pool.list")
        # Guarded by the list lock.
        self._works: list[Entry] = []
        self._next = 0  # index into _works of the next work to hand out
        self._base = 0  # the trace index of _works[0] (the handed-out head is dropped now and then)
        self._unsettled = 0  # posted works not yet run to their end, cancelled or discarded
        self._idle: list[PoolThread] = []  # the idle threads, most recently idle last
        self._stopping = False
        self._stopped = False
        self._pool_threads: set[object] = set()  # the identities of the pool threads that took work
        self._failure: SchedulerFailure | None = None
        self._stop_event = self._kernel.create_event(manual_reset=True, name="stop")
        self._quiet = self._kernel.create_event(manual_reset=True, name="quiet")  # set: a drain may end
        self._failed = self._kernel.create_event(manual_reset=True, name="failed")  # set: the pool failed
        self.threads: list[PoolThread] = [PoolThread(f"t{i}", self._make_event(i)) for i in range(count)]
        self._idle.extend(reversed(self.threads))  # t0 is picked first
        if tracer is not None:
            tracer.begin({"threads": count})
        started: list[PoolThread] = []
        try:
            for me in self.threads:
                me.handle = rt.start_thread(partial(self._thread_main, me), me.name)
                started.append(me)
        except BaseException:
            self._stop_event.set()  # do not leave started threads behind a constructor that failed
            for me in started:
                assert me.handle is not None
                me.handle.join()
            raise

    def __repr__(self) -> str:
        state = "stopped" if self._stopped else "stopping" if self._stopping else "running"
        return f"EventPool(threads={len(self.threads)}, {state}{', failed' if self._failure else ''})"

    # -- seams (each overridden alone by a seeded bug in model_checks/designs/event_pool) ------

    def _make_event(self, i: int) -> Win32Event:
        """Thread i's event: auto-reset, unsignalled (a successful wait consumes the signal)."""
        return self._kernel.create_event(manual_reset=False, name=f"t{i}.event")

    def _pick_thread(self) -> PoolThread | None:
        """Under the list lock: the idle thread a post wakes (the most recently idle), its flag cleared."""
        idle = self._idle
        if not idle:
            return None
        me = idle.pop()
        me.idle = False
        return me

    def _signal(self, me: PoolThread) -> None:
        """After the list lock: SetEvent on the picked thread's event."""
        me.event.set()

    def _wait(self, me: PoolThread) -> int:
        """WaitForMultipleObjects({its event, stop}, any[, timeout])."""
        return self._kernel.wait_for_multiple((me.event, self._stop_event), False, self.wait_timeout)

    def _next_work(self, me: PoolThread, finished: Entry | None) -> Entry | None:
        """GetWorkFromPool: settle the work just run, then take the next one or mark this thread idle.

        One critical section of the list lock: finding the list empty and
        marking the thread idle are one step, so a post either sees the thread
        idle (and signals it) or put its work in the list before the look.
        """
        with self._lock:
            if finished is not None:
                self._settle(finished, finished_fate(finished))
            return self._take(me)

    def _after_wake(self, me: PoolThread) -> None:
        """The wait returned (its event or a timeout): run works while the list holds some (the ``while``)."""
        self._run_while_listed(me, None)

    def _run_while_listed(self, me: PoolThread, finished: Entry | None) -> None:
        """Take and run works until a take finds the list empty; ``finished``: a work just run."""
        while True:
            entry = self._next_work(me, finished)
            if entry is None:
                return
            self._run(me, entry)
            finished = entry

    def _settle(self, entry: Entry, fate: str) -> None:
        """Under the list lock: one more work ran to its end (or was cancelled or discarded)."""
        self._unsettled -= 1
        if entry.owner is not None:
            entry.owner._settled(fate)
        if self._unsettled == 0 and self._stopping:
            self._quiet.set()

    # -- posting ---------------------------------------------------------------------------

    def post(self, work: Work) -> Result:
        """Append ``work`` (a callable taking no argument) and wake an idle thread if there is one.

        SUCCESS: accepted; it will run, or be reported to ``on_discard``.
        INVALID_ARGUMENT (not callable) and INVALID_STATE (stop began, or the
        pool failed) leave it with the caller.
        """
        if not callable(work):
            return self._refused(Result.INVALID_ARGUMENT)
        return self._post(work, None)

    def _refused(self, result: Result) -> Result:
        """A post refused with ``result``: its ``post`` event (no item, nobody woken), then the result."""
        tracer = self._tracer
        if tracer is not None:
            tracer.emit(
                self._runtime.thread_name(), "post", {"item": None, "to": None, "result": result.name.lower()}
            )
        return result

    def _post(self, work: Work, owner: Owner | None) -> Result:
        """``post`` for a work checked already, on behalf of ``owner`` (the thread-pool API)."""
        tracer = self._tracer
        with self._lock:
            # Refused under the lock, so the event stands where admission was decided.
            if self._stopping or self._failure is not None or (owner is not None and not owner._admit()):
                return self._refused(Result.INVALID_STATE)
            works = self._works
            entry = Entry(work, self._base + len(works), owner)
            works.append(entry)
            self._unsettled += 1
            me = self._pick_thread()
            if tracer is not None:
                tracer.emit(
                    self._runtime.thread_name(),
                    "post",
                    {"item": entry.index, "to": None if me is None else me.name, "result": "ok"},
                )
        if me is not None:
            if tracer is not None:
                tracer.emit(self._runtime.thread_name(), "signal", {"to": me.name})
            self._signal(me)
        return _SUCCESS

    def _cancel_listed(self, owner: Owner | None, fate: str = "cancelled") -> list[Entry]:
        """Under the list lock: take ``owner``'s works (every work: None) out of the list, settled.

        They are marked cancelled (a take skips them) and ``next`` moves past
        the cancelled head of the list.
        """
        works = self._works
        dropped = [e for e in works[self._next :] if not e.cancelled and (owner is None or e.owner is owner)]
        for e in dropped:
            e.cancelled = True
            self._settle(e, fate)
        i = self._next
        while i < len(works) and works[i].cancelled:
            i += 1
        self._next = i
        return dropped

    # -- introspection ---------------------------------------------------------------------

    def queued(self) -> int:
        """Works in the list (posted, not yet taken or cancelled)."""
        with self._lock:
            return sum(1 for e in self._works[self._next :] if not e.cancelled)

    def listed(self) -> int:
        """``queued`` without the lock, for checkers reading between steps."""
        return sum(1 for e in self._works[self._next :] if not e.cancelled)

    @property
    def thread_count(self) -> int:
        return len(self.threads)

    @property
    def running(self) -> bool:
        """True until a stop begins or the pool fails."""
        with self._lock:
            return not self._stopping and self._failure is None

    @property
    def stopped(self) -> bool:
        """True once a stop has finished."""
        with self._lock:
            return self._stopped

    @property
    def failed(self) -> bool:
        """True once the pool's own code raised (see ``failure``)."""
        with self._lock:
            return self._failure is not None

    @property
    def failure(self) -> SchedulerFailure | None:
        """The first fault of the pool's own code and, after stop, the works it discarded."""
        with self._lock:
            return self._failure

    def is_pool_thread(self) -> bool:
        """Is the caller one of this pool's threads?"""
        me = self._runtime.current_thread()
        with self._lock:
            return me in self._pool_threads

    # -- failure ---------------------------------------------------------------------------

    def _fail(self, error: BaseException) -> None:
        """Our own code raised: refuse posts, take no more work, and let a waiting stop go on."""
        _log.error("the event pool failed", exc_info=(type(error), error, error.__traceback__))
        with self._lock:
            if self._failure is None:
                self._failure = SchedulerFailure(error)
        self._quiet.set()
        self._failed.set()

    # -- stop ------------------------------------------------------------------------------

    def stop(self, mode: StopMode = StopMode.DRAIN) -> Result:
        """Stop the pool and join its threads; SUCCESS if it is (already) stopped.

        INVALID_ARGUMENT if ``mode`` is not a ``StopMode``; INVALID_STATE from a
        pool thread (it would wait for itself) or while another stop is in
        progress; UNKNOWN if the pool failed (every accepted work not started
        went to ``on_discard``).
        """
        if not isinstance(mode, StopMode):
            return Result.INVALID_ARGUMENT
        me = self._runtime.current_thread()
        thread = self._runtime.thread_name()
        tracer = self._tracer
        with self._lock:
            if self._stopped:
                return _SUCCESS if self._failure is None else Result.UNKNOWN
            if self._stopping or me in self._pool_threads:
                return Result.INVALID_STATE
            self._stopping = True
            if tracer is not None:
                tracer.emit(thread, "stop_begin", {"mode": mode.value})
            dropped = self._discard_listed(thread) if mode is StopMode.DISCARD else []
            drained = self._unsettled == 0
        self._offer_discarded(dropped)
        if not drained:
            self._quiet.wait()  # set by the thread settling the last work, or by a failure
        self._stop_event.set()
        for t in self.threads:
            assert t.handle is not None
            t.handle.join()
        with self._lock:
            failure = self._failure
            if failure is not None:
                # The threads are joined: what is left in the list or in a hand never started.
                dropped = self._discard_listed(thread)
                held = [t.in_hand for t in self.threads if t.in_hand is not None]
                for t in self.threads:
                    t.in_hand = None
                for e in held:
                    self._settle(e, "discarded")
                if tracer is not None and held:
                    tracer.emit(thread, "discard", {"items": [e.index for e in held]})
                dropped += held
                failure.discarded.extend((0, e.work) for e in dropped)
            self._stopped = True
            if tracer is not None:
                tracer.emit(
                    thread, "stop_end", {"mode": mode.value, "result": "ok" if failure is None else "failed"}
                )
        if failure is None:
            return _SUCCESS
        self._offer_discarded(dropped)
        _log.error("%s", failure.describe())
        return Result.UNKNOWN

    def _discard_listed(self, thread: str) -> list[Entry]:
        dropped = self._cancel_listed(None, "discarded")
        tracer = self._tracer
        if tracer is not None and dropped:
            tracer.emit(thread, "discard", {"items": [e.index for e in dropped]})
        return dropped

    def _offer_discarded(self, dropped: list[Entry]) -> None:
        on_discard = self._on_discard
        if on_discard is None:
            return
        for e in dropped:
            # A raising hook must not wedge stop half-way: log it and go on.
            try:
                on_discard(e.work)
            except Exception:
                _log.exception("on_discard raised for work %r", e.work)

    # -- context manager -------------------------------------------------------------------

    def _stop_on_exit(self, exc_type: type[BaseException] | None) -> Result:
        # The producer side failed when the block raised: its queued items are not run.
        return self.stop(StopMode.DRAIN if exc_type is None else StopMode.DISCARD)


__all__ = [
    "CALLING",
    "DESIGN",
    "EXITED",
    "TAKING",
    "WAITING",
    "Entry",
    "EventPool",
    "Owner",
    "PoolThread",
    "StopMode",
    "Work",
    "header",
    "log_error",
]
