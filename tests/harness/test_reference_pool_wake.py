"""The pool's park/wake handshake: one wake-up on its way at a time, chained, and none lost."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from model_checks.designs.work_lane.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.work_lane.scenarios import SCENARIO_SPECS, lane_program
from model_checks.harness import Options, check
from reference.results import Result
from reference.runtime import DEFAULT_RUNTIME
from reference.scheduler import LaneSpec, WorkerScheduler
from reference.worker_pool import WorkerPool, WorkItem


class WakeOnlyWhenNoneRunsPool(WorkerPool):
    """The rule an experiment measured fastest: no wake-up while some worker holds a work item."""

    def submit(self, item: WorkItem, owed: bool = False) -> None:
        with self._mutex:
            self._enqueue(item, owed)
            if self._idle_workers and not self._waking and not self._active:
                self._waking = True
                self._work_ready.notify()


def _build(**factories: Any) -> Any:
    def build(*args: Any, **kwargs: Any) -> WorkerScheduler[Any]:
        return WorkerScheduler(*args, **{**kwargs, **factories})

    return build


@pytest.mark.timeout(120)
def test_lanes_in_parallel_holds_with_spurious_wakeups() -> None:
    options = Options(strategy="pct", seed=3, max_executions=400, spurious_wakeups=True)
    result = check(lane_program(SCENARIO_SPECS["lanes-in-parallel"]), options)
    assert result.failure is None, result.report()
    assert result.executions == 400


@pytest.mark.timeout(120)
def test_lanes_in_parallel_catches_a_wake_up_withheld_while_a_worker_runs() -> None:
    # Lane 1's work item, queued while w0 runs lane 0's (blocking) invoke, must wake w1.
    build = _build(pool_factory=WakeOnlyWhenNoneRunsPool)
    program = lane_program(SCENARIO_SPECS["lanes-in-parallel"], build=build)
    result = check(program, Options(strategy="dpor", time_limit=60))
    assert result.failure is not None and result.failure.kind == "lost_wakeup", result.summary()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["no-chained-wake", "park-without-recheck"])
def test_the_handshake_mutants_run_the_untraced_fast_path(name: str) -> None:
    # Their scenarios are untraced, so what they break is the inline path users run.
    assert REFERENCE_MUTANTS[name].scenario["traced"] is False


def _lane0_waits_for_lane1() -> list[bool]:
    lane1_ran = threading.Event()
    waited: list[bool] = []

    def invoke(lane: int, item: int) -> None:
        if lane == 1:
            lane1_ran.set()
        else:
            waited.append(lane1_ran.wait(10))

    sched: WorkerScheduler[int] = WorkerScheduler(
        [LaneSpec(invoke, context=i) for i in range(2)], workers=2, lane_capacity=4, max_per_drain=1
    )
    assert sched.try_post(sched.get_lane(0)[1], 0) is Result.SUCCESS
    assert sched.try_post(sched.get_lane(1)[1], 1) is Result.SUCCESS
    assert sched.stop() is Result.SUCCESS
    return waited


@pytest.mark.timeout(30)
def test_a_blocking_invoke_does_not_hold_up_another_lane_on_real_threads() -> None:
    for _ in range(50):
        assert _lane0_waits_for_lane1() == [True]


@pytest.mark.timeout(10)
def test_the_inline_submit_still_refuses_an_overflow() -> None:
    pool = WorkerPool(1, 1, DEFAULT_RUNTIME)
    assert pool._inline
    pool.submit(WorkItem(lambda: None, 0), owed=True)
    with pytest.raises(RuntimeError, match="ready queue overflow at 1 work items"):
        pool.submit(WorkItem(lambda: None, 1), owed=True)
    assert pool._owed_submitted == 2  # the refused submission still counts for Stop
    assert [w.lane for w in pool.clear()] == [0]
