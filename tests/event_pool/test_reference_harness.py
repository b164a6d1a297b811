"""The reference event pool under the harness: the scenarios hold, each seeded bug is caught."""

from __future__ import annotations

from dataclasses import replace

import pytest

from model_checks.designs.event_pool.harness import EXHAUSTIVE, PROVED_RACE_FREE, SCENARIOS
from model_checks.designs.event_pool.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.event_pool.scenarios import PoolScenario, busy_take, pool_program
from model_checks.harness import Options, check
from model_checks.harness.options import Result as HarnessResult
from reference.tracing import RecordingTracer
from tests.helpers.harness_mutants import caught


def _run(name: str) -> HarnessResult:
    scenario = SCENARIOS[name]
    return check(scenario.build(), Options(**scenario.options))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(EXHAUSTIVE))
def test_small_scenarios_are_exhaustive_with_the_recorded_execution_counts(name: str) -> None:
    scenario = SCENARIOS[name]  # (the counts are of the search without the race detector)
    result = check(scenario.build(), Options(**{**scenario.options, "races": False}))
    assert result.verdict == "exhaustive", result.report()
    assert result.executions == EXHAUSTIVE[name][1]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(PROVED_RACE_FREE))
def test_the_race_free_proofs_run_the_race_detector(name: str) -> None:
    result = _run(name)
    assert result.verdict == "exhaustive" and result.races, result.report()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["two-threads-busy", "two-threads-api-cancel", "timeouts"])
def test_sampled_scenarios_find_nothing(name: str) -> None:
    result = _run(name)
    assert result.verdict == "bounded", result.report()


@pytest.mark.timeout(120)
def test_the_all_busy_rule_happens_a_finishing_thread_takes_the_unsignalled_work() -> None:
    result = _run("two-threads-busy")
    assert any(isinstance(o, tuple) and o[-1] for o in result.outcomes)  # busy_take seen in some execution


def test_busy_take_fails_on_a_trace_where_the_thread_waited_first() -> None:
    tracer = RecordingTracer()
    events: list[tuple[str, str, dict[str, object]]] = [
        ("main", "post", {"item": 0, "to": None, "result": "ok"}),
        ("t0", "done", {"item": 9, "raised": False}),
        ("t0", "wait", {}),
        ("t0", "wake", {"result": "event"}),
        ("t0", "take", {"item": 0}),
    ]
    for thread, event, fields in events:
        tracer.emit(thread, event, fields)
    assert not busy_take(tracer)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(REFERENCE_MUTANTS))
def test_each_reference_mutant_is_caught_with_a_short_counterexample(name: str) -> None:
    failure = caught(SCENARIOS, REFERENCE_MUTANTS, name)
    assert REFERENCE_MUTANTS[name].shows in failure.message


# The minimal counterexamples, as trace events (thread, event, fields): what docs/event-pool.md shows.
COUNTEREXAMPLES = {
    "pulse-instead-of-set": [
        "main post item=0 to=t0 result=ok",
        "main signal to=t0",
        "main stop_begin mode=drain",
        "t0 wait",
    ],
    "manual-reset-never-reset": [
        "main post item=0 to=t0 result=ok",
        "main signal to=t0",
        "main stop_begin mode=drain",
        "t0 wait",
        "t0 wake result=event",
        "t0 take item=0",
        "t0 run item=0",
        "t0 done item=0 raised=False",
        "t0 take item=None",
        "t0 wait",
        "t0 wake result=event",
    ],
    "if-instead-of-while": [
        "main post item=0 to=t0 result=ok",
        "main signal to=t0",
        "main cancel items=[0] work=w",
        "main stop_begin mode=drain",
        "t0 wait",
        "t0 wake result=event",
        "t0 take item=1",
    ],
    "signal-busy-thread": [
        "main post item=0 to=t0 result=ok",
        "main signal to=t0",
        "main post item=1 to=t0 result=ok",
    ],
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(COUNTEREXAMPLES))
def test_the_counterexample_is_the_documented_one(name: str) -> None:
    result = _run(f"mutant/{name}")
    assert result.failure is not None
    shown = [" ".join(str(e).split()[1:]) for e in result.failure.trace_events]
    assert shown == COUNTEREXAMPLES[name]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["unlocked-check-then-wait"])
def test_without_idle_first_the_stranded_work_is_a_lost_wakeup(name: str) -> None:
    m = REFERENCE_MUTANTS[name]
    program = pool_program(replace(m.scenario, idle_first=False), build=m.build)
    result = check(program, Options(strategy="dpor", time_limit=60))
    assert result.failure is not None and result.failure.kind == "lost_wakeup", result.report()


@pytest.mark.timeout(120)
def test_the_correct_pool_passes_the_mutants_scenarios() -> None:
    for m in REFERENCE_MUTANTS.values():
        if m.scenario.threads > 1:
            continue  # two threads: sampled above
        result = check(pool_program(m.scenario), Options(strategy="dpor", time_limit=60))
        assert result.verdict == "exhaustive", (m.name, result.report())


def test_a_scenario_with_the_wrong_expectations_fails() -> None:
    """The final check is not vacuous: a pool that loses works is reported."""
    from reference.event_pool import EventPool

    class LosingPool(EventPool):
        def post(self, work):  # type: ignore[no-untyped-def]
            return super().post(lambda: None)  # accepted, but the work itself never runs

    result = check(pool_program(PoolScenario(threads=1, posts=1), build=LosingPool), Options(strategy="dpor"))
    assert result.failure is not None and "exactly once" in result.failure.message
