"""The shared test helpers fail where they must: a helper that cannot fail would hide a broken test."""

from __future__ import annotations

import threading
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from model_checks.designs.event_pool.harness import SCENARIOS
from model_checks.designs.schedule_gate.configs import CONFIGS as GATE_CONFIGS
from model_checks.designs.work_lane.reference_mutants import REFERENCE_MUTANTS as LANE_MUTANTS
from reference.scheduler import WorkerScheduler
from spec import schedule_gate as sg
from spec.language import Instance
from tests.helpers.cli import bad_option, refused
from tests.helpers.gated import Gated
from tests.helpers.harness_mutants import caught
from tests.helpers.lane_mutants import caught_lane_mutant
from tests.helpers.spec_walk import steps
from tests.spec_helpers import reachable


def _result(exit_code: int, output: str, exception: BaseException | None = None) -> Any:
    return SimpleNamespace(exit_code=exit_code, output=output, exception=exception)


def test_refused_passes_a_named_usage_error() -> None:
    refused(_result(2, "Error: --workers must be at least 1", SystemExit(2)), "--workers")


@pytest.mark.parametrize(
    "result",
    [
        _result(0, "--workers"),  # not refused at all
        _result(2, "Traceback (most recent call last): --workers"),
        _result(2, "internal error: --workers"),
        _result(2, "--workers", ValueError("escaped")),
        _result(2, "Error: bad value"),  # does not name the option
    ],
    ids=["exit-0", "traceback", "internal-error", "exception", "unnamed"],
)
def test_refused_fails_on_each_bad_case(result: Any) -> None:
    with pytest.raises(AssertionError):
        refused(result, "--workers")


def test_bad_option_is_the_last_option_of_the_row() -> None:
    assert bad_option("link compare small --automaton --pct-depth 0") == (
        ["link", "compare", "small", "--automaton", "--pct-depth", "0"],
        "--pct-depth",
    )
    with pytest.raises(ValueError, match="names no option"):
        bad_option("check work-lane")


@pytest.mark.timeout(30)
def test_gated_holds_only_what_it_picks_until_the_gate_opens() -> None:
    invoke: Gated[int] = Gated(hold=lambda item: item == 0)
    invoke(None, 1)  # not held: recorded at once
    assert invoke.seen == [1] and not invoke.started.is_set()
    worker = threading.Thread(target=invoke, args=(None, 0))
    worker.start()
    assert invoke.started.wait(10)
    assert invoke.seen == [1]  # 0 waits at the gate
    invoke.gate.set()
    worker.join(10)
    assert invoke.seen == [1, 0]


@pytest.mark.timeout(60)
def test_steps_reach_every_state_the_explorer_reaches() -> None:
    small = GATE_CONFIGS["small"]
    walked = {t.state for _, t in steps(sg.SPEC, small)} | set(Instance(sg.SPEC, small).initial_states())
    assert walked == set(reachable(sg.SPEC, small))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("declared", ["exhaustive", "lost_wakeup"], ids=["missed", "expects-other"])
def test_caught_fails_on_a_correct_program_or_a_mismatched_expectation(declared: str) -> None:
    scenarios = {"mutant/correct": SCENARIOS["one-thread"]}  # the correct reference: nothing to catch
    with pytest.raises(AssertionError):
        caught(scenarios, {"correct": SimpleNamespace(expect=declared)}, "correct")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("correct", [True, False], ids=["missed", "expects-other"])
def test_caught_lane_mutant_fails_on_the_correct_reference_or_a_mismatched_expectation(
    correct: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded = LANE_MUTANTS["check-outside-lock"]  # one lane, one worker: DPOR ends in seconds
    fake = replace(seeded, build=WorkerScheduler) if correct else replace(seeded, expect="lost_wakeup")
    monkeypatch.setitem(LANE_MUTANTS, "fake", fake)
    with pytest.raises(AssertionError):
        caught_lane_mutant("fake", time_limit=60)
