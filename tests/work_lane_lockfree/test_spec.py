"""The lock-free Work Lane spec: its configurations hold with every action fired, and every
seeded bug is caught by the property it names with a shortest counterexample."""

from __future__ import annotations

import pytest

from model_checks.designs.work_lane_lockfree import DESIGN
from model_checks.designs.work_lane_lockfree.configs import CONFIGS
from model_checks.designs.work_lane_lockfree.spec_mutants import MUTANTS
from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from model_checks.registry import designs
from spec.work_lane_lockfree import SPEC

pytestmark = pytest.mark.timeout(300)


def test_registered() -> None:
    assert designs()["work-lane-lockfree"] is DESIGN


def test_small_holds_with_every_action_fired() -> None:
    """Granularity: one action per atomic step (push, each CAS, the re-check, each pop)."""
    result = check(SPEC, CONFIGS["small"], Options(), config="small")
    assert result.verdict == "holds", result.violation
    assert not result.stats.unfired(), result.stats.unfired()
    assert {"EveryAcceptedItemSettles", "EveryStopReturns", "StatusIsTheReservation"} <= set(
        result.properties_checked
    )
    assert result.stats.states == 28_714


def test_refine_config_holds() -> None:
    result = check(SPEC, CONFIGS["refine"], Options(), config="refine")
    assert result.verdict == "holds", result.violation


@pytest.mark.slow
def test_standard_holds() -> None:
    result = check(SPEC, CONFIGS["standard"], Options(), config="standard")
    assert result.verdict == "holds", result.violation
    assert not result.stats.unfired(), result.stats.unfired()


# The last steps of each shortest counterexample: the interleaving that is the bug.
ENDINGS = {
    "cas-before-push": [
        "CasBeforePush",
        "Take",
        "DrainBegin",
        "Pop",
        "Invoke",
        "PopEmpty",
        "Release",
        "RecheckEmpty",
        "PushAfterCas",
    ],
    "no-recheck": ["Push", "PostCasLoses", "ReleaseWithoutRecheck"],
    "idle-after-recheck": ["RecheckBeforeRelease", "Push", "PostCasLoses", "IdleAfterRecheck"],
    "stop-skips-inflight": ["Admit", "StopCall", "StopBeginWithoutWaiting", "StopEndDrain", "Push"],
    "reset-drops-unreported": ["StopCall", "StopBegin", "ResetDroppingItems"],
}


@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutant_caught_with_its_shortest_counterexample(name: str) -> None:
    m = MUTANTS[name]
    constants = m.constants(CONFIGS[m.config])
    result = check(m.spec, constants, Options())
    assert result.verdict == "violated"
    assert result.violation is not None and result.counterexample is not None
    assert (result.violation.kind, result.violation.name) == ("invariant", m.expect), result.violation.reason
    assert result.counterexample.length == m.length
    actions = [step.action for step in result.counterexample.steps]
    assert actions[-len(ENDINGS[name]) :] == ENDINGS[name], actions
    assert check(m.spec, constants, Options(max_depth=m.length - 1)).verdict == "incomplete"


def test_lost_wakeup_message_names_the_stranded_item() -> None:
    m = MUTANTS["no-recheck"]
    result = check(m.spec, m.constants(CONFIGS[m.config]), Options())
    assert result.violation is not None
    assert "holds p0.1" in result.violation.reason and "nobody will run it" in result.violation.reason
