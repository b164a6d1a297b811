"""The Work Lane: a bounded MPMC queue, a state and serial consumption.

A lane is ``Idle`` (nobody will run it), ``Scheduled`` (its work item is in the
ready queue, or some thread owes that submission) or ``Draining`` (one worker is
consuming it). The state lives under the lane's mutex, and so do the two
decisions that must see each other: a producer's publish with its Idle ->
Scheduled decision, and a worker's end-of-drain decision. Whichever comes
second sees the other's result, so an item is never left in an Idle lane (no
lost wakeup). Items are popped and invoked *outside* the lane mutex: Draining
alone keeps a second consumer out, so user code never runs under a lock.

The queue is the runtime's shared FIFO (``Runtime.deque``), with no lock of its
own: only producers holding the lane mutex append, and only the lane's one
drainer pops. A producer's capacity decision therefore stays true until it
appends (a racing pop can only make room), and the end-of-drain emptiness check,
made under the mutex, sees every append.

What the mutex cannot order is a producer's trace event against a drainer's
lock-free pop: a producer that saw the lane full (or appended) could be
overtaken by a pop *and its logged invoke* before logging its own ``post``, and
the trace would then show ``capacity_exceeded`` on a lane with room, or an
``invoke`` before the ``post`` of its item. So a publishing producer raises the
lane's ``probing`` flag for its whole decision, and a drainer reads it after
each pop: seeing it up, it waits for the mutex before logging (Dekker's
protocol; CPython's attribute stores and loads are sequentially consistent).
Whichever is second sees the other: the producer's length check sees the pop,
or the drainer waits until the ``post`` is logged. It costs two stores per post
and one load per pop, traced or not: there is one code path.

No GIL hand-off inside a lane critical section. CPython 3.11 honours a pending GIL drop
request (another thread waited a switch interval) at the next call it returns from, and the
thread then sleeps *holding whatever lock it holds*. On more than one core every other thread
that reaches that lane then blocks on the mutex and hands the GIL on, and each hand-off
wakes a thread on another core: pinned to one core the scheduler ran 4-5x faster than on two
(docs/performance.md). So, untraced, the three critical sections make no call while the mutex
is held: ``with mutex`` (entering a ``with`` block checks no drop request, an ``acquire()``
call returning does; ``critical_section`` makes that ``with`` cheaper, and under the threading
runtime the mutex is a ``runtime.TokenLock``, cheaper still), attribute stores and
loads, the capacity decided from two counters kept under the mutex (``appended`` by producers,
``may_be_full_at`` by the drainer at the end of a drain), and the append written
``self._section + item`` (a binary operator calling the FIFO's ``append``).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, TypeVar

from .runtime import FifoLike, Runtime, cheap_lock
from .tracing import Tracer, default_label
from .worker_pool import WorkItem, critical_section

T = TypeVar("T")

_log = logging.getLogger("reference")


class LaneState(Enum):
    IDLE = "idle"
    SCHEDULED = "scheduled"
    DRAINING = "draining"


class PostOutcome(Enum):
    """A lane's publish decision, in either design (``WorkLane._publish``, ``LockFreeLane.publish``)."""

    # Stop closed admission; the item stays with the caller. Only the lock-based lane answers
    # it: the lock-free scheduler checks admission before it publishes.
    CLOSED = "closed"
    FULL = "full"  # not published; the item stays with the caller
    ACCEPTED = "accepted"  # published into a lane that already had a reservation
    ACCEPTED_SUBMIT = "accepted_submit"  # published and Idle -> Scheduled: the caller owes a submit


# Enum attribute lookups are slow in CPython 3.11; the hot paths (a lane's publish and drain, a
# scheduler's post) use these names.
IDLE = LaneState.IDLE
SCHEDULED = LaneState.SCHEDULED
DRAINING = LaneState.DRAINING
POST_CLOSED = PostOutcome.CLOSED
POST_FULL = PostOutcome.FULL
POST_ACCEPTED = PostOutcome.ACCEPTED
POST_ACCEPTED_SUBMIT = PostOutcome.ACCEPTED_SUBMIT


def log_error(lane: int, item: object, exc: BaseException) -> None:
    """The default ``on_error``: log the exception with its traceback."""
    _log.error("invoke raised on lane %d for item %r", lane, item, exc_info=exc)


@dataclass(eq=False)
class SharedEnv:
    """What every lane of one scheduler shares, in either Work Lane design."""

    runtime: Runtime
    capacity: int
    budget: int
    tracer: Tracer | None = None
    label: Callable[[Any], object] = default_label
    on_error: Callable[[int, Any, BaseException], None] = log_error


@dataclass(eq=False)
class LaneEnv(SharedEnv):
    """A lock-based scheduler's: the shared fields and Stop(discard)'s flag."""

    # Written by Stop(discard) while it holds every lane's mutex and logs its
    # stop_begin, read under one lane's mutex before a drain begins.
    discarding: bool = False


E = TypeVar("E", bound=SharedEnv)


class LaneBase(ABC, Generic[T, E]):
    """What a lane is in either Work Lane design: its index, its ``invoke(context, item)``, the
    scheduler's shared ``env``, and a drain's frame (begin, invoke up to ``budget`` items, end)."""

    def __init__(self, index: int, invoke: Callable[[Any, T], object], context: Any, env: E) -> None:
        self.index = index
        self.invoke = invoke
        self.context = context
        self.env = env
        self.budget = env.budget
        self._runtime = env.runtime
        self._tracer = env.tracer

    def drain(self) -> bool:
        """Run one drain of up to ``budget`` items; say whether the lane must be resubmitted
        (by this worker: it owes the lane's resubmission)."""
        if not self._begin_drain():
            return False
        invoked = self._invoke_items()
        return self._end_drain(invoked)

    @abstractmethod
    def _begin_drain(self) -> bool:
        """Scheduled -> Draining; False when no drain may begin (Stop(discard) closed admission)."""

    @abstractmethod
    def _invoke_items(self) -> int:
        """Pop and invoke up to ``budget`` items, outside any lock; how many were invoked."""

    @abstractmethod
    def _end_drain(self, invoked: int) -> bool:
        """Leave Draining, re-checking the queue: True when the lane must be resubmitted."""

    def _report(self, item: T, exc: BaseException) -> None:
        try:
            self.env.on_error(self.index, item, exc)
        except BaseException:
            _log.exception("on_error raised on lane %d", self.index)


class WorkLane(LaneBase[T, LaneEnv]):
    """One lane: its queue, its state, its ``invoke(context, item)``.

    The scheduler is the only caller. The protected methods are the seams that a
    checker's mutants override one at a time (see docs/reference.md).
    """

    def __init__(self, index: int, invoke: Callable[[Any, T], object], context: Any, env: LaneEnv) -> None:
        super().__init__(index, invoke, context, env)
        self.capacity = env.capacity
        self._label = env.label
        # A ``TokenLock`` under the threading runtime (``cheap_lock``): a post's one critical
        # section is most of its cost.
        self.mutex = cheap_lock(env.runtime, name=f"lane[{index}].mutex")
        self.queue: FifoLike[T] = env.runtime.deque(name=f"lane[{index}].queue")
        # ``with self._section``: the mutex, held; ``self._section + item``: the queue's append,
        # with no call (see ``critical_section``).
        self._section = critical_section(self.mutex, append=self.queue.append)
        # Guarded by mutex.
        self.state = IDLE
        # Items ever appended, and the ``appended`` count from which the lane may be full: the
        # items popped as of the last drain's end (or a discard) plus the capacity. Until then
        # the queue holds fewer than ``capacity`` items (``appended`` minus the items popped is
        # its length plus what the running drain has popped so far), so a post spares the
        # ``len`` call and a subtraction. On another runtime's FIFO (the harness's) no capacity
        # is added and the length is asked every time, so a checker explores the steps of the
        # decision it stands for.
        self.appended = 0
        self.may_be_full_at = self.capacity if isinstance(self.queue, deque) else 0
        self.open = True  # admission: Stop closes it on every lane at once
        self.posts_reserved = 0  # posts that took the reservation, each owing one submission
        # Up while a producer decides and logs a post (see the module docstring).
        self.probing = False
        # The lane's one drain work item; the scheduler sets it before any post.
        self.work_item: WorkItem | None = None

    def __repr__(self) -> str:
        return f"WorkLane(index={self.index}, state={self.state.value})"

    # -- producers' side -------------------------------------------------

    def _publish(self, item: T) -> PostOutcome:
        """Check admission, publish ``item`` and take the Idle -> Scheduled decision, atomically."""
        # ``with``, and no call until the mutex is released unless tracing: see the module docstring.
        with self._section:
            if not self.open:
                if self._tracer is not None:
                    self._trace_post(item, "invalid_state", False)
                return POST_CLOSED
            self.probing = True
            try:
                if self.appended >= self.may_be_full_at and len(self.queue) >= self.capacity:
                    if self._tracer is not None:
                        self._trace_post(item, "capacity_exceeded", False)
                    return POST_FULL
                self.appended += 1
                self._section + item  # the append, with no call (see ``critical_section``)
                # The Idle -> Scheduled decision, inline (a method call here costs ~8% of a
                # post). A lane has at most one reservation: only a post that finds it Idle
                # takes one, and owes the submission.
                if self.state is IDLE:
                    self.state = SCHEDULED
                    self.posts_reserved += 1
                    if self._tracer is not None:
                        self._trace_post(item, "ok", True)
                    return POST_ACCEPTED_SUBMIT
                if self._tracer is not None:
                    self._trace_post(item, "ok", False)
                return POST_ACCEPTED
            finally:
                self.probing = False

    def _trace_post(self, item: T, result: str, submit: bool) -> None:
        # The label and the tracer are user code, called after the decision took effect: if
        # they raised out of here an accepted item would look refused and its reservation
        # would be owed forever (Stop would wait for that submission). So a failure is logged
        # (no user callback: we hold the lane mutex) and the post keeps its result; the trace
        # lacks the event.
        try:
            assert self._tracer is not None
            self._tracer.emit(
                self._runtime.thread_name(),
                "post",
                {"lane": self.index, "item": self._label(item), "result": result, "submit": submit},
            )
        except BaseException:
            _log.exception("tracing a post on lane %d failed; the post stands", self.index)

    def _close(self) -> int:
        """Close admission (mutex held); return how many submissions posts have ever owed."""
        self.open = False
        return self.posts_reserved

    # -- the draining worker's side --------------------------------------

    def _begin_drain(self) -> bool:
        with self._section:  # no call while held, untraced: see the module docstring
            # Once Stop(discard) has begun (stop_begin) no new drain begins; the
            # taken work item is simply given up and Stop resets the lane.
            if self.env.discarding:
                return False
            self.state = DRAINING
            tracer = self._tracer
            if tracer is not None:
                tracer.emit(self._runtime.thread_name(), "drain_begin", {"lane": self.index})
            return True

    def _invoke_items(self) -> int:
        # The hot loop: one lock-free pop and one invoke per item.
        popleft = self.queue.popleft
        invoke = self.invoke
        context = self.context
        tracer = self._tracer
        # A ``for`` over the budget (at least 1) rather than a counter: n is the number of
        # items invoked so far whenever a pop finds the lane empty.
        n = 0
        for n in range(self.budget):
            try:
                item = popleft()
            except IndexError:
                return n
            if self.probing:
                # A producer is deciding or logging a post: let it finish before we log.
                self._wait_for_producer()
            if tracer is not None:
                self._trace_invoke(item)
            try:
                invoke(context, item)
            except BaseException as exc:
                self._report(item, exc)
        return n + 1

    def _trace_invoke(self, item: T) -> None:
        # The label and the tracer are user code. If they raise, the item was popped and
        # must still run (and the drain must still end, or the lane would stay Draining):
        # the failure is logged, as a post's is, and the trace lacks this event.
        try:
            assert self._tracer is not None
            self._tracer.emit(
                self._runtime.thread_name(), "invoke", {"lane": self.index, "item": self._label(item)}
            )
        except BaseException:
            _log.exception("tracing an invoke on lane %d failed; the item still runs", self.index)

    def _wait_for_producer(self) -> None:
        with self._section:  # the producer's post is logged once we hold the mutex
            pass

    def _end_drain(self, invoked: int) -> bool:
        with self._section:  # no call while held, untraced: see the module docstring
            # The drain popped exactly ``invoked`` items.
            self.may_be_full_at += invoked
            # Decided under the mutex, so a concurrent post either is seen here
            # or sees Idle and submits the lane itself. An item that arrived
            # after our last failed pop also means "resubmit". A truth test, not ``bool()`` or
            # ``len()``: no call while the mutex is held.
            resubmit = False
            if self.queue:
                resubmit = True
            self.state = SCHEDULED if resubmit else IDLE
            tracer = self._tracer
            if tracer is not None:
                tracer.emit(
                    self._runtime.thread_name(),
                    "drain_end",
                    {"lane": self.index, "outcome": "resubmit" if resubmit else "idle", "invoked": invoked},
                )
            return resubmit

    # -- Stop(discard)'s side --------------------------------------------

    def _discard_all(self) -> list[T]:
        """Remove every queued item and reset the lane to Idle (Stop, workers quiet)."""
        with self.mutex:
            queue = self.queue
            items: list[T] = []
            while len(queue):
                items.append(queue.popleft())
            self.may_be_full_at += len(items)
            self.state = IDLE
            tracer = self._tracer
            if tracer is not None and items:
                label = self._label
                tracer.emit(
                    self._runtime.thread_name(),
                    "discard",
                    {"lane": self.index, "items": [label(item) for item in items]},
                )
            return items
