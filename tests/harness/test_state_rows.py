"""Verify rows that prove by the state search (``options={"strategy": "states"}``): the row runs
``check_states``, says "exhaustive" only when that search ended, names the abstract states it
counted, and a seeded bug in such a row is still caught (design_rows._search)."""

from __future__ import annotations

import pytest

from model_checks.design import Design, Program, Scenario
from model_checks.harness.design_rows import scenario_row
from model_checks.harness.examples import bounded_buffer, parking_pool

pytestmark = pytest.mark.timeout(300)

DESIGN = Design(name="state-rows-test", spec="spec.work_lane:SPEC", configs={}, mutants={})


def test_a_state_row_proves_a_program_dpor_has_many_traces_of() -> None:
    scenario = Scenario("buffer", lambda: bounded_buffer(1, 2, 2, 2), options={"strategy": "states"})
    row = scenario_row(DESIGN, scenario, quick=False)
    assert (row.expected, row.actual) == ("exhaustive", "exhaustive"), row.figures
    assert "abstract states (sleep sets)" in row.figures


def test_a_state_row_under_a_budget_it_cannot_finish_in_is_bounded_not_a_pass() -> None:
    scenario = Scenario(
        "buffer", lambda: bounded_buffer(1, 2, 2, 2), options={"strategy": "states", "max_executions": 20}
    )
    row = scenario_row(DESIGN, scenario, quick=False)
    assert row.actual == "bounded" and not row.ok, row.figures


def test_a_state_row_catches_a_lost_wakeup() -> None:
    def pool() -> Program:
        return parking_pool(2, 2, recheck=False)  # its idle worker parks without re-checking

    scenario = Scenario("pool", pool, expect="lost_wakeup", options={"strategy": "states"})
    row = scenario_row(DESIGN, scenario, quick=False)
    assert row.actual == "caught" and row.ok, row.figures


def test_a_state_row_runs_the_scenarios_history_free_build() -> None:
    def kept() -> Program:
        raise AssertionError("the state search ran the build that keeps history")

    scenario = Scenario(
        "buffer",
        kept,
        build_for_states=lambda: bounded_buffer(1, 2, 1, 1),
        options={"strategy": "states"},
    )
    row = scenario_row(DESIGN, scenario, quick=False)
    assert row.actual == "exhaustive", row.figures
    # any other strategy runs ``build``
    other = Scenario("buffer", kept, build_for_states=scenario.build_for_states, options={"strategy": "dfs"})
    with pytest.raises(AssertionError, match="keeps history"):
        scenario_row(DESIGN, other, quick=False)


def test_a_scenario_without_a_history_free_build_gives_its_build_to_the_state_search() -> None:
    built = bounded_buffer(1, 2, 1, 1)
    scenario = Scenario("buffer", lambda: built)
    assert scenario.program(for_states=True) is built
    assert scenario.program() is built
