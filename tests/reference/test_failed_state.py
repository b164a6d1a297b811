"""The failed state: a fault of a scheduler's own code (Work Lane, Schedule Gate, Akka dispatcher)
fails it loudly, refuses what comes after, and loses nothing: every accepted item was run or reported."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from reference import (
    LaneSpec,
    Result,
    SchedulerFailed,
    StopMode,
    WorkerPool,
    WorkerScheduler,
    WorkLane,
)
from reference.akka_mailbox import Dispatcher, Send
from reference.schedule_gate import GateScheduler
from tests.helpers.discards import Discards
from tests.helpers.gated import Gated
from tests.helpers.waiting import wait_until

from .work_lane_config import GOOD, lane_specs


class _BudgetTurnsFloatLane(WorkLane[Any]):
    """The issue's fault, injected now that the constructor refuses it: range(2.0) in the drain."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.budget = 2.0  # type: ignore[assignment]


class _EndDrainRaisesLane(WorkLane[Any]):
    def _end_drain(self, invoked: int) -> bool:
        raise RuntimeError("end of drain broke")


class _TakeRaisesPool(WorkerPool):
    def _take(self, finished: bool) -> Any:
        if finished:  # the worker's loop breaks after its first work item
            raise RuntimeError("the pool's loop broke")
        return super()._take(finished)


class _QuiescenceRaisesPool(WorkerPool):
    def wait_quiescent(self) -> None:
        raise RuntimeError("stop's wait broke")


def _posted(scheduler: WorkerScheduler[Any], items: int, lanes: int = 1) -> list[Any]:
    accepted = []
    for k in range(items):
        handle = scheduler.get_lane(k % lanes)[1]
        if scheduler.try_post(handle, k) is Result.SUCCESS:
            accepted.append(k)
    return accepted


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "options",
    [
        {"lane_factory": _BudgetTurnsFloatLane},
        {"lane_factory": _EndDrainRaisesLane},
        {"pool_factory": _TakeRaisesPool},
    ],
    ids=["budget-turns-float", "end-drain-raises", "pool-loop-raises"],
)
def test_a_fault_of_the_schedulers_own_code_fails_it_loudly_and_loses_nothing(
    options: dict[str, Any],
) -> None:
    invoked: list[Any] = []
    discarded = Discards()
    scheduler = WorkerScheduler(
        [LaneSpec(lambda c, i: invoked.append(i))] * 2,
        workers=1,
        lane_capacity=4,
        max_per_drain=2,
        on_discard=discarded,
        **options,
    )
    accepted = _posted(scheduler, 6, lanes=2)
    assert accepted  # the posts before the fault were accepted
    wait_until(lambda: scheduler.failed, what="the scheduler's failure")
    assert not scheduler.running
    assert scheduler.try_post(scheduler.get_lane(0)[1], "late") is Result.INVALID_ARGUMENT  # no handle
    assert scheduler.get_lane(0)[0] is Result.INVALID_STATE
    assert scheduler.stop(StopMode.DRAIN) is Result.UNKNOWN
    failure = scheduler.failure
    assert failure is not None and isinstance(failure.error, TypeError | RuntimeError)
    assert failure.discarded == discarded
    # Every accepted item was invoked or reported; none twice.
    assert sorted(invoked + [item for _, item in discarded]) == accepted
    assert scheduler.stopped and scheduler.stop() is Result.UNKNOWN  # stays failed


@pytest.mark.timeout(20)
def test_a_post_after_the_failure_is_refused_with_invalid_state() -> None:
    scheduler = WorkerScheduler(lane_specs(2), **GOOD, lane_factory=_EndDrainRaisesLane)
    handle = scheduler.get_lane(1)[1]
    assert scheduler.try_post(scheduler.get_lane(0)[1], "a") is Result.SUCCESS
    wait_until(lambda: scheduler.failed, what="the scheduler's failure")
    assert scheduler.try_post(handle, "b") is Result.INVALID_STATE
    assert scheduler.stop() is Result.UNKNOWN


@pytest.mark.timeout(20)
def test_without_on_discard_the_failure_keeps_the_items() -> None:
    scheduler = WorkerScheduler(
        lane_specs(), workers=1, lane_capacity=4, max_per_drain=2, lane_factory=_BudgetTurnsFloatLane
    )
    accepted = _posted(scheduler, 4)
    assert accepted == [0, 1, 2, 3]
    assert scheduler.stop() is Result.UNKNOWN
    assert scheduler.failure is not None
    assert [item for _, item in scheduler.failure.discarded] == accepted


@pytest.mark.timeout(20)
def test_a_fault_during_stop_joins_the_workers_and_reports_the_items() -> None:
    invoke: Gated[Any] = Gated(timeout=5)
    scheduler = WorkerScheduler([LaneSpec(invoke)], **GOOD, pool_factory=_QuiescenceRaisesPool)
    accepted = _posted(scheduler, 3)
    invoke.gate.set()
    assert scheduler.stop(StopMode.DRAIN) is Result.UNKNOWN
    failure = scheduler.failure
    assert failure is not None and "stop's wait broke" in str(failure.error)
    assert sorted(invoke.seen + [item for _, item in failure.discarded]) == accepted


@pytest.mark.timeout(20)
def test_a_fault_while_stop_waits_does_not_hang_it() -> None:
    invoke: Gated[Any] = Gated(timeout=5)
    scheduler = WorkerScheduler([LaneSpec(invoke)], **GOOD, lane_factory=_EndDrainRaisesLane)
    accepted = _posted(scheduler, 3)
    assert invoke.started.wait(5)
    results: list[Result] = []
    stopper = threading.Thread(target=lambda: results.append(scheduler.stop(StopMode.DRAIN)))
    stopper.start()
    invoke.gate.set()  # the drain ends, and its end raises while Stop waits for a quiet pool
    stopper.join(10)
    assert results == [Result.UNKNOWN]
    assert scheduler.failure is not None
    assert len(scheduler.failure.discarded) == len(accepted) - 2  # the first drain ran two


@pytest.mark.timeout(20)
def test_leaving_a_with_block_of_a_failed_scheduler_raises() -> None:
    scheduler = WorkerScheduler(lane_specs(), **GOOD, lane_factory=_BudgetTurnsFloatLane)
    with pytest.raises(SchedulerFailed, match="1 accepted items") as info, scheduler:
        _posted(scheduler, 1)
        wait_until(lambda: scheduler.failed, what="the scheduler's failure")
    assert isinstance(info.value.__cause__, TypeError)


# --------------------------------------------------------------------------- Schedule Gate


class _DrainEndRaisesGate(GateScheduler[Any]):
    @staticmethod
    def _drain_end_word(old: int, budget_spent: bool) -> Any:
        raise RuntimeError("the drain's decision broke")


@pytest.mark.timeout(20)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_gate_fault_fails_it_loudly_and_loses_nothing() -> None:
    ran: list[object] = []
    discarded = Discards()
    sched = _DrainEndRaisesGate(
        [ran.append, ran.append],
        permits=2,
        workers=2,
        mailbox_capacity=8,
        max_per_drain=1,
        on_discard=discarded,
    )
    accepted = [k for k in range(6) if sched.post(k % 2, k) is Result.SUCCESS]
    wait_until(lambda: sched.failed, what="the gate's failure")
    assert sched.post(0, "late") is Result.INVALID_STATE
    assert sched.stop() is Result.UNKNOWN
    assert sched.failure is not None and sched.failure.discarded == discarded
    assert sorted([*ran, *(e for _, e in discarded)]) == accepted
    assert sched.stop() is Result.UNKNOWN


# --------------------------------------------------------------------------- Akka mailbox


@pytest.mark.timeout(20)
def test_a_dispatcher_fault_fails_it_loudly_and_loses_nothing() -> None:
    from reference.akka_mailbox import Mailbox

    class IdleRaisesMailbox(Mailbox[Any]):
        def set_as_idle(self, processed: int) -> None:
            raise RuntimeError("set_as_idle broke")

    got: list[Any] = []
    d = Dispatcher(
        throughput=1,
        workers=1,
        mailbox_factory=lambda dispatcher, index, name, receive: IdleRaisesMailbox(
            dispatcher, index, name, receive
        ),
    )
    ref = d.spawn(got.append)
    sent = [k for k in range(5) if ref.tell(k) is Send.OK]
    wait_until(lambda: d.failure is not None, what="the dispatcher's failure")
    assert ref.tell("late") is Send.DEAD_LETTER
    report = d.shutdown()
    assert not report.ok and isinstance(report.failure, RuntimeError)
    dead = report.dead_letters[ref.name]
    assert sorted([*got, *(m for m in dead if m != "late")]) == sent
