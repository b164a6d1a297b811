"""The Schedule Gate reference under the deterministic harness: clean, and each mutant caught."""

from __future__ import annotations

import pytest

from model_checks.designs.schedule_gate.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.schedule_gate.scenarios import MUTANT_SCENARIOS as SCENARIOS
from model_checks.designs.schedule_gate.scenarios import gate_program
from model_checks.designs.schedule_gate.spec_mutants import MUTANTS as SPEC_MUTANTS
from model_checks.harness import Options, check
from reference.schedule_gate import GateScheduler


@pytest.mark.timeout(120)
def test_single_producer_is_exhaustively_clean() -> None:
    result = check(gate_program(GateScheduler, script=((0,),)), Options(time_limit=60))
    assert result.failure is None, result.report()
    assert result.verdict == "exhaustive", result.summary()


@pytest.mark.timeout(120)
def test_two_producers_clean_within_one_preemption() -> None:
    """Every schedule with at most one preemption (two-preemption DFS does not finish in minutes)."""
    program = gate_program(GateScheduler, yield_in_handler=True)
    result = check(program, Options(preemption_bound=1, time_limit=60))
    assert result.failure is None, result.report()
    assert result.bounded_by == ["preemption_bound=1"], result.summary()


@pytest.mark.timeout(120)
def test_two_actors_one_permit_clean_under_pct() -> None:
    program = gate_program(GateScheduler, actors=2, permits=1, script=((0, 1), (1, 0)))
    result = check(program, Options(strategy="pct", max_executions=500))
    assert result.failure is None, result.report()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(REFERENCE_MUTANTS))
def test_every_reference_mutant_fails_with_its_kind(name: str) -> None:
    mutant = REFERENCE_MUTANTS[name]
    assert mutant.spec_variant in SPEC_MUTANTS
    kwargs, options = SCENARIOS[name]
    result = check(gate_program(mutant.build, **kwargs), options)
    assert result.verdict == "failed", result.summary()
    assert result.failure is not None and result.failure.kind == mutant.expect, result.report()
