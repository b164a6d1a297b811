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

The lanes and sizes it is built from, and how they are checked, are in
``scheduler_config`` (re-exported here).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from enum import Enum
from functools import partial
from typing import Any, Generic, TypeVar

from . import arguments
from .failure import SchedulerFailed, SchedulerFailure
from .results import Result
from .runtime import DEFAULT_RUNTIME, Runtime
from .scheduler_config import (
    LaneHandle,
    LaneSpec,
    SchedulerConfig,
    Sizing,
    StopMode,
    check_options,
    checked_config,
    config_error,
)
from .tracing import Tracer
from .work_lane import LaneEnv, PostOutcome, WorkLane, default_label, log_error
from .worker_pool import WorkerPool, WorkItem

T = TypeVar("T")

LaneFactory = Callable[[int, Callable[[Any, Any], object], Any, LaneEnv], WorkLane[Any]]
PoolFactory = Callable[[int, int, Runtime, "Tracer | None"], WorkerPool]


_log = logging.getLogger("reference")


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


class WorkerScheduler(Generic[T]):
    """Runs each lane's items in order, one at a time, on a shared pool of workers.

    Used as a context manager, leaving the block stops the scheduler: with
    ``StopMode.DRAIN`` on a normal exit, and with ``StopMode.DISCARD`` when the
    block raised (the producer side failed, so queued items are handed to
    ``on_discard`` instead of being run); the exception then propagates. If the
    scheduler failed, leaving a block that did not raise raises
    ``SchedulerFailed``.

    ``on_error(lane, item, exc)`` receives what ``invoke`` raised (default: log
    it); the lane goes on with its next item. ``on_discard(lane, item)`` receives
    each item dropped by ``stop(StopMode.DISCARD)``, or by the Stop of a failed
    scheduler. ``item_label(item)`` names an item in trace events.
    ``lane_factory`` and ``pool_factory`` let a checker plug in variants of
    ``WorkLane`` and ``WorkerPool``; ``sizing=Sizing.CHECKING`` lets it use the
    spec's small sizes.

    Arguments are checked strictly (``reference.arguments``): a wrong type is a
    ``TypeError``, a wrong value a ``ValueError``, each naming the field.

    If the scheduler's own code raises (a bug, a broken runtime or plug-in; not
    ``invoke`` or a callback), the scheduler *fails*: ``failed`` becomes True,
    later posts get INVALID_STATE, no new drain begins, and ``stop`` returns
    UNKNOWN after reporting every accepted item not yet invoked to
    ``on_discard`` (and in ``failure.discarded``).
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
        sizing: Sizing = Sizing.TOOLKIT,
    ) -> None:
        specs, self.config = checked_config(
            lanes, workers, lane_capacity, max_per_drain, ready_capacity, sizing
        )
        check_options(
            {
                "runtime": runtime,
                "tracer": tracer,
                "on_error": on_error,
                "on_discard": on_discard,
                "item_label": item_label,
                "lane_factory": lane_factory,
                "pool_factory": pool_factory,
            }
        )
        self.sizing = sizing
        self._runtime = rt = DEFAULT_RUNTIME if runtime is None else runtime
        self._tracer = tracer
        self._on_discard = on_discard
        self._env = LaneEnv(
            runtime=rt,
            capacity=self.config.lane_capacity,
            budget=self.config.max_per_drain,
            tracer=tracer,
            label=default_label if item_label is None else item_label,
            on_error=log_error if on_error is None else on_error,
        )
        self._lanes: list[WorkLane[T]] = [
            lane_factory(i, spec.invoke, spec.context, self._env) for i, spec in enumerate(specs)
        ]
        self._lane_count = len(self._lanes)
        # Bound once: the post path indexes these instead of looking methods up per item.
        self._publishers = [lane._publish for lane in self._lanes]
        self._work_items = [WorkItem(partial(self._drain_lane, lane), lane.index) for lane in self._lanes]
        self._pool = pool_factory(self.config.workers, self.config.ready_capacity, rt, tracer)
        self._pool.on_failure = self._fail
        self._state_lock = rt.lock(name="scheduler.state")
        # Guarded by _state_lock.
        self._state = _RUNNING
        self._posts_owed = 0  # submissions owed by accepted posts when admission closed
        # Set once, by the first fault of our own code; read without the lock on the post path.
        self._failure: SchedulerFailure | None = None
        if tracer is not None:
            tracer.begin(self.config.as_trace_config())
        try:
            self._pool.start()
        except BaseException:
            # Some workers may be running: do not leave them behind a constructor that failed.
            self._pool.shutdown()
            raise

    def __repr__(self) -> str:
        failed = ", failed" if self._failure is not None else ""
        return f"WorkerScheduler({self.config}, state={self._state.value}{failed})"

    # -- handles ---------------------------------------------------------

    def get_lane(self, index: int) -> tuple[Result, LaneHandle]:
        """The handle of lane ``index``: INVALID_ARGUMENT if it is not an ``int`` in range (``True`` is
        not), INVALID_STATE once Stop began or the scheduler failed."""
        if not arguments.index(index, self._lane_count):
            return Result.INVALID_ARGUMENT, LaneHandle()
        with self._state_lock:
            if self._state is not _RUNNING or self._failure is not None:
                return Result.INVALID_STATE, LaneHandle()
        return Result.SUCCESS, LaneHandle(self, int(index))

    @property
    def lane_count(self) -> int:
        return self._lane_count

    @property
    def running(self) -> bool:
        """True until a Stop begins or the scheduler fails."""
        with self._state_lock:
            return self._state is _RUNNING and self._failure is None

    @property
    def stopped(self) -> bool:
        """True once a Stop has finished."""
        with self._state_lock:
            return self._state is _STOPPED

    @property
    def failed(self) -> bool:
        """True once the scheduler's own code raised (see ``failure``)."""
        return self._failure is not None

    @property
    def failure(self) -> SchedulerFailure | None:
        """The first fault of the scheduler's own code and, after Stop, the items it discarded."""
        return self._failure

    # -- TryPost ---------------------------------------------------------

    def try_post(self, handle: LaneHandle, item: T) -> Result:
        """Queue ``item`` on the handle's lane without blocking on the workers.

        SUCCESS means accepted (``invoke`` may even have started already).
        INVALID_ARGUMENT (a handle that is not a lane of this scheduler),
        CAPACITY_EXCEEDED (the lane is full) and INVALID_STATE (Stop has begun,
        or the scheduler failed) leave the item with the caller. If the
        scheduler's own code raises here, the scheduler fails and the exception
        propagates; the item, if it was accepted, is reported by Stop.
        """
        # Only a handle this scheduler gave out names one of its lanes.
        if handle.__class__ is LaneHandle and handle.scheduler is self:
            index = handle.lane
            if index.__class__ is int and 0 <= index < self._lane_count:
                if self._failure is not None:
                    return _INVALID_STATE
                try:
                    outcome = self._publishers[index](item)
                    if outcome is _ACCEPTED:
                        return _SUCCESS
                    if outcome is _ACCEPTED_SUBMIT:
                        self._submit(self._lanes[index])
                        return _SUCCESS
                except Exception as exc:
                    self._fail(exc)
                    raise
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
        # What this raises is our own fault (invoke's errors go to on_error): the pool
        # logs it and reports it to ``_fail``.
        if lane.drain():
            self._pool.submit(self._work_items[lane.index])

    # -- failure ---------------------------------------------------------

    def _fail(self, error: BaseException) -> None:
        """Our own code raised: enter the failed state (the first fault is kept).

        No lane mutex is taken here (the fault may come from any step); posts see
        the failure before their lane, and Stop takes everything out of the lanes.
        The pool's waits are abandoned, so a Stop waiting on counts that the fault
        may have left wrong returns instead of hanging.
        """
        with self._state_lock:
            if self._failure is None:
                self._failure = SchedulerFailure(error)
        self._env.discarding = True  # no new drain begins; Stop reports what is queued
        self._pool.abandon()

    # -- Stop ------------------------------------------------------------

    def stop(self, mode: StopMode = StopMode.DRAIN) -> Result:
        """Stop the scheduler and join its workers; SUCCESS if it is (already) stopped.

        INVALID_ARGUMENT if ``mode`` is not a ``StopMode`` (nothing happens).
        INVALID_STATE when called from one of this scheduler's callbacks (it
        would wait for itself) or while another Stop is in progress. UNKNOWN if
        the scheduler failed (``failure``): the workers are joined and every
        accepted item not yet invoked went to ``on_discard``.
        """
        if not isinstance(mode, StopMode):
            return Result.INVALID_ARGUMENT
        refusal = self._close_admission(mode)
        if refusal is not None:
            return refusal
        try:
            self._stop_workers(mode)
        except Exception as exc:  # our own fault: fail, and still join and report
            _log.exception("Stop(%s) failed", mode.value)
            self._fail(exc)
        if self._failure is not None:
            return self._stop_failed(mode)
        with self._state_lock:
            self._state = _STOPPED
            tracer = self._tracer
            if tracer is not None:
                tracer.emit(self._runtime.thread_name(), "stop_end", {"mode": mode.value, "result": "ok"})
        return Result.SUCCESS

    def _stop_workers(self, mode: StopMode) -> None:
        self._wait_posts_settled()
        if self._failure is not None:
            return
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
        if self._failure is not None:
            return
        if mode is StopMode.DISCARD:
            self._discard_queued()
        self._pool.clear()
        self._pool.shutdown()

    def _stop_failed(self, mode: StopMode) -> Result:
        """Stop of a failed scheduler: join the workers, then report every item left in a lane."""
        failure = self._failure
        assert failure is not None
        self._env.discarding = True
        for step in (self._pool.clear, self._pool.shutdown):
            try:
                step()
            except Exception:
                _log.exception("Stop of a failed scheduler: %s raised", step.__name__)
        # The workers are joined: nothing pops any more, so each item is here or was invoked.
        for lane in self._lanes:
            try:
                items = lane._discard_all()
            except Exception:
                _log.exception("Stop of a failed scheduler: emptying lane %d raised", lane.index)
                continue
            for item in items:
                failure.discarded.append((lane.index, item))
                self._offer_discarded(lane.index, item)
        _log.error("%s", failure.describe())
        with self._state_lock:
            self._state = _STOPPED
            tracer = self._tracer
            if tracer is not None:
                tracer.emit(self._runtime.thread_name(), "stop_end", {"mode": mode.value, "result": "failed"})
        return Result.UNKNOWN

    def _close_admission(self, mode: StopMode) -> Result | None:
        in_callback = self._pool.is_worker(self._runtime.current_thread())
        tracer = self._tracer
        with self._state_lock:
            if self._state is _STOPPED:
                return Result.SUCCESS if self._failure is None else Result.UNKNOWN
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
            self._env.discarding = discard or self._env.discarding
            return sum(lane._close() for lane in lanes)
        finally:
            for lane in reversed(held):
                lane.mutex.release()

    def _wait_posts_settled(self) -> None:
        # Posts are settled once they have made every submission they owe: each
        # post that moved its lane Idle -> Scheduled owes one, counted by its lane.
        self._pool.wait_submissions(self._posts_owed)

    def _discard_queued(self) -> None:
        for lane in self._lanes:
            for item in lane._discard_all():
                self._offer_discarded(lane.index, item)

    def _offer_discarded(self, lane: int, item: T) -> None:
        on_discard = self._on_discard
        if on_discard is None:
            return
        # A raising hook must not wedge Stop half-way (workers never joined,
        # later items never reported): log it and go on with the next item.
        try:
            on_discard(lane, item)
        except BaseException:
            _log.exception("on_discard raised on lane %d for item %r", lane, item)

    # -- context manager -------------------------------------------------

    def __enter__(self) -> WorkerScheduler[T]:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        result = self.stop(StopMode.DRAIN if exc_type is None else StopMode.DISCARD)
        failure = self._failure
        if result is Result.UNKNOWN and exc_type is None and failure is not None:
            raise SchedulerFailed(failure.describe()) from failure.error


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

    ``options`` are the keyword arguments of ``WorkerScheduler``. Any bad
    argument, of a wrong type or value (or an unknown option), is
    INVALID_ARGUMENT; ``config_error`` says why.
    """
    try:
        scheduler: WorkerScheduler[T] = WorkerScheduler(
            lanes,
            workers=workers,
            lane_capacity=lane_capacity,
            max_per_drain=max_per_drain,
            ready_capacity=ready_capacity,
            **options,
        )
    except (TypeError, ValueError, AttributeError) as exc:
        # A refused argument, or a plug-in (factory, tracer) that did not fit.
        _log.debug("create refused its arguments: %s", exc)
        return Result.INVALID_ARGUMENT, None
    return Result.SUCCESS, scheduler


__all__ = [
    "LaneHandle",
    "LaneSpec",
    "SchedulerConfig",
    "SchedulerFailed",
    "SchedulerFailure",
    "Sizing",
    "StopMode",
    "WorkerScheduler",
    "checked_config",
    "config_error",
    "create",
]
