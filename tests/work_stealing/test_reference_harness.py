"""The work-stealing reference under the harness: every scenario gets its verdict, every mutant is caught.

Runs the design's ``SCENARIOS`` table through the harness API directly (the same call
`lanecheck verify` makes), so it does not depend on the design being registered yet.
"""

from __future__ import annotations

import pytest

from model_checks.design import Scenario
from model_checks.designs.work_stealing.harness import SCENARIOS, program
from model_checks.designs.work_stealing.reference_mutants import REFERENCE_MUTANTS
from model_checks.harness.api import check
from model_checks.harness.design_rows import expected_verdict, quiet_reference, run_scenario
from model_checks.harness.options import Options, Result


def _run(scenario: Scenario) -> Result:
    # The --quick options (a state proof's row samples there); a seeded bug makes the pool log
    # each execution's fault, hence quiet
    with quiet_reference():
        return run_scenario(scenario, quick=True)


CORRECT = [name for name, sc in SCENARIOS.items() if not sc.must_fail]
MUTANTS = [name for name, sc in SCENARIOS.items() if sc.must_fail]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("name", CORRECT)
def test_correct_scenario_gets_its_verdict(name: str) -> None:
    scenario = SCENARIOS[name]
    result = _run(scenario)
    assert result.failure is None, result.report()
    assert result.verdict == expected_verdict(scenario, quick=True), (result.verdict, result.bounded_by)
    assert result.executions > 1


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", MUTANTS)
def test_mutant_is_caught_with_its_failure_kind_and_a_short_schedule(name: str) -> None:
    scenario = SCENARIOS[name]
    result = _run(scenario)
    assert result.failure is not None, f"{name} missed: {result.verdict}"
    assert result.failure.kind == scenario.expect, result.failure.message
    # minimised: a handful of preemptions at most (each row's figure is in the verify output)
    assert result.failure.preemptions <= 3, result.failure.report()


def test_there_are_at_least_eight_reference_mutants_each_in_a_known_scenario() -> None:
    assert len(REFERENCE_MUTANTS) >= 8
    for m in REFERENCE_MUTANTS.values():
        assert m.scenario in SCENARIOS and not SCENARIOS[m.scenario].must_fail
        assert f"mutant/{m.name}" in SCENARIOS


@pytest.mark.timeout(60)
def test_the_one_element_race_is_decided_by_the_cas_both_ways() -> None:
    # The correct deque's outcomes include the owner winning the last element and a thief winning it.
    result = check(program("deque/one-element"), Options(strategy="dpor"))
    assert result.verdict == "exhaustive"
    winners = {tuple(who for who, _ in outcome) for outcome in result.outcomes if isinstance(outcome, tuple)}
    assert ("owner",) in winners and any(w and w[0].startswith("t") for w in winners)


@pytest.mark.timeout(60)
def test_the_steal_from_self_check_fails_on_a_self_steal() -> None:
    # The check itself: the mutant's very first execution trips it.
    m = REFERENCE_MUTANTS["steal-from-self"]
    result = check(program(m.scenario, m.build), Options(strategy="dpor", max_executions=1))
    assert result.failure is not None and "stole from itself" in result.failure.message


@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    "name", ["deque/one-element", "deque/push-take-steal", "pool/park-wake", "pool/stop-discard"]
)
def test_full_options_with_the_race_detector_are_exhaustive(name: str) -> None:
    scenario = SCENARIOS[name]
    assert scenario.options.get("races") is True
    result = check(scenario.build(), Options(**scenario.options))
    assert result.failure is None, result.report()
    assert result.verdict == "exhaustive" and result.races
