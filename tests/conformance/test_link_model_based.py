"""Check 4 of issue 5: model-based testing of the reference with a Hypothesis state machine."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from model_checks.conformance.link.model_based import machine_for
from model_checks.mutants.work_lane_reference import REFERENCE_MUTANTS

SETTINGS = settings(
    max_examples=150,
    stateful_step_count=25,
    deadline=None,
    database=None,
    derandomize=True,
    report_multiple_bugs=False,
    suppress_health_check=list(HealthCheck),
)


@pytest.mark.timeout(60)
def test_reference_conforms_rule_by_rule() -> None:
    run_state_machine_as_test(machine_for(), settings=SETTINGS)


@pytest.mark.timeout(60)
def test_catches_double_submit() -> None:
    machine = machine_for(REFERENCE_MUTANTS["double-submit"].build)
    with pytest.raises(AssertionError) as caught:
        run_state_machine_as_test(machine, settings=SETTINGS)
    text = str(caught.value)
    assert "rule 2" in text or "harness failure" in text, text
