"""A Work Lane reference mutant under DPOR, as the harness tests search for it."""

from __future__ import annotations

from model_checks.designs.work_lane.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.work_lane.scenarios import LaneScenario, lane_program
from model_checks.harness import Options, check
from model_checks.harness.design_rows import quiet_reference
from model_checks.harness.options import Failure


def caught_lane_mutant(name: str, time_limit: float, keep_trace: bool = True) -> Failure:
    """DPOR (with the mutant's spurious wake-ups) finds ``name`` on its own scenario within
    ``time_limit`` seconds, with the failure kind the mutant declares; the failure is returned for
    the caller's own checks. ``keep_trace=False``: the scenario without history."""
    mutant = REFERENCE_MUTANTS[name]
    program = lane_program(LaneScenario(**mutant.scenario), build=mutant.build, keep_trace=keep_trace)
    options = Options(strategy="dpor", spurious_wakeups=mutant.spurious_wakeups, time_limit=time_limit)
    with quiet_reference():
        result = check(program, options)
    assert result.failure is not None, f"{name} not caught: {result.summary()}"
    assert result.failure.kind == mutant.expect, result.report()
    return result.failure
