"""The in-memory job store under the controlled harness: clean scenarios exhaustive, each mutant caught."""

from __future__ import annotations

import pytest

from model_checks.conformance.validator import validate_lines
from model_checks.designs.admission.harness import SCENARIOS
from model_checks.designs.admission.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.admission.scenarios import (
    CLEAN_OPTIONS,
    MUTANT_SCENARIOS,
    SETUPS,
    failure_lines,
    jobs_program,
)
from model_checks.harness.api import check
from reference.jobs.inmemory import InMemoryStore


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", list(SETUPS))
def test_clean_scenarios_are_exhaustive(name: str) -> None:
    result = check(jobs_program(InMemoryStore, SETUPS[name]), CLEAN_OPTIONS[name])
    assert result.failure is None, result.failure.report() if result.failure else ""
    assert result.verdict == "exhaustive" and result.executions >= 1
    # (lease-expiry under the race detector: two workers' steps on one store; the store's event
    # buffer emptied outside the transaction was a data race, session 48)
    assert result.races == bool(CLEAN_OPTIONS[name].races)


@pytest.mark.timeout(60)
def test_the_lease_expiry_scenario_reaches_an_expiry() -> None:
    result = check(jobs_program(InMemoryStore, SETUPS["lease-expiry"]), CLEAN_OPTIONS["lease-expiry"])
    # the lease lapsed: the job went back pending (after its backoff), the stale finish fenced off
    assert ((1, "pending", 1),) in result.outcomes and ((1, "done", 1),) in result.outcomes


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", list(REFERENCE_MUTANTS))
def test_each_reference_mutant_is_caught_with_a_minimal_counterexample(name: str) -> None:
    mutant = REFERENCE_MUTANTS[name]
    setup, options = MUTANT_SCENARIOS[name]
    result = check(jobs_program(mutant.build(InMemoryStore), SETUPS[setup]), options)
    assert result.failure is not None and result.failure.kind == mutant.expect
    assert result.failure.preemptions <= 1  # minimised: at most one preemption shows it
    if mutant.trace_shows:
        verdict = validate_lines(failure_lines(result.failure))
        assert verdict.code == 1 and verdict.rule in mutant.rules and verdict.seq is not None, verdict.message


def test_the_scenario_table_names_every_setup_and_mutant() -> None:
    assert set(SCENARIOS) == set(SETUPS) | {f"mutant/{n}" for n in REFERENCE_MUTANTS}
    assert all(SCENARIOS[f"mutant/{n}"].must_fail for n in REFERENCE_MUTANTS)
