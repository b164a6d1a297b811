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
from collections.abc import Callable
from typing import TypeVar

from .failure import SchedulerFailed, SchedulerFailure
from .results import CAPACITY_EXCEEDED, INVALID_STATE, SUCCESS, Result
from .scheduler_config import (
    LaneHandle,
    LaneSpec,
    SchedulerConfig,
    Sizing,
    StopMode,
    checked_config,
    config_error,
)
from .tracing import Fields
from .work_lane import POST_ACCEPTED, POST_ACCEPTED_SUBMIT, POST_FULL, LaneEnv, WorkLane
from .work_lane_scheduler import LaneScheduler
from .worker_pool import WorkerPool

T = TypeVar("T")
R = TypeVar("R")


_log = logging.getLogger("reference")


class WorkerScheduler(LaneScheduler[T, WorkLane[T]]):
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

    _NAME = "WorkerScheduler"
    _lane_class = WorkLane
    _pool_class = WorkerPool
    _env_class = LaneEnv
    _env: LaneEnv

    def _built(self) -> None:
        # Bound once: the post path indexes these instead of looking methods up per item.
        self._publishers = [lane._publish for lane in self._lanes]
        self._posts_owed = 0  # submissions owed by accepted posts when admission closed

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
                    return INVALID_STATE
                try:
                    outcome = self._publishers[index](item)
                    if outcome is POST_ACCEPTED:
                        return SUCCESS
                    if outcome is POST_ACCEPTED_SUBMIT:
                        self._submit(self._lanes[index])
                        return SUCCESS
                except Exception as exc:
                    self._fail(exc)
                    raise
                return CAPACITY_EXCEEDED if outcome is POST_FULL else INVALID_STATE
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

    # -- the Stop protocol's hooks (``work_lane_scheduler.LaneScheduler.stop``) --

    def _trace(self, event: str, fields: Fields) -> None:
        tracer = self._tracer
        if tracer is not None:
            tracer.emit(self._runtime.thread_name(), event, fields)

    def _stop_new_drains(self) -> None:
        self._env.discarding = True  # no new drain begins; Stop reports what is queued

    def _empty_lane(self, lane: WorkLane[T]) -> list[T]:
        return lane._discard_all()

    def _close(self, mode: StopMode) -> None:
        self._posts_owed = self._close_lanes()

    def _stop_workers(self, mode: StopMode) -> None:
        self._wait_posts_settled()
        if self._failure is not None:
            return
        # After every submission that accepted posts owed, so every accepted post is
        # linearised, submission included, before stop_begin.
        if mode is StopMode.DISCARD:
            self._holding_every_lane(self._begin_discard)
        else:
            self._trace("stop_begin", {"mode": mode.value})
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

    def _close_lanes(self) -> int:
        # Every lane mutex at once, so each post is wholly before the close or sees it: no
        # post is accepted after one was refused.
        return self._holding_every_lane(lambda: sum(lane._close() for lane in self._lanes))

    def _begin_discard(self) -> None:
        # Stop(discard) takes effect at its stop_begin (the trace format), not when admission
        # closed: with every lane mutex held, each drain's decision (``WorkLane._begin_drain``,
        # under its lane's) is wholly before both the flag and the log (its drain_begin logged
        # first) or after both (its work item given up after stop_begin).
        self._env.discarding = True
        self._trace("stop_begin", {"mode": StopMode.DISCARD.value})

    def _holding_every_lane(self, step: Callable[[], R]) -> R:
        # In index order: posts and drains hold one lane mutex at a time.
        held: list[WorkLane[T]] = []
        try:
            for lane in self._lanes:
                lane.mutex.acquire()
                held.append(lane)
            return step()
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


# The ToolKit-style factory: ``(SUCCESS, scheduler)`` or ``(INVALID_ARGUMENT, None)``. ``options``
# are the keyword arguments of ``WorkerScheduler``; any bad argument, of a wrong type or value
# (or an unknown option), is INVALID_ARGUMENT, and ``config_error`` says why.
create = WorkerScheduler.create


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
