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
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from functools import partial
from typing import Any, Generic, TypeVar

from . import arguments
from .failure import SchedulerFailed, SchedulerFailure
from .results import Result
from .runtime import DEFAULT_RUNTIME, Runtime
from .scheduler_config import LaneHandle, LaneSpec, Sizing, StopMode, check_options, checked_config
from .tracing import TRACE_NAME, Fields, Tracer
from .work_lane import default_label, log_error
from .work_lane_lockfree_lane import LockFreeEnv, LockFreeLane, PostOutcome
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


LaneFactory = Callable[[int, Callable[[Any, Any], object], Any, LockFreeEnv], LockFreeLane[Any]]
PoolFactory = Callable[[int, int, Runtime, "Tracer | None"], LockFreePool]


class _State(Enum):
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"


_RUNNING = _State.RUNNING
_STOPPING = _State.STOPPING
_STOPPED = _State.STOPPED
_FULL = PostOutcome.FULL
_ACCEPTED_SUBMIT = PostOutcome.ACCEPTED_SUBMIT
_SUCCESS = Result.SUCCESS
_CAPACITY_EXCEEDED = Result.CAPACITY_EXCEEDED
_INVALID_STATE = Result.INVALID_STATE


class LockFreeScheduler(Generic[T]):
    """Runs each lane's items in order, one at a time, on a shared pool of workers; no lane mutex.

    Arguments, callbacks, Result codes, the context manager and the failed state are those of
    ``reference.scheduler.WorkerScheduler`` (see its docstring): ``on_error(lane, item, exc)``
    gets what ``invoke`` raised, ``on_discard(lane, item)`` each item dropped by
    ``stop(StopMode.DISCARD)`` or by the Stop of a failed scheduler, ``item_label(item)`` names
    an item in trace events; ``lane_factory``/``pool_factory`` plug in checkers' variants.
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
        lane_factory: LaneFactory = LockFreeLane,
        pool_factory: PoolFactory = LockFreePool,
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
        self._env = LockFreeEnv(
            runtime=rt,
            capacity=self.config.lane_capacity,
            budget=self.config.max_per_drain,
            tracer=tracer,
            label=default_label if item_label is None else item_label,
            on_error=log_error if on_error is None else on_error,
        )
        self._lanes: list[LockFreeLane[T]] = [
            lane_factory(i, spec.invoke, spec.context, self._env) for i, spec in enumerate(specs)
        ]
        self._lane_count = len(self._lanes)
        self._work_items = [WorkItem(partial(self._drain_lane, lane), lane.index) for lane in self._lanes]
        self._pool = pool_factory(self.config.workers, self.config.ready_capacity, rt, tracer)
        if not isinstance(self._pool, LockFreePool):
            raise TypeError(f"pool_factory must make a LockFreePool, got {type(self._pool).__name__}")
        self._pool.on_failure = self._fail
        self._admission = rt.atomic_int(0, name="scheduler.admission")
        self._settle_lock = rt.lock(name="scheduler.settle")
        self._settled = rt.condition(self._settle_lock, name="scheduler.settled")
        self._state_lock = rt.lock(name="scheduler.state")
        self._state = _RUNNING  # guarded by _state_lock
        # Set once, by the first fault of our own code; read without the lock on the post path.
        self._failure: SchedulerFailure | None = None
        if tracer is not None:
            tracer.begin(self.config.as_trace_config())
        try:
            self._pool.start()
        except BaseException:
            self._pool.shutdown()
            raise

    def __repr__(self) -> str:
        failed = ", failed" if self._failure is not None else ""
        return f"LockFreeScheduler({self.config}, state={self._state.value}{failed})"

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
        """Queue ``item`` on the handle's lane without blocking: SUCCESS (accepted; ``invoke`` may
        have started already), or INVALID_ARGUMENT (not a handle of this scheduler),
        CAPACITY_EXCEEDED (the lane is full), INVALID_STATE (Stop began, or the scheduler failed),
        each leaving the item with the caller. If our own code raises, the scheduler fails and
        the exception propagates; an accepted item is then reported by Stop."""
        if handle.__class__ is LaneHandle and handle.scheduler is self:
            index = handle.lane
            if index.__class__ is int and 0 <= index < self._lane_count:
                if self._failure is not None:
                    return _INVALID_STATE
                lane = self._lanes[index]
                if not self._admit():
                    lane.trace_refused(item)
                    return _INVALID_STATE
                try:
                    outcome = lane.publish(item)
                    if outcome is _ACCEPTED_SUBMIT:
                        self._pool.submit(self._work_items[index])
                except Exception as exc:
                    self._fail(exc)
                    raise
                finally:
                    self._leave()
                return _CAPACITY_EXCEEDED if outcome is _FULL else _SUCCESS
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

    # -- failure ---------------------------------------------------------

    def _fail(self, error: BaseException) -> None:
        """Our own code raised: enter the failed state (the first fault is kept). Posts see it
        before their lane, no new drain begins, Stop's waits on the pool give up."""
        with self._state_lock:
            if self._failure is None:
                self._failure = SchedulerFailure(error)
        self._env.discarding.store(1)
        self._pool.abandon()

    # -- Stop ------------------------------------------------------------

    def stop(self, mode: StopMode = StopMode.DRAIN) -> Result:
        """Stop the scheduler and join its workers; SUCCESS if it is (already) stopped.

        INVALID_ARGUMENT if ``mode`` is not a ``StopMode`` (nothing happens). INVALID_STATE from
        one of this scheduler's callbacks or while another Stop is in progress. UNKNOWN if the
        scheduler failed: the workers are joined and every accepted item not yet invoked went to
        ``on_discard`` (and ``failure.discarded``).
        """
        if not isinstance(mode, StopMode):
            return Result.INVALID_ARGUMENT
        refusal = self._close_admission(mode)
        if refusal is not None:
            return refusal
        try:
            self._stop_workers(mode)
        except Exception as exc:
            _log.exception("Stop(%s) failed", mode.value)
            self._fail(exc)
        if self._failure is not None:
            return self._stop_failed(mode)
        with self._state_lock:
            self._state = _STOPPED
            self._env.emit("stop_end", {"mode": mode.value, "result": "ok"})
        return Result.SUCCESS

    def _close_admission(self, mode: StopMode) -> Result | None:
        in_callback = self._pool.is_worker(self._runtime.current_thread())
        with self._state_lock:
            if self._state is _STOPPED:
                return Result.SUCCESS if self._failure is None else Result.UNKNOWN
            reason = (
                "in_callback" if in_callback else "stop_in_progress" if self._state is _STOPPING else None
            )
            if reason is not None:
                self._env.emit("stop_rejected", {"mode": mode.value, "reason": reason})
                return Result.INVALID_STATE
            self._state = _STOPPING
            if mode is StopMode.DISCARD:
                self._env.discarding.store(1)  # before CLOSED: no drain begins after admission closed
            self._admission.fetch_add(CLOSED)
            return None

    def _stop_workers(self, mode: StopMode) -> None:
        self._wait_posts_settled()
        begin = partial(self._env.emit, "stop_begin", {"mode": mode.value})
        if mode is StopMode.DISCARD:
            self._pool.refuse_submissions(begin)
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

    def _stop_failed(self, mode: StopMode) -> Result:
        """Stop of a failed scheduler: join the workers, then report every item left in a lane."""
        failure = self._failure
        assert failure is not None
        self._env.discarding.store(1)
        for step in (self._pool.clear, self._pool.shutdown):
            try:
                step()
            except Exception:
                _log.exception("Stop of a failed scheduler: %s raised", step.__name__)
        for lane in self._lanes:  # workers joined: each item is in its lane or was invoked
            try:
                items = lane.reset()
            except Exception:
                _log.exception("Stop of a failed scheduler: emptying lane %d raised", lane.index)
                continue
            for item in items:
                failure.discarded.append((lane.index, item))
                self._offer_discarded(lane.index, item)
        _log.error("%s", failure.describe())
        with self._state_lock:
            self._state = _STOPPED
            self._env.emit("stop_end", {"mode": mode.value, "result": "failed"})
        return Result.UNKNOWN

    def _offer_discarded(self, lane: int, item: T) -> None:
        on_discard = self._on_discard
        if on_discard is None:
            return
        try:  # a raising hook must not wedge Stop half-way
            on_discard(lane, item)
        except BaseException:
            _log.exception("on_discard raised on lane %d for item %r", lane, item)

    # -- context manager -------------------------------------------------

    def __enter__(self) -> LockFreeScheduler[T]:
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
) -> tuple[Result, LockFreeScheduler[T] | None]:
    """The ToolKit-style factory: ``(SUCCESS, scheduler)`` or ``(INVALID_ARGUMENT, None)``
    (``reference.scheduler_config.config_error`` says why)."""
    try:
        scheduler: LockFreeScheduler[T] = LockFreeScheduler(
            lanes,
            workers=workers,
            lane_capacity=lane_capacity,
            max_per_drain=max_per_drain,
            ready_capacity=ready_capacity,
            **options,
        )
    except (TypeError, ValueError, AttributeError) as exc:
        _log.debug("create refused its arguments: %s", exc)
        return Result.INVALID_ARGUMENT, None
    return Result.SUCCESS, scheduler


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
