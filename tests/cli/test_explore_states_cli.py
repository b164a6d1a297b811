"""`lanecheck explore --strategy states`: sleep sets by default, `--no-sleep-sets` for every
transition, refused with any other strategy."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from model_checks.cli import app

runner = CliRunner()


@pytest.mark.timeout(120)
def test_the_state_search_says_whether_it_used_sleep_sets() -> None:
    slept = runner.invoke(app, ["explore", "handoff-while", "--strategy", "states", "--json"])
    plain = runner.invoke(
        app, ["explore", "handoff-while", "--strategy", "states", "--no-sleep-sets", "--json"]
    )
    assert slept.exit_code == 0 and plain.exit_code == 0, (slept.output, plain.output)
    a, b = json.loads(slept.output), json.loads(plain.output)
    assert a["verdict"] == b["verdict"] == "exhaustive"
    assert "with sleep sets" in a["verdict_text"] and "sleep sets" not in b["verdict_text"]
    assert a["executions"] < b["executions"]


def test_no_sleep_sets_needs_the_state_search() -> None:
    result = runner.invoke(app, ["explore", "handoff-while", "--no-sleep-sets"])
    assert result.exit_code != 0
    assert "--no-sleep-sets" in result.output and "--strategy states" in result.output


@pytest.mark.timeout(120)
def test_a_design_scenario_is_searched_as_its_history_free_twin() -> None:
    # The Work Lane's harness rows keep the whole trace (the report site reads it); a kept trace
    # makes two orders of independent steps two states. The state search runs the scenario's
    # ``build_for_states`` instead: same checks, no history, fewer states, the same verdict.
    from model_checks.commands.explore import build_scenario
    from model_checks.harness import Options
    from model_checks.harness.stateful import StatefulResult, check_states

    name = "work-lane/stop-from-callback"
    options = Options(races=False, minimize=False, time_limit=60)
    kept = check_states(build_scenario(name), options)
    free = check_states(build_scenario(name, for_states=True), options)
    assert isinstance(kept, StatefulResult) and isinstance(free, StatefulResult)
    assert kept.verdict == free.verdict == "exhaustive", (kept.figures(), free.figures())
    assert kept.outcomes == free.outcomes
    assert free.states < kept.states / 2, (free.states, kept.states)

    shown = runner.invoke(app, ["explore", name, "--strategy", "states", "--no-races", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["states"] == free.states


@pytest.mark.timeout(120)
def test_a_failure_the_state_search_finds_in_the_twin_replays_on_the_scenario() -> None:
    # The report's hint replays without --strategy states, so on ``build``: the twin differs only
    # in what the scheduler keeps between steps, never in a scheduling point of the program.
    name = "work-lane/mutant/stop-skips-inflight"
    found = runner.invoke(app, ["explore", name, "--strategy", "states", "--json"])
    failure = json.loads(found.output)["failure"]
    assert failure is not None and failure["kind"] == "assertion", found.output
    replayed = runner.invoke(app, ["explore", name, "--replay", failure["schedule"], "--json"])
    again = json.loads(replayed.output)["failure"]
    assert again is not None and again["kind"] == "assertion", replayed.output
    assert again["message"] == failure["message"]
