"""A correct scenario runs the race detector unless it opts out, and a row that ran without it
says its proof covers synchronisation points only (outside review 16's F1 and F10: a plug-in's
scenario written with no options proved a racy reference "exhaustive" at synchronisation points,
and `lanecheck explore` ran a scenario otherwise than its row)."""

from __future__ import annotations

import pytest

from model_checks.commands.explore import scenario_races
from model_checks.design import Design, Scenario
from model_checks.harness.design_rows import SYNC_POINTS_ONLY, scenario_row
from model_checks.harness.examples import plain_counter

pytestmark = pytest.mark.timeout(120)

DESIGN = Design(name="races-default-test", spec="spec.work_lane:SPEC", configs={}, mutants={})


def test_a_scenario_with_no_options_finds_the_race_in_its_reference() -> None:
    row = scenario_row(DESIGN, Scenario("racy", lambda: plain_counter(2, locked=False)), quick=False)
    assert (row.expected, row.actual) == ("exhaustive", "failed") and not row.ok, row.figures
    assert "data_race" in row.figures, row.figures


def test_a_race_free_scenario_with_no_options_is_a_proof_with_races() -> None:
    row = scenario_row(DESIGN, Scenario("locked", lambda: plain_counter(2, locked=True)), quick=False)
    assert (row.expected, row.actual) == ("exhaustive", "exhaustive") and row.ok, row.figures


def test_a_scenario_that_opts_out_says_its_proof_is_at_synchronisation_points_only() -> None:
    scenario = Scenario("racy", lambda: plain_counter(2, locked=False), options={"races": False})
    row = scenario_row(DESIGN, scenario, quick=False)
    assert (row.expected, row.actual) == (SYNC_POINTS_ONLY, SYNC_POINTS_ONLY) and row.ok, row.figures


def test_a_row_that_expects_a_proof_with_races_is_not_met_by_one_without() -> None:
    # quick options without the detector, full ones with it: the quick row expects the weaker proof
    scenario = Scenario("locked", lambda: plain_counter(2, locked=True), quick_options={"races": False})
    quick = scenario_row(DESIGN, scenario, quick=True)
    assert (quick.expected, quick.actual) == (SYNC_POINTS_ONLY, SYNC_POINTS_ONLY), quick.figures
    assert scenario.search_options(quick=False) == {"races": True}


def test_a_mutant_scenario_keeps_the_detector_off_unless_asked() -> None:
    assert Scenario("bug", lambda: plain_counter(2), expect="lost_wakeup").search_options() == {}


@pytest.mark.parametrize(
    ("name", "races"),
    [
        ("work-lane/stop-from-callback", True),  # its options ask for it
        ("event-pool/two-threads", False),  # opts out (its cost), as its row says
        ("event-pool/one-thread", True),
        ("admission/lease-expiry", True),
        ("work-lane/mutant/missing-notify", False),  # a mutant: off
        ("counter-locked", None),  # a harness example: the harness's own default
    ],
)
def test_explore_runs_a_design_scenario_as_its_row_does(name: str, races: bool | None) -> None:
    assert scenario_races(name) is races
