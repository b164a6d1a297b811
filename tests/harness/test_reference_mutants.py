"""Each seeded bug in the real reference code is caught by the harness, with the expected kind."""

from __future__ import annotations

import pytest

from model_checks.designs.work_lane.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.work_lane.scenarios import LaneScenario, lane_program
from model_checks.harness import Options, check
from reference.scheduler import WorkerScheduler
from tests.helpers.lane_mutants import caught_lane_mutant


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(REFERENCE_MUTANTS))
def test_reference_mutant_is_caught(name: str) -> None:
    failure = caught_lane_mutant(name, time_limit=90)
    assert failure.schedule  # a replayable schedule string is always reported


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(REFERENCE_MUTANTS))
def test_correct_reference_passes_the_same_scenario(name: str) -> None:
    """The scenario that catches a mutant is one the production code survives.

    One-worker scenarios are explored exhaustively; with two workers the space is too large
    for CI, so every schedule with at most one preemption is, and with spurious wakeups their
    number per thread is capped (the verdict then says "bounded", and by what).
    """
    mutant = REFERENCE_MUTANTS[name]
    scenario = LaneScenario(**mutant.scenario)
    exhaustive = scenario.workers == 1 and not mutant.spurious_wakeups
    options = Options(
        strategy="dpor",
        spurious_wakeups=mutant.spurious_wakeups,
        preemption_bound=None if scenario.workers == 1 else 1,
        time_limit=60,
    )
    result = check(lane_program(scenario, build=WorkerScheduler), options)
    assert result.failure is None, result.report()
    if exhaustive:
        assert result.verdict == "exhaustive", result.summary()
    else:
        assert result.verdict == "bounded" and result.bounded_by, result.summary()
