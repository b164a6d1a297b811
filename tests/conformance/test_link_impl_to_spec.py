"""Check 1 of issue 5: every trace the harness explores of the reference is allowed by the spec."""

from __future__ import annotations

import pytest

from model_checks.designs.work_lane.link.impl_to_spec import check_harness_scenario, check_link_scenario
from model_checks.designs.work_lane.link.scenario import LINK_SCENARIOS
from model_checks.designs.work_lane.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.work_lane.scenarios import SCENARIO_OPTIONS


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["1x2-full-invalid", "2x1-cap1-full", "1x2-budget2"])
def test_link_scenarios_every_trace_allowed(name: str) -> None:
    from model_checks.harness import Options

    opts = Options(strategy="dpor", max_steps=5_000, max_executions=1_500)
    r = check_link_scenario(LINK_SCENARIOS[name], opts)
    assert r.verdict == "allowed", r.failure
    assert r.traces_validated >= 1 and r.traces_validated <= r.executions


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["lanes-2x2-budget1", "stop-discard-races-posts", "stop-from-callback"])
def test_harness_scenarios_every_trace_allowed(name: str) -> None:
    r = check_harness_scenario(name, SCENARIO_OPTIONS.with_(max_executions=150))
    assert r.verdict == "allowed", r.failure
    assert r.traces_validated > 0


@pytest.mark.timeout(60)
def test_rejected_trace_is_reported_with_schedule_and_verdict() -> None:
    mutant = REFERENCE_MUTANTS["double-submit"]
    r = check_link_scenario(LINK_SCENARIOS["2x1-same-lane"], build=mutant.build)
    assert r.verdict == "rejected"
    assert r.schedule.startswith("lc1.")
    assert "validator: rule 2: seq" in r.failure
