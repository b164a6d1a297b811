"""The Worker Scheduler: fixed lanes, one worker pool, TryPost and Stop.

    sched = WorkerScheduler([LaneSpec(invoke, ctx), ...], workers=2, lane_capacity=64,
                            max_per_drain=8, ready_capacity=2)
    result, handle = sched.get_lane(0)
    sched.try_post(handle, item)        # Result.SUCCESS, CAPACITY_EXCEEDED, ...
    sched.stop(StopMode.DRAIN)

A post checks admission and publishes under the lane mutex and, when it moved
the lane Idle -> Scheduled, submits the lane's work item to the ready queue
*after* leaving the mutex: one lock round trip per item on the producer's side,
none of the scheduler's own. A worker drains a lane (see ``work_lane``) and
resubmits it to the back of the ready queue when items are left after its
budget, so other lanes get a turn in between.

Stop closes admission on every lane at once (holding all their mutexes), waits
for the submissions that accepted posts still owe, then either lets the workers
finish everything (drain) or stops new drains and drops what is queued
(discard), and finally joins the workers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import Any, Generic, NamedTuple, TypeVar

from .results import Result
from .runtime import DEFAULT_RUNTIME, Runtime
from .tracing import Tracer
from .work_lane import LaneEnv, PostOutcome, WorkLane, default_label, log_error
from .worker_pool import WorkerPool, WorkItem

T = TypeVar("T")

LaneFactory = Callable[[int, Callable[[Any, Any], object], Any, LaneEnv], WorkLane[Any]]
PoolFactory = Callable[[int, int, Runtime, "Tracer | None"], WorkerPool]


_log = logging.getLogger("reference")


class StopMode(Enum):
    DRAIN = "drain"  # finish every accepted item
    DISCARD = "discard"  # drop what is queued; drains already running still finish


@dataclass(frozen=True)
class LaneSpec(Generic[T]):
    """One lane to register: ``invoke(context, item)`` is called for each of its items."""

    invoke: Callable[[Any, T], object]
    context: Any = None


class LaneHandle(NamedTuple):
    """Names one lane of one scheduler. ``LaneHandle()`` is the invalid handle."""

    scheduler: object | None = None
    lane: int = -1


@dataclass(frozen=True)
class SchedulerConfig:
    lanes: int
    workers: int
    lane_capacity: int
    max_per_drain: int
    ready_capacity: int

    def as_trace_config(self) -> dict[str, int]:
        return {
            "lanes": self.lanes,
            "workers": self.workers,
            "lane_capacity": self.lane_capacity,
            "max_per_drain": self.max_per_drain,
            "ready_capacity": self.ready_capacity,
        }


class _State(Enum):
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"


_RUNNING = _State.RUNNING
_STOPPING = _State.STOPPING
_STOPPED = _State.STOPPED
# Enum attribute lookups are slow in CPython 3.11; the hot path uses these names.
_FULL = PostOutcome.FULL
_ACCEPTED = PostOutcome.ACCEPTED
_ACCEPTED_SUBMIT = PostOutcome.ACCEPTED_SUBMIT
_SUCCESS = Result.SUCCESS
_CAPACITY_EXCEEDED = Result.CAPACITY_EXCEEDED
_INVALID_STATE = Result.INVALID_STATE


def config_error(
    lanes: Sequence[LaneSpec[Any]],
    workers: int,
    lane_capacity: int,
    max_per_drain: int,
    ready_capacity: int | None,
) -> str | None:
    """Why this configuration is refused, naming the field; None when it is valid."""
    if workers < 1:
        return f"workers must be at least 1, got {workers}"
    if lane_capacity < 1:
        return f"lane_capacity must be at least 1, got {lane_capacity}"
    if max_per_drain < 1:
        return f"max_per_drain must be at least 1, got {max_per_drain}"
    if len(lanes) < 1:
        return "lanes must register at least one lane"
    for i, spec in enumerate(lanes):
        if not callable(getattr(spec, "invoke", None)):
            return f"lanes[{i}].invoke must be callable, got {getattr(spec, 'invoke', spec)!r}"
    if ready_capacity is not None:
        if ready_capacity < 1:
            return f"ready_capacity must be at least 1, got {ready_capacity}"
        if ready_capacity < len(lanes):
            return (
                f"ready_capacity must be at least the number of lanes ({len(lanes)}), got {ready_capacity}: "
                "every lane may be queued at once"
            )
    return None


class WorkerScheduler(Generic[T]):
    """Runs each lane's items in order, one at a time, on a shared pool of workers.

    Used as a context manager, leaving the block stops the scheduler: with
    ``StopMode.DRAIN`` on a normal exit, and with ``StopMode.DISCARD`` when the
    block raised (the producer side failed, so queued items are handed to
    ``on_discard`` instead of being run); the exception then propagates.

    ``on_error(lane, item, exc)`` receives what ``invoke`` raised (default: log
    it); the lane goes on with its next item. ``on_discard(lane, item)`` receives
    each item dropped by ``stop(StopMode.DISCARD)``. ``item_label(item)`` names an
    item in trace events. ``lane_factory`` and ``pool_factory`` let a checker
    plug in variants of ``WorkLane`` and ``WorkerPool``.
    """

    def __init__(
        self,
        lanes: Sequence[LaneSpec[T]],
        *,
        workers: int,
        lane_capacity: int,
        max_per_drain: int,
        ready_capacity: int | None = None,
        runtime: Runtime | None = None,
        tracer: Tracer | None = None,
        on_error: Callable[[int, T, BaseException], None] | None = None,
        on_discard: Callable[[int, T], None] | None = None,
        item_label: Callable[[T], object] | None = None,
        lane_factory: LaneFactory = WorkLane,
        pool_factory: PoolFactory = WorkerPool,
    ) -> None:
        error = config_error(lanes, workers, lane_capacity, max_per_drain, ready_capacity)
        if error is not None:
            raise ValueError(error)
        self.config = SchedulerConfig(
            lanes=len(lanes),
            workers=workers,
            lane_capacity=lane_capacity,
            max_per_drain=max_per_drain,
            ready_capacity=len(lanes) if ready_capacity is None else ready_capacity,
        )
        self._runtime = rt = DEFAULT_RUNTIME if runtime is None else runtime
        self._tracer = tracer
        self._on_discard = on_discard
        self._env = LaneEnv(
            runtime=rt,
            capacity=lane_capacity,
            budget=max_per_drain,
            tracer=tracer,
            label=default_label if item_label is None else item_label,
            on_error=log_error if on_error is None else on_error,
        )
        self._lanes: list[WorkLane[T]] = [
            lane_factory(i, spec.invoke, spec.context, self._env) for i, spec in enumerate(lanes)
        ]
        self._lane_count = len(self._lanes)
        # Bound once: the post path indexes these instead of looking methods up per item.
        self._publishers = [lane._publish for lane in self._lanes]
        self._work_items = [WorkItem(partial(self._drain_lane, lane), lane.index) for lane in self._lanes]
        self._pool = pool_factory(workers, self.config.ready_capacity, rt, tracer)
        self._state_lock = rt.lock(name="scheduler.state")
        # Guarded by _state_lock.
        self._state = _RUNNING
        self._posts_owed = 0  # submissions owed by accepted posts when admission closed
        if tracer is not None:
            tracer.begin(self.config.as_trace_config())
        self._pool.start()

    def __repr__(self) -> str:
        return f"WorkerScheduler({self.config}, state={self._state.value})"

    # -- handles ---------------------------------------------------------

    def get_lane(self, index: int) -> tuple[Result, LaneHandle]:
        """The handle of lane ``index``: INVALID_ARGUMENT out of range, INVALID_STATE once Stop began."""
        if not 0 <= index < self._lane_count:
            return Result.INVALID_ARGUMENT, LaneHandle()
        with self._state_lock:
            if self._state is not _RUNNING:
                return Result.INVALID_STATE, LaneHandle()
        return Result.SUCCESS, LaneHandle(self, index)

    @property
    def lane_count(self) -> int:
        return self._lane_count

    @property
    def running(self) -> bool:
        """True until a Stop begins."""
        with self._state_lock:
            return self._state is _RUNNING

    @property
    def stopped(self) -> bool:
        """True once a Stop has finished."""
        with self._state_lock:
            return self._state is _STOPPED

    # -- TryPost ---------------------------------------------------------

    def try_post(self, handle: LaneHandle, item: T) -> Result:
        """Queue ``item`` on the handle's lane without blocking on the workers.

        SUCCESS means accepted (``invoke`` may even have started already).
        INVALID_ARGUMENT (a handle that is not a lane of this scheduler),
        CAPACITY_EXCEEDED (the lane is full) and INVALID_STATE (Stop has begun)
        leave the item with the caller.
        """
        # Only a handle this scheduler gave out names one of its lanes.
        if handle.__class__ is LaneHandle and handle.scheduler is self:
            index = handle.lane
            if 0 <= index < self._lane_count:
                outcome = self._publishers[index](item)
                if outcome is _ACCEPTED:
                    return _SUCCESS
                if outcome is _ACCEPTED_SUBMIT:
                    self._submit(self._lanes[index])
                    return _SUCCESS
                return _CAPACITY_EXCEEDED if outcome is _FULL else _INVALID_STATE
        tracer = self._tracer
        if tracer is not None:
            tracer.emit(
                self._runtime.thread_name(),
                "post",
                {"lane": None, "item": self._env.label(item), "result": "invalid_argument", "submit": False},
            )
        return Result.INVALID_ARGUMENT

    def _submit(self, lane: WorkLane[T]) -> None:
        # A post's owed submission. Never under the lane mutex: the pool's mutex is
        # never taken inside a lane's.
        self._pool.submit(self._work_items[lane.index], True)

    # -- the workers' side -----------------------------------------------

    def _drain_lane(self, lane: WorkLane[T]) -> None:
        if lane.drain():
            self._pool.submit(self._work_items[lane.index])

    # -- Stop ------------------------------------------------------------

    def stop(self, mode: StopMode = StopMode.DRAIN) -> Result:
        """Stop the scheduler and join its workers; SUCCESS if it is (already) stopped.

        INVALID_STATE when called from one of this scheduler's callbacks (it
        would wait for itself) or while another Stop is in progress.
        """
        refusal = self._close_admission(mode)
        if refusal is not None:
            return refusal
        self._wait_posts_settled()
        tracer = self._tracer
        if tracer is not None:
            # After every submission that accepted posts owed, so every accepted
            # post is linearised, submission included, before stop_begin.
            tracer.emit(self._runtime.thread_name(), "stop_begin", {"mode": mode.value})
        # Lanes are Scheduled only while their work item is queued or a worker
        # holds it (posts no longer owe submissions), so a quiet pool means: in
        # drain mode every accepted item was invoked and every lane is Idle; in
        # discard mode no drain runs any more and none will begin.
        self._pool.wait_quiescent()
        if mode is StopMode.DISCARD:
            self._discard_queued()
        self._pool.clear()
        self._pool.shutdown()
        with self._state_lock:
            self._state = _STOPPED
            if tracer is not None:
                tracer.emit(self._runtime.thread_name(), "stop_end", {"mode": mode.value, "result": "ok"})
        return Result.SUCCESS

    def _close_admission(self, mode: StopMode) -> Result | None:
        in_callback = self._pool.is_worker(self._runtime.current_thread())
        tracer = self._tracer
        with self._state_lock:
            if self._state is _STOPPED:
                return Result.SUCCESS
            reason = (
                "in_callback" if in_callback else "stop_in_progress" if self._state is _STOPPING else None
            )
            if reason is not None:
                if tracer is not None:
                    tracer.emit(
                        self._runtime.thread_name(), "stop_rejected", {"mode": mode.value, "reason": reason}
                    )
                return Result.INVALID_STATE
            self._state = _STOPPING
            # Still under the state lock, so a Stop refused as "in progress" is
            # ordered after admission closed on every lane.
            self._posts_owed = self._close_lanes(mode is StopMode.DISCARD)
            return None

    def _close_lanes(self, discard: bool) -> int:
        # Every lane mutex at once (in index order; posts and drains hold one at a
        # time), so each post is wholly before the close or sees it: no post is
        # accepted after one was refused.
        lanes = self._lanes
        held: list[WorkLane[T]] = []
        try:
            for lane in lanes:
                lane.mutex.acquire()
                held.append(lane)
            self._env.discarding = discard
            return sum(lane._close() for lane in lanes)
        finally:
            for lane in reversed(held):
                lane.mutex.release()

    def _wait_posts_settled(self) -> None:
        # Posts are settled once they have made every submission they owe: each
        # post that moved its lane Idle -> Scheduled owes one, counted by its lane.
        self._pool.wait_submissions(self._posts_owed)

    def _discard_queued(self) -> None:
        on_discard = self._on_discard
        for lane in self._lanes:
            items = lane._discard_all()
            if on_discard is not None:
                for item in items:
                    # A raising hook must not wedge Stop half-way (workers never joined,
                    # later items never reported): log it and go on with the next item.
                    try:
                        on_discard(lane.index, item)
                    except BaseException:
                        _log.exception("on_discard raised on lane %d for item %r", lane.index, item)

    # -- context manager -------------------------------------------------

    def __enter__(self) -> WorkerScheduler[T]:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        self.stop(StopMode.DRAIN if exc_type is None else StopMode.DISCARD)


def create(
    lanes: Sequence[LaneSpec[T]],
    *,
    workers: int,
    lane_capacity: int,
    max_per_drain: int,
    ready_capacity: int | None = None,
    **options: Any,
) -> tuple[Result, WorkerScheduler[T] | None]:
    """The ToolKit-style factory: ``(SUCCESS, scheduler)`` or ``(INVALID_ARGUMENT, None)``.

    ``options`` are the keyword arguments of ``WorkerScheduler``.
    """
    if config_error(lanes, workers, lane_capacity, max_per_drain, ready_capacity) is not None:
        return Result.INVALID_ARGUMENT, None
    scheduler: WorkerScheduler[T] = WorkerScheduler(
        lanes,
        workers=workers,
        lane_capacity=lane_capacity,
        max_per_drain=max_per_drain,
        ready_capacity=ready_capacity,
        **options,
    )
    return Result.SUCCESS, scheduler


__all__ = [
    "LaneHandle",
    "LaneSpec",
    "SchedulerConfig",
    "StopMode",
    "WorkerScheduler",
    "config_error",
    "create",
]
