"""What the two Work Lane schedulers share: handles, the Stop protocol's frame, the failed state,
the context manager and the ToolKit-style factory.

``reference.scheduler.WorkerScheduler`` (lane mutexes) and
``reference.work_lane_lockfree.LockFreeScheduler`` (CAS lane words) differ in how a post is
admitted and published, how admission closes and how a lane is emptied; those are the hooks
below. The public contract -- Result codes, Stop's answers, what a failure reports -- is this
class's, so the two cannot drift apart.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from enum import Enum
from functools import partial
from typing import Any, Generic, Protocol, Self, TypeVar

from . import arguments
from .failure import FailureState, SchedulerFailure
from .results import Result
from .runtime import DEFAULT_RUNTIME, LockLike, Runtime
from .scheduler_config import (
    LaneHandle,
    LaneSpec,
    SchedulerConfig,
    Sizing,
    StopMode,
    check_options,
    checked_config,
)
from .tracing import Fields, Tracer, default_label
from .work_lane import SharedEnv, log_error
from .worker_pool import WorkerPool, WorkItem

T = TypeVar("T")

_log = logging.getLogger("reference")


class State(Enum):
    """The scheduler's life (``_state``, under ``_state_lock``; never read on the post path)."""

    RUNNING = "running"  # until a Stop begins
    STOPPING = "stopping"  # a Stop is closing admission, waiting for the workers or discarding
    STOPPED = "stopped"  # a Stop returned (SUCCESS, or UNKNOWN for a failed scheduler)


class Lane(Protocol):
    @property
    def index(self) -> int: ...


L = TypeVar("L", bound=Lane)


def _workers_joined() -> None:
    """A stopped scheduler's work items' callback (``LaneScheduler._unlink_workers``): its pool's
    workers are joined, so nothing calls it."""
    raise RuntimeError("a work item ran after Stop joined its pool's workers")


def _logged(step: Callable[[], object]) -> bool:
    """One step of a failed scheduler's Stop: what it raises is logged and Stop goes on. Did it
    return?"""
    try:
        step()
    except Exception:
        _log.exception("Stop of a failed scheduler: %s raised", getattr(step, "__name__", step))
        return False
    return True


# A factory argument not given: the class's own (``None`` given is refused, like any non-callable).
_DEFAULT: Any = object()

PoolFactory = Callable[[int, int, Runtime, "Tracer | None"], WorkerPool]


class LaneScheduler(FailureState, Generic[T, L]):
    """The shared frame. A subclass names its lane, pool and environment classes and implements
    the hooks: ``_built``, ``_drain_lane``, ``_trace``, ``_close``, ``_stop_workers``,
    ``_stop_new_drains``, ``_empty_lane``."""

    _lane_class: Callable[..., L]
    _pool_class: PoolFactory
    _env_class: type[SharedEnv]

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
        lane_factory: Callable[[int, Callable[[Any, Any], object], Any, Any], L] = _DEFAULT,
        pool_factory: PoolFactory = _DEFAULT,
        sizing: Sizing = Sizing.TOOLKIT,
    ) -> None:
        lane_factory = self._lane_class if lane_factory is _DEFAULT else lane_factory
        pool_factory = self._pool_class if pool_factory is _DEFAULT else pool_factory
        specs, self.config = checked_config(
            lanes, workers, lane_capacity, max_per_drain, ready_capacity, sizing
        )
        check_options(
            runtime=runtime,
            tracer=tracer,
            on_error=on_error,
            on_discard=on_discard,
            item_label=item_label,
            lane_factory=lane_factory,
            pool_factory=pool_factory,
        )
        self.sizing = sizing
        self._runtime = rt = DEFAULT_RUNTIME if runtime is None else runtime
        self._tracer = tracer
        self._on_discard = on_discard
        self._env = self._env_class(
            runtime=rt,
            capacity=self.config.lane_capacity,
            budget=self.config.max_per_drain,
            tracer=tracer,
            label=default_label if item_label is None else item_label,
            on_error=log_error if on_error is None else on_error,
        )
        self._lanes = [lane_factory(i, spec.invoke, spec.context, self._env) for i, spec in enumerate(specs)]
        self._lane_count = len(self._lanes)
        self._work_items = [WorkItem(partial(self._drain_lane, lane), lane.index) for lane in self._lanes]
        self._pool = pool_factory(self.config.workers, self.config.ready_capacity, rt, tracer)
        self._pool.on_failure = self._fail
        self._built()
        self._state_lock = rt.lock(name="scheduler.state")
        self._state = State.RUNNING
        self._failure = None
        if tracer is not None:
            tracer.begin(self.config.as_trace_config())
        try:
            self._pool.start()
        except BaseException:
            # Some workers may be running: do not leave them behind a constructor that failed.
            self._pool.shutdown()
            raise

    config: SchedulerConfig
    sizing: Sizing
    _runtime: Runtime
    _tracer: Tracer | None
    _on_discard: Callable[[int, T], None] | None
    _lanes: list[L]
    _lane_count: int
    _work_items: list[WorkItem]
    _pool: WorkerPool
    _state_lock: LockLike
    _state: State  # guarded by _state_lock
    # Set once, by the first fault of our own code; read without the lock on the post path.
    _failure: SchedulerFailure | None

    _NAME = "LaneScheduler"  # the public class's name, in reprs (a checker's subclass keeps it)

    def __repr__(self) -> str:
        failed = ", failed" if self._failure is not None else ""
        return f"{self._NAME}({self.config}, state={self._state.value}{failed})"

    # -- hooks -----------------------------------------------------------

    def _built(self) -> None:
        """The lanes and the pool exist: make what else the design needs (before the state lock)."""

    def _drain_lane(self, lane: L) -> None:
        """A worker's call of the lane's work item."""
        raise NotImplementedError

    def _trace(self, event: str, fields: Fields) -> None:
        """Emit one scheduler-level event (Stop's), if tracing."""
        raise NotImplementedError

    def _close(self, mode: StopMode) -> None:
        """Close admission on every lane (under the state lock, the state just set to STOPPING)."""
        raise NotImplementedError

    def _stop_workers(self, mode: StopMode) -> None:
        """Wait for the posts in flight, let the pool go quiet, drain or discard, join the workers."""
        raise NotImplementedError

    def _stop_new_drains(self) -> None:
        """From now on no drain begins (a failure, or the Stop of a failed scheduler)."""
        raise NotImplementedError

    def _empty_lane(self, lane: L) -> list[T]:
        """Take every item out of a lane whose workers are joined."""
        raise NotImplementedError

    # -- handles ---------------------------------------------------------

    def get_lane(self, index: int) -> tuple[Result, LaneHandle]:
        """The handle of lane ``index``: INVALID_ARGUMENT if it is not an ``int`` in range (``True`` is
        not), INVALID_STATE once Stop began or the scheduler failed."""
        if not arguments.index(index, self._lane_count):
            return Result.INVALID_ARGUMENT, LaneHandle()
        with self._state_lock:
            if self._state is not State.RUNNING or self._failure is not None:
                return Result.INVALID_STATE, LaneHandle()
        return Result.SUCCESS, LaneHandle(self, int(index))

    @property
    def lane_count(self) -> int:
        return self._lane_count

    @property
    def running(self) -> bool:
        """True until a Stop begins or the scheduler fails."""
        with self._state_lock:
            return self._state is State.RUNNING and self._failure is None

    @property
    def stopped(self) -> bool:
        """True once a Stop has finished."""
        with self._state_lock:
            return self._state is State.STOPPED

    # -- failure ---------------------------------------------------------

    def _fail(self, error: BaseException) -> None:
        """Our own code raised: enter the failed state (the first fault is kept).

        No lane is locked here (the fault may come from any step); posts see the failure
        before their lane, no new drain begins, and Stop takes everything out of the lanes.
        The pool's waits are abandoned, so a Stop waiting on counts that the fault may have
        left wrong returns instead of hanging.
        """
        with self._state_lock:
            if self._failure is None:
                self._failure = SchedulerFailure(error)
        self._stop_new_drains()
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
        self._unlink_workers()  # ``_stop_workers`` returned: it joined them
        with self._state_lock:
            self._state = State.STOPPED
            self._trace("stop_end", {"mode": mode.value, "result": "ok"})
        return Result.SUCCESS

    def _unlink_workers(self) -> None:
        """The workers are joined: nothing runs a work item or reports a fault through the pool
        any more. Drop what leads from the pool and the work items back to this scheduler (the
        failure hook, each work item's drain callback): they are the reference cycles a
        scheduler makes, and a stopped scheduler is then freed by reference counting when its
        last user lets go, not left to the cyclic collector. (The harness builds a scheduler per
        explored execution; the collector's passes over them were about 6% of its time.) A
        work item submitted after the join, as a broken Stop might, still waits in the ready
        queue with nobody to run it, as before."""
        self._pool.on_failure = None
        for item in self._work_items:
            item.callback = _workers_joined

    def _close_admission(self, mode: StopMode) -> Result | None:
        in_callback = self._pool.is_worker(self._runtime.current_thread())
        with self._state_lock:
            if self._state is State.STOPPED:
                return Result.SUCCESS if self._failure is None else Result.UNKNOWN
            stopping = self._state is State.STOPPING
            reason = "in_callback" if in_callback else "stop_in_progress" if stopping else None
            if reason is not None:
                self._trace("stop_rejected", {"mode": mode.value, "reason": reason})
                return Result.INVALID_STATE
            self._state = State.STOPPING
            # Still under the state lock, so a Stop refused as "in progress" is ordered after
            # admission closed.
            self._close(mode)
            return None

    def _stop_failed(self, mode: StopMode) -> Result:
        """Stop of a failed scheduler: join the workers, then report every item left in a lane."""
        failure = self._failure
        assert failure is not None
        self._stop_new_drains()
        _logged(self._pool.clear)
        if _logged(self._pool.shutdown):
            self._unlink_workers()
        # The workers are joined: nothing pops any more, so each item is here or was invoked.
        for lane in self._lanes:
            try:
                items = self._empty_lane(lane)
            except Exception:
                _log.exception("Stop of a failed scheduler: emptying lane %d raised", lane.index)
                continue
            for item in items:
                failure.discarded.append((lane.index, item))
                self._offer_discarded(lane.index, item)
        _log.error("%s", failure.describe())
        with self._state_lock:
            self._state = State.STOPPED
            self._trace("stop_end", {"mode": mode.value, "result": "failed"})
        return Result.UNKNOWN

    def _offer_discarded(self, lane: int, item: T) -> None:
        on_discard = self._on_discard
        if on_discard is None:
            return
        # A raising hook must not wedge Stop half-way (workers never joined, later items never
        # reported): log it and go on with the next item.
        try:
            on_discard(lane, item)
        except BaseException:
            _log.exception("on_discard raised on lane %d for item %r", lane, item)

    # -- the ToolKit-style factory ----------------------------------------

    @classmethod
    def create(
        cls,
        lanes: Sequence[LaneSpec[T]],
        *,
        workers: int,
        lane_capacity: int,
        max_per_drain: int,
        ready_capacity: int | None = None,
        **options: Any,
    ) -> tuple[Result, Self | None]:
        """``(SUCCESS, scheduler)``, or ``(INVALID_ARGUMENT, None)`` for any bad argument, of a wrong
        type or value (or an unknown option); ``options`` are the constructor's keyword arguments,
        and ``reference.scheduler_config.config_error`` says why one was refused."""
        try:
            scheduler = cls(
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

    # -- context manager -------------------------------------------------

    def _stop_on_exit(self, exc_type: type[BaseException] | None) -> Result:
        # The producer side failed when the block raised: its queued items are not run.
        return self.stop(StopMode.DRAIN if exc_type is None else StopMode.DISCARD)
