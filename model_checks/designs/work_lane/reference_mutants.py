"""Seeded bugs in the *real* reference code, as named subclasses that override one seam each.

Production code carries no bugs on purpose; these variants live with the checks.
Each is plugged into an otherwise unchanged ``WorkerScheduler`` through its
``lane_factory`` / ``pool_factory`` seams (or is a ``WorkerScheduler``
subclass), so the harness runs exactly the production algorithm but for one
step. ``REFERENCE_MUTANTS`` names them for the harness scenarios and tests,
with the property a checker must report and the spec mutant that is the same
bug one level up (for "one counterexample, three places").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from model_checks.mutant import by_name
from reference.scheduler import WorkerScheduler
from reference.work_lane import DRAINING, IDLE, SCHEDULED, PostOutcome, WorkLane
from reference.worker_pool import WorkerPool, WorkItem

T = TypeVar("T")


class CheckOutsideLockLane(WorkLane[T]):
    """BUG: the end-of-drain emptiness check is made before taking the lane mutex."""

    def _end_drain(self, invoked: int) -> bool:
        resubmit = len(self.queue) > 0  # a post may land right after this look ...
        with self.mutex:  # ... and see Draining, so it does not submit; we then write Idle.
            self.state = SCHEDULED if resubmit else IDLE
            tracer = self._tracer
            if tracer is not None:
                outcome = "resubmit" if resubmit else "idle"
                tracer.emit(
                    self._runtime.thread_name(),
                    "drain_end",
                    {"lane": self.index, "outcome": outcome, "invoked": invoked},
                )
        return resubmit


class IdleBeforeRecheckLane(WorkLane[T]):
    """BUG: the lane is written Idle first, then re-checked and re-reserved unconditionally."""

    def _end_drain(self, invoked: int) -> bool:
        with self.mutex:
            self.state = IDLE  # a post arriving now reserves the lane and submits it ...
            tracer = self._tracer
            if tracer is not None:
                tracer.emit(
                    self._runtime.thread_name(),
                    "drain_end",
                    {"lane": self.index, "outcome": "idle", "invoked": invoked},
                )
        with self.mutex:
            if not len(self.queue):
                return False
            self.state = SCHEDULED  # ... and we reserve it a second time.
            return True


class DoubleSubmitLane(WorkLane[T]):
    """BUG: a post to a Scheduled lane takes a second reservation (and submits again)."""

    def _publish(self, item: T) -> PostOutcome:
        with self._section:
            if not self.open:
                if self._tracer is not None:
                    self._trace_post(item, "invalid_state", False)
                return PostOutcome.CLOSED
            self.probing = True
            try:
                if self.appended >= self.may_be_full_at and len(self.queue) >= self.capacity:
                    if self._tracer is not None:
                        self._trace_post(item, "capacity_exceeded", False)
                    return PostOutcome.FULL
                self.appended += 1
                self._section + item
                if self.state is not DRAINING:  # should be: is IDLE
                    self.state = SCHEDULED
                    self.posts_reserved += 1
                    if self._tracer is not None:
                        self._trace_post(item, "ok", True)
                    return PostOutcome.ACCEPTED_SUBMIT
                if self._tracer is not None:
                    self._trace_post(item, "ok", False)
                return PostOutcome.ACCEPTED
            finally:
                self.probing = False


class MissingNotifyPool(WorkerPool):
    """BUG: a submission never wakes an idle worker."""

    def _notify_worker(self) -> None:
        return None


class NotifyBeforePublishPool(WorkerPool):
    """BUG: the wake-up is sent in one critical section and the work item queued in another."""

    def submit(self, item: WorkItem, owed: bool = False) -> None:
        with self._mutex:
            self._notify_worker()  # the woken worker finds nothing and waits again ...
        with self._mutex:
            self._enqueue(item, owed)  # ... and nobody tells it about this one.


class IfNotWhilePool(WorkerPool):
    """BUG: ``if`` instead of ``while`` around the condition wait (a spurious wakeup slips through)."""

    def _wait_for_work(self) -> None:
        self._idle_workers += 1
        if not self._ready and not self._shutdown:
            self._work_ready.wait()
        self._idle_workers -= 1


class NoChainedWakePool(WorkerPool):
    """BUG: a worker that takes a work item and leaves others queued wakes no parked worker."""

    def _wake_another(self) -> None:
        return None  # the second lane waits behind the first one's (blocking) invoke


class ParkWithoutRecheckPool(WorkerPool):
    """BUG: a worker decides to park on a look at the queue taken before the pool mutex."""

    def _take(self, finished: bool) -> WorkItem | None:
        empty = not self._ready  # a submission may land right after this look ...
        with self._mutex:
            if finished:
                self._active -= 1
                if self._quiescence_waiters:
                    self._notify_if_quiescent()
            if empty and not self._shutdown:
                # ... find no worker parked, so wake none; we then park without re-checking.
                self._idle_workers += 1
                self._work_ready.wait()
                self._waking = False
                self._idle_workers -= 1
        return super()._take(False)


class StopSkipsInflightScheduler(WorkerScheduler[T]):
    """BUG: Stop closes admission without taking the lane mutexes, so it does not wait for a post
    that already passed the admission check: that post publishes after Stop(drain) returned."""

    def _close_lanes(self) -> int:
        # The flags are written racily; the yield point declares that shared access to a checker
        # (it sees only runtime primitives), so it may run a post on either side of it.
        self._runtime.yield_point("close admission without the lane mutexes")
        return sum(lane._close() for lane in self._lanes)


class StopSkipsOwedSubmitScheduler(WorkerScheduler[T]):
    """BUG: Stop(drain) does not wait for the submissions that accepted posts still owe."""

    def _wait_posts_settled(self) -> None:
        return None  # the pool looks quiet while a lane is Scheduled with its work item unsubmitted


@dataclass(frozen=True)
class ReferenceMutant:
    name: str
    doc: str
    # Builds a scheduler of this variant: same signature as ``WorkerScheduler``.
    build: Callable[..., WorkerScheduler[Any]]
    expect: str  # the kind of failure a harness run must report (harness ``Failure.kind``)
    spec_variant: str | None = None  # the same bug in the spec, when there is one
    spurious_wakeups: bool = False  # needs Condition.wait to return spuriously to show
    # The smallest harness scenario that shows it, as ``LaneScenario`` fields.
    scenario: dict[str, Any] = field(default_factory=dict)


def _with(**factories: Any) -> Callable[..., WorkerScheduler[Any]]:
    def build(*args: Any, **kwargs: Any) -> WorkerScheduler[Any]:
        return WorkerScheduler(*args, **{**kwargs, **factories})

    return build


ONE_LANE_TWO_ITEMS = {"producers": 1, "items": 2, "lanes": 1, "workers": 1, "budget": 1, "capacity": 2}
ONE_ITEM = {"producers": 1, "items": 1, "lanes": 1, "workers": 1}
LANES_IN_PARALLEL = {"producers": 1, "items": 2, "lanes": 2, "workers": 2}
LANES_IN_PARALLEL.update(rendezvous=True, traced=False)


REFERENCE_MUTANTS: dict[str, ReferenceMutant] = by_name(
    ReferenceMutant(
        "check-outside-lock",
        "the end-of-drain emptiness check outside the lane lock",
        _with(lane_factory=CheckOutsideLockLane),
        expect="assertion",  # Stop(drain) returns with an accepted item never invoked
        spec_variant="split-idle",
        scenario=ONE_LANE_TWO_ITEMS,
    ),
    ReferenceMutant(
        "idle-before-recheck",
        "the Idle write before the re-check",
        _with(lane_factory=IdleBeforeRecheckLane),
        # The lane is submitted twice: the ready queue overflows, the scheduler fails loudly
        # (its own code raised) and Stop returns UNKNOWN, which the scenario's final check
        # reports. Later in the search two workers would also drain the lane at once.
        expect="assertion",
        scenario={**ONE_LANE_TWO_ITEMS, "workers": 2},
    ),
    ReferenceMutant(
        "missing-notify",
        "a missing notify on the ready queue",
        _with(pool_factory=MissingNotifyPool),
        expect="lost_wakeup",
        scenario=ONE_ITEM,
    ),
    ReferenceMutant(
        "notify-before-publish",
        "the notify outside the critical section that queues the work item",
        _with(pool_factory=NotifyBeforePublishPool),
        expect="lost_wakeup",
        scenario=ONE_ITEM,
    ),
    ReferenceMutant(
        "if-not-while",
        "`if` instead of `while` around the ready-queue condition wait",
        _with(pool_factory=IfNotWhilePool),
        expect="lost_wakeup",
        spurious_wakeups=True,
        scenario=ONE_ITEM,
    ),
    ReferenceMutant(
        "no-chained-wake",
        "no wake-up from a worker that takes a work item and leaves others queued",
        _with(pool_factory=NoChainedWakePool),
        expect="lost_wakeup",  # lane 0's invoke waits for lane 1, queued behind it; w1 stays parked
        scenario=LANES_IN_PARALLEL,
    ),
    ReferenceMutant(
        "park-without-recheck",
        "a worker parking on a look at the ready queue taken outside the pool mutex",
        _with(pool_factory=ParkWithoutRecheckPool),
        expect="lost_wakeup",
        scenario={**ONE_ITEM, "traced": False},
    ),
    ReferenceMutant(
        "double-submit",
        "a post to a Scheduled lane submitting again",
        _with(lane_factory=DoubleSubmitLane),
        expect="exception",  # the ready queue overflows: the pool refuses a second work item
        spec_variant="double-reserve",
        scenario=ONE_LANE_TWO_ITEMS,
    ),
    ReferenceMutant(
        "stop-skips-inflight",
        "Stop(drain) not waiting for posts in flight",
        StopSkipsInflightScheduler,
        expect="assertion",  # an item accepted after Stop(drain) returned is never invoked
        spec_variant="stop-skips-inflight",
        scenario={**ONE_ITEM, "stop_races_posts": True},
    ),
    ReferenceMutant(
        "stop-skips-owed-submit",
        "Stop(drain) not waiting for the submissions accepted posts owe",
        StopSkipsOwedSubmitScheduler,
        expect="assertion",  # Stop returns before the submission; the accepted item never runs
        scenario={**ONE_ITEM, "stop_races_posts": True},
    ),
)
