"""The Work Lane scenarios without history (``lane_program(..., keep_trace=False)``, issue 16).

The scenario's state then keeps what its checks need and nothing of the past: each step's trace
events are checked by the drain watch and dropped, and a failure report gets them back from
``lane_programs.ReportedTrace``. These tests check that the checks are as strong (every
reference mutant is caught, after the same executions, with the trace a recording tracer
gives), that state pruning meets states again that the recorded trace kept apart, and that the
report's trace is no part of the state."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.designs.work_lane.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.work_lane.scenarios import LaneScenario, _drain_watch, _StepTracer, lane_program
from model_checks.harness import Options, check
from model_checks.harness.design_rows import quiet_reference
from model_checks.harness.lane_programs import ReportedTrace
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.stateful import StatefulResult, check_states
from tests.helpers.lane_mutants import caught_lane_mutant


@pytest.mark.timeout(240)
@pytest.mark.parametrize("name", list(REFERENCE_MUTANTS))
def test_every_mutant_is_caught_without_history_with_the_recorded_trace(name: str) -> None:
    m = REFERENCE_MUTANTS[name]
    sc = LaneScenario(**m.scenario)
    failure = caught_lane_mutant(name, time_limit=180, keep_trace=False)
    # the failing schedule again, with the tracer keeping the whole trace: the same failure,
    # and the report showed the same lines
    with quiet_reference():
        recorded = check(
            lane_program(sc, build=m.build),
            Options(replay=failure.schedule, spurious_wakeups=m.spurious_wakeups),
        )
    assert recorded.failure is not None
    assert (recorded.failure.kind, recorded.failure.message) == (failure.kind, failure.message)
    assert failure.trace_events == recorded.failure.trace_events
    if sc.traced:
        assert failure.trace_events, "a traced scenario's report shows its trace"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["check-outside-lock", "notify-before-publish", "stop-skips-owed-submit"])
def test_the_search_is_the_same_with_and_without_history(name: str) -> None:
    # the bookkeeping adds no scheduling point: DPOR runs the same executions to the same failure
    m = REFERENCE_MUTANTS[name]
    sc = LaneScenario(**m.scenario)
    with quiet_reference():
        kept, dropped = (
            check(lane_program(sc, build=m.build, keep_trace=keep), Options(strategy="dpor"))
            for keep in (True, False)
        )
    assert kept.failure is not None and dropped.failure is not None
    assert (kept.executions, kept.steps, kept.failure.schedule) == (
        dropped.executions,
        dropped.steps,
        dropped.failure.schedule,
    )


@pytest.mark.timeout(240)
def test_without_history_state_pruning_proves_what_the_recorded_trace_kept_apart() -> None:
    # one producer, two items, one worker: the interleavings of posts and drains end in few states
    sc = LaneScenario(producers=1, items=2, lanes=1, workers=1)
    # the plain state search, whose only pruning is meeting a state again (sleep sets would also
    # skip orders of independent steps: with them the recorded trace ends too, in 340 executions)
    kept, dropped = (
        check_states(lane_program(sc, keep_trace=keep), Options(max_executions=600), sleep_sets=False)
        for keep in (True, False)
    )
    assert dropped.verdict == "exhaustive", dropped.report()
    assert kept.verdict == "bounded", kept.summary()  # measured: 1,351 executions, 2,771 states
    assert dropped.outcomes == {(2, 2, 0)} and kept.outcomes <= dropped.outcomes
    dpor = check(lane_program(sc, keep_trace=False), Options(strategy="dpor"))
    assert dpor.verdict == "exhaustive" and dpor.outcomes == dropped.outcomes


@pytest.mark.timeout(120)
def test_state_pruning_without_history_still_catches_a_mutant() -> None:
    m = REFERENCE_MUTANTS["stop-skips-owed-submit"]
    with quiet_reference():
        result = check_states(lane_program(LaneScenario(**m.scenario), build=m.build, keep_trace=False))
    assert result.failure is not None and result.failure.kind == m.expect, result.summary()
    assert any("stop_end" in str(line) for line in result.failure.trace_events)


Emit = Callable[[ControlledRuntime, _StepTracer], None]


def _two_workers_one_lane(emit: Emit, keep_trace: bool = False) -> Callable[[ControlledRuntime], object]:
    """Threads w0 and w1 each run ``emit`` (lane 0's drain events); the drain watch reads them
    after every step and, unless ``keep_trace``, drops them as ``keep_trace=False`` runs it."""

    def program(rt: ControlledRuntime) -> object:
        tracer = _StepTracer()
        tracer.begin({})
        watch = _drain_watch(tracer, None if keep_trace else ReportedTrace(rt))
        rt.invariant(watch.check, "one drainer per lane")
        for name in ("w0", "w1"):
            rt.start_thread(lambda: emit(rt, tracer), name)
        return None

    return program


def _drain(rt: ControlledRuntime, tracer: _StepTracer) -> None:
    who = rt.thread_name()
    tracer.emit(who, "drain_begin", {"lane": 0})
    tracer.emit(who, "invoke", {"lane": 0, "item": 1})
    tracer.emit(who, "drain_end", {"lane": 0, "outcome": "idle", "invoked": 1})
    rt.yield_point("drained")


def _overlapping(rt: ControlledRuntime, tracer: _StepTracer) -> None:
    who = rt.thread_name()
    tracer.emit(who, "drain_begin", {"lane": 0})
    rt.yield_point("draining")  # the other worker may begin its drain now: a bug
    tracer.emit(who, "drain_end", {"lane": 0, "outcome": "idle", "invoked": 0})


def test_the_drain_watch_without_history_catches_two_drainers_and_reports_each_event() -> None:
    result = check(_two_workers_one_lane(_overlapping), Options(strategy="dfs"))
    assert result.failure is not None and result.failure.kind == "invariant", result.summary()
    assert "DrainOverlap" in result.failure.message and "began a drain while" in result.failure.message
    # every event up to the failing step, numbered as the recording tracer numbers them
    assert result.failure.trace_events == ["  1    w0 drain_begin lane=0", "  2    w1 drain_begin lane=0"]
    # one drainer at a time passes, in every order
    assert check(_two_workers_one_lane(_drain), Options(strategy="dfs")).ok


def test_the_reported_trace_is_no_part_of_the_state() -> None:
    # w0 drains then w1, or w1 then w0: the events kept differ, the states after both do not
    dropped = check_states(_two_workers_one_lane(_drain))
    kept = check_states(_two_workers_one_lane(_drain, keep_trace=True))
    assert isinstance(dropped, StatefulResult) and isinstance(kept, StatefulResult)
    assert dropped.verdict == kept.verdict == "exhaustive", dropped.report()
    assert dropped.states < kept.states, (dropped.notes, kept.notes)
