"""The event-pool spec holds at its configurations, and every mutant is caught as expected."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from model_checks.designs.event_pool import DESIGN
from model_checks.designs.event_pool.configs import CONFIGS
from model_checks.designs.event_pool.spec_mutants import MUTANTS
from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from spec import event_pool as ep
from spec.event_pool import SPEC
from spec.language import SpecError, emit, variant
from tests.helpers.design_spec_checks import DesignSpecChecks
from tests.spec_helpers import assert_holds, initial_projections, reachable

pytestmark = pytest.mark.timeout(120)

PROPERTIES = ("WorkIsTaken", "ShutdownTerminates")


def test_small_holds_with_every_action_but_the_timeout_fired() -> None:
    # small waits have no timeout
    result = assert_holds(SPEC, CONFIGS["small"], "small", states=887, unfired=["TimeOut"])
    for prop in PROPERTIES:
        assert prop in result.properties_checked


def test_standard_holds_with_every_action_fired() -> None:
    assert_holds(SPEC, CONFIGS["standard"], "standard", states=13_695, unfired=[])


def test_a_post_can_find_every_thread_busy_and_the_work_waits_in_the_list() -> None:
    """The all-busy case is reached, and there a finishing thread takes the work (WorkIsTaken holds)."""
    states = reachable(SPEC, CONFIGS["small"])
    all_busy = [s for s in states if s.next < s.posted and all(me.pc in ep.BUSY for me in s.thread.values())]
    assert all_busy
    assert any(not any(s.idle.values()) and s.client.pc == ep.POST for s in all_busy)


def test_a_cancel_reports_listed_works_and_a_raising_callback_counts_as_run() -> None:
    states = reachable(SPEC, CONFIGS["small"])
    assert any("cancelled" in s.fate.values() for s in states)
    raised = [s for s in states if s.fate[2] == "raised"]
    assert raised and all(s.runs[2] == 1 for s in raised)


def test_the_required_mutants_exist() -> None:
    required = {
        "pulse-instead-of-set",
        "unlocked-check-then-wait",
        "unlocked-next-index",
        "manual-reset-never-reset",
        "if-instead-of-while",
        "signal-busy-thread",
    }
    assert required <= set(MUTANTS)


def _steps(name: str, constants: Any) -> list[str]:
    result = check(MUTANTS[name].spec, constants, Options())
    assert result.counterexample is not None
    return [step.action for step in result.counterexample.steps]


def test_the_pulse_is_lost_because_the_thread_was_not_blocked_yet() -> None:
    steps = _steps("pulse-instead-of-set", CONFIGS["small"])
    assert steps == ["Post", "PulseSignal"]  # both threads are still on their way into the wait


def test_timeouts_hide_the_pulse_from_the_behaviour_but_not_from_no_lost_wakeup() -> None:
    mutant = MUTANTS["pulse-instead-of-set"]
    flagged = check(mutant.spec, CONFIGS["standard"], Options())
    assert flagged.violation is not None and flagged.violation.name == "NoLostWakeup"
    blind = replace(mutant.spec, invariants=())
    assert check(blind, CONFIGS["standard"], Options()).verdict == "holds"  # a timeout rechecks the list
    stuck = check(blind, replace(CONFIGS["small"], cancel=False), Options())  # no timeout, no cancel
    assert stuck.violation is not None and stuck.violation.name == "Deadlock"


def test_if_instead_of_while_shows_at_once_with_a_timeout() -> None:
    steps = _steps("if-instead-of-while", replace(CONFIGS["small"], timeouts=True))
    assert steps == ["WaitForWork", "TimeOut", "WakeIntoTake", "TakeBlind"]


def test_unlocked_check_then_wait_strands_work_behind_one_thread_with_two() -> None:
    mutant = MUTANTS["unlocked-check-then-wait"]
    result = check(mutant.spec, CONFIGS["small"], Options())
    assert result.violation is not None and result.violation.name == "IdleFirst"
    assert result.counterexample is not None and result.counterexample.length == 12


def test_a_never_reset_event_spins_and_never_sees_the_stop_event() -> None:
    """Without OneWakePerSignal the busy spin shows as shutdown never ending: wait-any returns index 0."""
    mutant = MUTANTS["manual-reset-never-reset"]
    blind = replace(mutant.spec, invariants=tuple(i for i in SPEC.invariants if i.name != "OneWakePerSignal"))
    result = check(blind, mutant.constants(CONFIGS["small"]), Options())
    assert result.violation is not None and result.violation.name == "ShutdownTerminates"
    cx = result.counterexample
    assert cx is not None and cx.loop_start is not None
    assert "Close" in [step.action for step in cx.steps[: cx.loop_start + 1]]


def test_work_is_taken_fails_when_a_thread_ignores_the_list() -> None:
    def FindEmptyAnyway(c: ep.Constants, s: ep.Vars, t: str) -> object:
        if ep.at(s, t, ep.CHECK) is None:
            return None
        return emit(ep.goto(s, t, ep.Local(ep.WAIT), idle=s.idle.except_(t, True)), item=None)

    mutant = MUTANTS["manual-reset-never-reset"]
    spinning = replace(variant(mutant.spec, "ignores-list", replace_actions={"FindEmpty": FindEmptyAnyway}))
    spinning = replace(spinning, invariants=())
    result = check(spinning, replace(mutant.constants(CONFIGS["small"]), cancel=False), Options())
    assert result.violation is not None and result.violation.name == "WorkIsTaken"


@pytest.mark.parametrize("change", [{"threads": 0}, {"submits": 0}, {"raises": (3,)}], ids=str)
def test_bad_constants_are_refused(change: dict[str, Any]) -> None:
    with pytest.raises(SpecError):
        check(SPEC, replace(CONFIGS["small"], **change), Options())


def test_design_object() -> None:
    assert DESIGN.name == "event-pool"
    assert initial_projections(DESIGN, MUTANTS) == [
        ep.WAIT,
        False,
        0,
        ep.POST,
    ]


class TestDesignSpec(DesignSpecChecks):
    design = DESIGN
    symmetry_mutant = "unlocked-next-index"
    pc_hints_config = "standard"
    reads_cover = ("design", *sorted(MUTANTS))
