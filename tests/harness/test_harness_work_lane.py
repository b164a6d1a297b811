"""The real Work Lane scheduler under the harness: scenarios hold, a planted bug is caught."""

from __future__ import annotations

from typing import Any

import pytest

from model_checks.designs.work_lane.scenarios import SCENARIO_SPECS, SCENARIOS, LaneScenario, lane_program
from model_checks.harness import Options, check
from reference.work_lane import IDLE, WorkLane


@pytest.mark.timeout(60)
def test_stop_from_callback_is_refused_in_every_interleaving() -> None:
    result = check(SCENARIOS["work-lane/stop-from-callback"](), Options(strategy="dpor"))
    assert result.verdict == "exhaustive", result.report()
    assert result.outcomes == {(2, 2, 0)}


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "name", ["lanes-2x2-budget1", "lane-at-capacity", "stop-discard-races-posts", "invoke-raises"]
)
def test_scenarios_hold_under_pct(name: str) -> None:
    result = check(lane_program(SCENARIO_SPECS[name]), Options(strategy="pct", seed=5, max_executions=60))
    assert result.ok, result.report()
    assert result.verdict == "bounded"


class _ForgetfulLane(WorkLane[Any]):
    """Mutant: the end-of-drain decision ignores items that are still queued (lost wakeup)."""

    def _end_drain(self, invoked: int) -> bool:
        with self.mutex:
            self.state = IDLE
            return False


@pytest.mark.timeout(120)
def test_lost_wakeup_mutant_is_caught_with_its_trace() -> None:
    program = lane_program(
        LaneScenario(producers=1, items=2, lanes=1, workers=1, budget=1), lane_factory=_ForgetfulLane
    )
    result = check(program, Options(strategy="dpor", max_executions=2_000))
    assert result.failure is not None, result.summary()
    assert result.failure.kind in ("lost_wakeup", "assertion")
    assert any("drain_begin" in str(e) for e in result.failure.trace_events)
    assert result.failure.preemptions <= 1
