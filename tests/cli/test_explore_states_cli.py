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
