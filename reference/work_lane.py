"""The Work Lane: a bounded MPMC queue, a state and serial consumption.

A lane is ``Idle`` (nobody will run it), ``Scheduled`` (its work item is in the
ready queue, or some thread owes that submission) or ``Draining`` (one worker is
consuming it). The state lives under the lane's mutex, and so do the two
decisions that must see each other: a producer's publish with its Idle ->
Scheduled decision, and a worker's end-of-drain decision. Whichever comes
second sees the other's result, so an item is never left in an Idle lane (no
lost wakeup). Items are popped and invoked *outside* the lane mutex: Draining
alone keeps a second consumer out, so user code never runs under a lock.

The queue guards its deque with a lock of its own, so that a pop is a step of
its own for a checker (deque operations are not scheduling points).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, Literal, TypeVar

from .runtime import LockLike, Runtime
from .tracing import Tracer
from .worker_pool import WorkItem

T = TypeVar("T")

_log = logging.getLogger("reference")


class LaneState(Enum):
    IDLE = "idle"
    SCHEDULED = "scheduled"
    DRAINING = "draining"


IDLE = LaneState.IDLE
SCHEDULED = LaneState.SCHEDULED
DRAINING = LaneState.DRAINING


class _Empty(Enum):
    EMPTY = "empty"


EMPTY = _Empty.EMPTY
"""What ``BoundedQueue.pop`` returns when there is nothing to pop (items may be None)."""


class PostOutcome(Enum):
    """The publish decision, as ``WorkLane._publish`` reports it."""

    FULL = "full"  # not published; the item stays with the caller
    ACCEPTED = "accepted"  # published into a lane that already had a reservation
    ACCEPTED_SUBMIT = "accepted_submit"  # published and Idle -> Scheduled: the caller owes a submit


# Enum attribute lookups are slow in CPython 3.11; the hot path uses these names.
_FULL = PostOutcome.FULL
_ACCEPTED = PostOutcome.ACCEPTED
_ACCEPTED_SUBMIT = PostOutcome.ACCEPTED_SUBMIT


def default_label(item: object) -> object:
    """An item's name in trace events: ints and strings as they are, anything else by ``repr``."""
    kind = type(item)
    if kind is int or kind is str:
        return item
    return repr(item)


def log_error(lane: int, item: object, exc: BaseException) -> None:
    """The default ``on_error``: log the exception with its traceback."""
    _log.error("invoke raised on lane %d for item %r", lane, item, exc_info=exc)


class BoundedQueue(Generic[T]):
    """A FIFO of at most ``capacity`` items, safe for many pushers and poppers."""

    __slots__ = ("_items", "_lock", "capacity")

    def __init__(self, capacity: int, lock: LockLike) -> None:
        self.capacity = capacity
        self._lock = lock
        self._items: deque[T] = deque()

    def push(self, item: T) -> bool:
        """Append ``item`` unless the queue is full; say whether it did."""
        with self._lock:
            return self.push_locked(item)

    @property
    def lock(self) -> LockLike:
        """The queue's own lock, for a caller that must act inside the push's critical section."""
        return self._lock

    def push_locked(self, item: T) -> bool:
        """``push`` for a caller already holding ``lock``."""
        if len(self._items) >= self.capacity:
            return False
        self._items.append(item)
        return True

    def pop(self) -> T | Literal[_Empty.EMPTY]:
        """Remove and return the oldest item, or ``EMPTY``."""
        with self._lock:
            if self._items:
                return self._items.popleft()
            return EMPTY

    def is_empty(self) -> bool:
        with self._lock:
            return not self._items

    def take_all(self) -> list[T]:
        """Remove and return every item, oldest first."""
        with self._lock:
            items = list(self._items)
            self._items.clear()
            return items

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


@dataclass(eq=False)
class LaneEnv:
    """What every lane of one scheduler shares."""

    runtime: Runtime
    capacity: int
    budget: int
    tracer: Tracer | None = None
    label: Callable[[Any], object] = default_label
    on_error: Callable[[int, Any, BaseException], None] = log_error
    # Written under the scheduler's state lock when Stop(discard) closes
    # admission, read under each lane's mutex before a drain begins.
    discarding: bool = False


class WorkLane(Generic[T]):
    """One lane: its queue, its state, its ``invoke(context, item)``.

    The scheduler is the only caller. The protected methods are the seams that a
    checker's mutants override one at a time (see docs/reference.md).
    """

    def __init__(self, index: int, invoke: Callable[[Any, T], object], context: Any, env: LaneEnv) -> None:
        self.index = index
        self.invoke = invoke
        self.context = context
        self.env = env
        self.budget = env.budget
        self._runtime = env.runtime
        self._tracer = env.tracer
        self._label = env.label
        self.mutex = env.runtime.lock(name=f"lane[{index}].mutex")
        self.queue: BoundedQueue[T] = BoundedQueue(
            env.capacity, env.runtime.lock(name=f"lane[{index}].queue")
        )
        self.state = IDLE  # guarded by mutex
        # The lane's one drain work item; the scheduler sets it before any post.
        self.work_item: WorkItem | None = None

    def __repr__(self) -> str:
        return f"WorkLane(index={self.index}, state={self.state.value})"

    # -- producers' side -------------------------------------------------

    def _publish(self, item: T) -> PostOutcome:
        """Publish ``item`` and take the Idle -> Scheduled decision, atomically."""
        with self.mutex:
            queue = self.queue
            if self._tracer is None:
                if not queue.push(item):
                    return _FULL
                return _ACCEPTED_SUBMIT if self._reserve() else _ACCEPTED
            # Traced: the post is logged inside the queue's critical section, because the
            # drainer pops under the queue lock alone. Logged after it, a pop (and its invoke)
            # could appear before the post that it made room for, or that it consumed.
            with queue.lock:
                if not queue.push_locked(item):
                    self._trace_post(item, "capacity_exceeded", False)
                    return _FULL
                owes_submit = self._reserve()
                self._trace_post(item, "ok", owes_submit)
                return _ACCEPTED_SUBMIT if owes_submit else _ACCEPTED

    def _reserve(self) -> bool:
        # Called with the mutex held. A lane has at most one reservation: only a
        # post that finds it Idle takes one (and owes the submission).
        if self.state is IDLE:
            self.state = SCHEDULED
            return True
        return False

    def _trace_post(self, item: T, result: str, submit: bool) -> None:
        assert self._tracer is not None
        self._tracer.emit(
            self._runtime.thread_name(),
            "post",
            {"lane": self.index, "item": self._label(item), "result": result, "submit": submit},
        )

    # -- the draining worker's side --------------------------------------

    def drain(self) -> bool:
        """Run one drain of up to ``budget`` items; say whether the lane must be resubmitted."""
        if not self._begin_drain():
            return False
        invoked = self._invoke_items()
        return self._end_drain(invoked)

    def _begin_drain(self) -> bool:
        with self.mutex:
            # Once Stop(discard) has closed admission no new drain begins; the
            # taken work item is simply given up and Stop resets the lane.
            if self.env.discarding:
                return False
            self.state = DRAINING
            tracer = self._tracer
            if tracer is not None:
                tracer.emit(self._runtime.thread_name(), "drain_begin", {"lane": self.index})
            return True

    def _invoke_items(self) -> int:
        # The hot loop: one pop (under the queue lock only) and one invoke per item.
        pop = self.queue.pop
        invoke = self.invoke
        context = self.context
        tracer = self._tracer
        budget = self.budget
        invoked = 0
        while invoked < budget:
            item = pop()
            if item is EMPTY:
                break
            if tracer is not None:
                tracer.emit(
                    self._runtime.thread_name(), "invoke", {"lane": self.index, "item": self._label(item)}
                )
            invoked += 1
            try:
                invoke(context, item)
            except BaseException as exc:
                self._report(item, exc)
        return invoked

    def _report(self, item: T, exc: BaseException) -> None:
        try:
            self.env.on_error(self.index, item, exc)
        except BaseException:
            _log.exception("on_error raised on lane %d", self.index)

    def _end_drain(self, invoked: int) -> bool:
        with self.mutex:
            # Decided under the mutex, so a concurrent post either is seen here
            # or sees Idle and submits the lane itself. An item that arrived
            # after our last failed pop also means "resubmit".
            resubmit = not self.queue.is_empty()
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
            items = self.queue.take_all()
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
