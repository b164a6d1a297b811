"""Sleep sets in the state search (``check_states(sleep_sets=True)``, the default): every state
still visited, fewer executions, and a wrong independence relation caught by the differential
comparison with the plain search."""

from __future__ import annotations

import pytest

from model_checks.bench import harness_plain
from model_checks.bench.state_proofs import producer_consumer
from model_checks.harness import Options, check, patched
from model_checks.harness.stateful import StatefulResult, check_states
from model_checks.harness.strategies import stateful
from tests.harness import test_harness_differential as generated

# generated programs where two threads' steps on a common object decide the outcome: with every
# step taken for independent of every other, one of their orders is never run
CAUGHT_SEEDS = (12, 13, 20)


@pytest.mark.timeout(120)
def test_sleep_sets_prove_the_same_with_fewer_executions() -> None:
    with patched(harness_plain):
        plain = check_states(producer_consumer(2, 1), races=False, minimize=False, sleep_sets=False)
        slept = check_states(producer_consumer(2, 1), races=False, minimize=False)
    assert isinstance(slept, StatefulResult) and isinstance(plain, StatefulResult)
    assert plain.verdict == slept.verdict == "exhaustive", (plain.report(), slept.report())
    assert slept.outcomes == plain.outcomes and len(slept.outcomes) == 6
    # measured: 344 executions against 958; a quarter off is what the test holds it to
    assert slept.executions * 4 < plain.executions * 3, (slept.executions, plain.executions)
    assert slept.sleep_blocked > 0 and plain.sleep_blocked == 0
    # the verdict says what sleep sets do not show
    assert "sleep sets" in slept.verdict_text() and "terminating" in slept.verdict_text()
    assert "sleep sets" not in plain.verdict_text()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", CAUGHT_SEEDS)
def test_a_wrong_independence_relation_loses_outcomes(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    prog = generated.generate(seed)
    opts = Options(minimize=False)
    want = check(generated.build(prog), opts.with_(strategy="dpor"))
    right = check_states(generated.build(prog), opts)
    assert right.verdict == want.verdict == "exhaustive" and right.outcomes == want.outcomes
    monkeypatch.setattr(stateful, "dependent", lambda a, b: False)
    wrong = check_states(generated.build(prog), opts)
    assert wrong.verdict == "exhaustive" and wrong.outcomes < want.outcomes, (wrong.outcomes, want.outcomes)


def test_a_state_met_again_runs_what_was_asleep_then_and_is_awake_now() -> None:
    a, b, c = (1, 0), (2, 0), (3, 0)
    revisit = stateful.StateCachingChooser._revisit
    assert revisit(frozenset({a}), {a, b}, [a, b, c]) is None  # nothing asleep then is awake now
    assert revisit(frozenset(), set(), [a, b]) is None
    again = revisit(frozenset({a, b}), {b, c}, [a, b, c])
    assert again == ([a], {b})  # a runs now; stored from now on with the intersection


@pytest.mark.timeout(180)
def test_every_work_lane_reference_mutant_is_caught_by_the_sleep_set_search() -> None:
    # each on its own scenario, with the failure kind it names: the reduction keeps the bugs
    from model_checks.designs.work_lane.reference_mutants import REFERENCE_MUTANTS
    from model_checks.designs.work_lane.scenarios import LaneScenario, lane_program
    from model_checks.harness.design_rows import quiet_reference

    for name, m in REFERENCE_MUTANTS.items():
        program = lane_program(LaneScenario(**m.scenario), build=m.build, keep_trace=False)
        with quiet_reference():
            result = check_states(
                program, Options(races=False, time_limit=60, spurious_wakeups=m.spurious_wakeups)
            )
        assert result.failure is not None and result.failure.kind == m.expect, (name, result.summary())
