"""The lock-free Work Lane scheduler: the ToolKit's current one, with no lane mutex.

    result, sched = create([LaneSpec(invoke, ctx), ...], workers=2, lane_capacity=64, max_per_drain=8)
    result, handle = sched.get_lane(0)
    sched.try_post(handle, item)        # Result.SUCCESS, CAPACITY_EXCEEDED, ...
    sched.stop(StopMode.DRAIN)

The public API, its argument checks and Result codes, Stop's modes and the failed state are
those of the lock-based ``reference.scheduler.WorkerScheduler``. What differs is inside
(``work_lane_lockfree_lane``): a lane is an atomic word changed by CAS and a lock-free queue;
a post is *push, then CAS Idle -> Scheduled*; a drain ends *CAS Draining -> Idle, re-check,
CAS Idle -> Scheduled*. The spec is ``spec/work_lane_lockfree.py``; docs/work-lane-lockfree.md
compares the two designs.

**Admission without lane mutexes.** The lock-based Stop closes admission by holding every lane
mutex. Here one atomic word counts the posts in flight and carries a CLOSED bit: a post enters
with a CAS that fails once CLOSED is set (the spec's ``Admit``; a post that sees CLOSED is
INVALID_STATE, ``PostRefused``) and leaves when it has pushed, CASed and, if it won, submitted.
Stop sets CLOSED and waits until no post is in flight (``StopBegin``); the last post to leave
wakes it (a runtime lock and condition on Stop's side only, taken by a post only when Stop
waits for it). So every accepted post, submission included, precedes ``stop_begin``.

**Tracing.** A ``tracer`` receives trace format version 2 events (design ``work-lane-lockfree``,
one per atomic step; ``work_lane_lockfree_lane``); write its lines after ``trace_header(config)``.

**Stop(discard) and the refused submission** (the spec's decision, docs/work-lane-lockfree.md):
from ``stop_begin`` on the pool refuses a worker's owed resubmission (``LockFreePool.offer``);
that lane stays Scheduled with its items and no work item. The reset, which runs once the
workers are joined, takes every lane's items out and reports each one (``on_discard`` and the
``discard`` event) before it sets the word Idle, so the refused submission loses nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from functools import partial
from typing import TypeVar

from .failure import SchedulerFailed, SchedulerFailure
from .results import CAPACITY_EXCEEDED, INVALID_STATE, SUCCESS, Result
from .runtime import Runtime
from .scheduler_config import LaneHandle, LaneSpec, Sizing, StopMode
from .tracing import TRACE_NAME, Fields, Tracer
from .work_lane import POST_ACCEPTED_SUBMIT, POST_FULL
from .work_lane_lockfree_lane import LockFreeEnv, LockFreeLane
from .work_lane_scheduler import LaneScheduler
from .worker_pool import WorkerPool, WorkItem

T = TypeVar("T")

_log = logging.getLogger("reference")

# This design's traces: per-atomic-step events (docs/trace-format.md, "Trace format v2").
TRACE_DESIGN = "work-lane-lockfree"
TRACE_VERSION = 2


def trace_header(config: Mapping[str, int]) -> Fields:
    """The header line of a trace of this scheduler (``reference.tracing.header`` is work-lane's)."""
    return {"trace": TRACE_NAME, "version": TRACE_VERSION, "design": TRACE_DESIGN, "config": dict(config)}


# The admission word: bit 0 is CLOSED, the rest counts the posts in flight.
CLOSED = 1
ONE_POST = 2


class LockFreePool(WorkerPool):
    """``reference.worker_pool.WorkerPool`` plus Stop(discard)'s refusal of resubmissions."""

    def __init__(self, workers: int, capacity: int, runtime: Runtime, tracer: Tracer | None = None) -> None:
        super().__init__(workers, capacity, runtime, tracer)
        self._refusing = False  # guarded by _mutex

    def refuse_submissions(self, then: Callable[[], None]) -> None:
        """From now on ``offer`` refuses; ``then`` runs in the same critical section (the event
        that marks the moment)."""
        with self._mutex:
            self._refusing = True
            then()

    def offer(self, item: WorkItem) -> bool:
        """A worker's resubmission: queued and a worker woken, or False once refusing."""
        with self._mutex:
            if self._refusing:
                tracer = self._tracer
                if tracer is not None:
                    tracer.emit(self._runtime.thread_name(), "submit_refused", {"lane": item.lane})
                return False
            self._enqueue(item)
            self._notify_worker()
            return True


class LockFreeScheduler(LaneScheduler[T, LockFreeLane[T]]):
    """Runs each lane's items in order, one at a time, on a shared pool of workers; no lane mutex.

    Arguments, callbacks, Result codes, the context manager and the failed state are those of
    ``reference.scheduler.WorkerScheduler`` (see its docstring): ``on_error(lane, item, exc)``
    gets what ``invoke`` raised, ``on_discard(lane, item)`` each item dropped by
    ``stop(StopMode.DISCARD)`` or by the Stop of a failed scheduler, ``item_label(item)`` names
    an item in trace events; ``lane_factory``/``pool_factory`` plug in checkers' variants.
    """

    _NAME = "LockFreeScheduler"
    _lane_class = LockFreeLane
    _pool_class = LockFreePool
    _env_class = LockFreeEnv
    _env: LockFreeEnv
    _pool: LockFreePool

    def _built(self) -> None:
        if not isinstance(self._pool, LockFreePool):
            raise TypeError(f"pool_factory must make a LockFreePool, got {type(self._pool).__name__}")
        self._admission = self._runtime.atomic_int(0, name="scheduler.admission")
        self._settle_lock = self._runtime.lock(name="scheduler.settle")
        self._settled = self._runtime.condition(self._settle_lock, name="scheduler.settled")

    # -- TryPost ---------------------------------------------------------

    def try_post(self, handle: LaneHandle, item: T) -> Result:
        """Queue ``item`` on the handle's lane without blocking: SUCCESS (accepted; ``invoke`` may
        have started already), or INVALID_ARGUMENT (not a handle of this scheduler),
        CAPACITY_EXCEEDED (the lane is full), INVALID_STATE (Stop began, or the scheduler failed),
        each leaving the item with the caller. If our own code raises, the scheduler fails and
        the exception propagates; an accepted item is then reported by Stop."""
        if handle.__class__ is LaneHandle and handle.scheduler is self:
            index = handle.lane
            if index.__class__ is int and 0 <= index < self._lane_count:
                if self._failure is not None:
                    return INVALID_STATE
                lane = self._lanes[index]
                if not self._admit():
                    lane.trace_refused(item)
                    return INVALID_STATE
                try:
                    outcome = lane.publish(item)
                    if outcome is POST_ACCEPTED_SUBMIT:
                        self._pool.submit(self._work_items[index])
                except Exception as exc:
                    self._fail(exc)
                    raise
                finally:
                    self._leave()
                return CAPACITY_EXCEEDED if outcome is POST_FULL else SUCCESS
        self._env.emit(
            "post", {"lane": None, "item": self._env.item_label(item), "result": "invalid_argument"}
        )
        return Result.INVALID_ARGUMENT

    def _admit(self) -> bool:
        """Enter as a post in flight, unless admission is closed (then Stop has begun)."""
        admission = self._admission
        word = admission.load()
        while not word & CLOSED:
            if admission.compare_and_swap(word, word + ONE_POST):
                return True
            word = admission.load()
        return False

    def _leave(self) -> None:
        if self._admission.fetch_add(-ONE_POST) == CLOSED | ONE_POST:
            # The last post in flight after admission closed: Stop may be waiting for it.
            with self._settle_lock:
                self._settled.notify_all()

    # -- the workers' side -----------------------------------------------

    def _drain_lane(self, lane: LockFreeLane[T]) -> None:
        # What this raises is our own fault (invoke's errors go to on_error): the pool logs it
        # and reports it to ``_fail``. A refused resubmission (Stop(discard) has begun) leaves
        # the lane Scheduled with its items: the reset reports them.
        if lane.drain() and not self._pool.offer(self._work_items[lane.index]):
            _log.debug(
                "lane %d: resubmission refused by Stop(discard); the reset reports its items", lane.index
            )

    # -- the Stop protocol's hooks (``work_lane_scheduler.LaneScheduler.stop``) --

    def _trace(self, event: str, fields: Fields) -> None:
        self._env.emit(event, fields)

    def _stop_new_drains(self) -> None:
        self._env.discarding.store(1)

    def _empty_lane(self, lane: LockFreeLane[T]) -> list[T]:
        return lane.reset()

    def _close(self, mode: StopMode) -> None:
        self._admission.fetch_add(CLOSED)

    def _stop_workers(self, mode: StopMode) -> None:
        self._wait_posts_settled()
        begin = partial(self._trace, "stop_begin", {"mode": mode.value})
        if mode is StopMode.DISCARD:
            self._pool.refuse_submissions(partial(self._begin_discard, begin))
        else:
            begin()
        # Every post has settled, so a lane holds items only with its work item queued or held
        # by a worker (which resubmits inside its callback): a quiet pool means every lane is
        # Idle and empty (drain), or no drain runs and none will begin (discard).
        self._pool.wait_quiescent()
        if self._failure is not None:
            return
        if mode is StopMode.DISCARD:
            for lane in self._lanes:
                for item in lane.reset():
                    self._offer_discarded(lane.index, item)
        else:
            self._check_drained()
        self._pool.clear()
        self._pool.shutdown()

    def _begin_discard(self, begin: Callable[[], None]) -> None:
        # Stop(discard) takes effect at its stop_begin (the trace format), not when admission
        # closed. Under the pool's mutex, so no worker takes a work item between the flag and the
        # event: one that gives its work item up on seeing the flag logs its next take after
        # stop_begin. Traced, each lane's drain_begin that saw the flag unset is logged first.
        self._env.discarding.store(1)
        for lane in self._lanes:
            lane.settle_drain_begin()
        begin()

    def _wait_posts_settled(self) -> None:
        # Not given up on a failure, unlike the pool's waits: a post in flight leaves in a
        # ``finally`` after a bounded number of steps, and the reset must come after its push.
        with self._settle_lock:
            while self._admission.load() != CLOSED:
                self._settled.wait()

    def _check_drained(self) -> None:
        # A lane with items here is a bug (a lost wakeup, or a post Stop did not wait for).
        # Failing reports its items instead of returning SUCCESS over them.
        for lane in self._lanes:
            queued = len(lane.queue)
            if queued:
                raise RuntimeError(
                    f"lane {lane.index} holds {queued} item(s) and is {lane.state_name()} after "
                    "Stop(drain) found the pool quiet: nobody will run them (a lost wakeup)"
                )


# The ToolKit-style factory: ``(SUCCESS, scheduler)`` or ``(INVALID_ARGUMENT, None)``
# (``reference.scheduler_config.config_error`` says why).
create = LockFreeScheduler.create


__all__ = [
    "LaneHandle",
    "LaneSpec",
    "LockFreePool",
    "LockFreeScheduler",
    "SchedulerFailed",
    "SchedulerFailure",
    "Sizing",
    "StopMode",
    "create",
    "trace_header",
]
