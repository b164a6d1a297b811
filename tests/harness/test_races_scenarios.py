"""Every built design's harness scenarios run clean with the data-race detector on: the reference
(and the scenarios' own bookkeeping) leaves no plain shared access unsynchronised, and the seeded
reference bugs are still caught with the kinds they name (docs/harness.md, "Data races")."""

from __future__ import annotations

from typing import Any

import pytest

from model_checks import registry
from model_checks.design import Scenario
from model_checks.harness import Options, Result, check
from model_checks.harness.design_rows import scenario_row
from model_checks.harness.examples import plain_counter

DESIGNS = ("work-lane", "schedule-gate", "akka-mailbox")
# A small, fixed slice of each correct scenario's schedules: PCT reaches deep interleavings
# early, and a race shows up in any execution that has both accesses unordered.
SAMPLE: dict[str, Any] = {"strategy": "pct", "seed": 7, "max_executions": 12, "minimize": False}

# Mutants found in a few seconds with the detector on (the others take minutes with it: their
# verify rows run without it, see model_checks/designs/work_lane/harness.py).
FAST_MUTANTS: dict[str, tuple[str, ...]] = {
    "work-lane": ("mutant/missing-notify", "mutant/if-not-while", "mutant/double-submit"),
    "schedule-gate": ("mutant/check-then-act",),
    "akka-mailbox": ("mutant/no-recheck", "mutant/past-throughput", "mutant/idle-store"),
}


def table(design: str) -> dict[str, Scenario]:
    return dict(registry.design(design).harness())


def run(scenario: Scenario, **options: Any) -> Result:
    fields = {k: v for k, v in scenario.options.items() if k not in ("time_limit", "max_executions")}
    return check(scenario.build(), Options(**{**fields, **options, "races": True}))


@pytest.mark.timeout(280)
@pytest.mark.parametrize("design", DESIGNS)
def test_correct_scenarios_have_no_data_race(design: str) -> None:
    correct = {name: s for name, s in table(design).items() if not s.must_fail}
    assert correct, f"{design} has no correct scenario"
    for name, scenario in correct.items():
        result = run(scenario, **SAMPLE)
        assert result.races, f"{design}/{name}: the detector did not run"
        assert result.failure is None, f"{design}/{name}:\n{result.report()}"
        assert result.executions == SAMPLE["max_executions"], result.summary()


@pytest.mark.timeout(280)
@pytest.mark.parametrize("design", DESIGNS)
def test_mutants_are_caught_with_their_kinds_with_the_detector_on(design: str) -> None:
    scenarios = table(design)
    for name in FAST_MUTANTS[design]:
        scenario = scenarios[name]
        result = run(scenario, minimize=False, time_limit=60)
        assert result.failure is not None, f"{design}/{name} missed: {result.summary()}"
        assert result.failure.kind == scenario.expect, f"{design}/{name}:\n{result.report()}"


@pytest.mark.timeout(120)
def test_work_lane_rows_run_the_detector_and_a_race_fails_them() -> None:
    """The rows of the correct Work Lane scenarios turn the detector on, so a race (here the
    lost update of a plain counter, run with those rows' options) fails the row."""
    correct = [s for s in table("work-lane").values() if not s.must_fail and s.verify]
    assert correct
    for scenario in correct:
        assert scenario.options.get("races") is True and (scenario.quick_options or {}).get("races") is True
    racy = Scenario("racy", lambda: plain_counter(2), expect="bounded", options=correct[0].options)
    row = scenario_row(registry.design("work-lane"), racy, quick=True)
    assert row.actual == "failed" and "data_race" in row.figures, row


@pytest.mark.timeout(60)
def test_gate_and_akka_correct_scenarios_ask_for_the_detector() -> None:
    for design in ("schedule-gate", "akka-mailbox"):
        for name, scenario in table(design).items():
            if not scenario.must_fail:
                assert scenario.options.get("races") is True, f"{design}/{name}"
