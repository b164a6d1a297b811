"""Swarm testing on Ray: distinct seeds, the first failure wins, its schedule replays in one process."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest
from typer.testing import CliRunner

from model_checks.cli import app
from model_checks.commands.explore import build_scenario
from model_checks.harness import Options
from model_checks.harness.swarm import seeds_for, swarm

pytestmark = pytest.mark.timeout(120)
runner = CliRunner()


def test_a_failure_wins_and_replays_locally(ray_session: Any) -> None:
    cli = runner.invoke(
        app, ["explore", "counter-racy", "--engine", "ray", "--swarm", "2", "--strategy", "pct", "--json"]
    )
    assert cli.exit_code == 1, cli.output
    report = json.loads(cli.output[cli.output.index("{") :])
    assert report["verdict"] == "failed" and report["swarm"]["winner"] in (0, 1)
    replay = runner.invoke(app, ["explore", "counter-racy", "--replay", report["failure"]["schedule"]])
    assert replay.exit_code == 1 and "lost update" in replay.output


def test_totals_are_merged_over_every_search(ray_session: Any) -> None:
    options = Options(strategy="random", max_executions=15)
    outcome = swarm(ray_session, partial(build_scenario, "counter-locked"), options, 3)
    assert outcome.winner is None and outcome.result.verdict == "bounded"
    assert outcome.per_search == [15, 15, 15] and outcome.result.executions == 45
    assert outcome.seeds == [0, 1, 2] and len(set(seeds_for(2**63 - 2, 3))) == 3


def test_a_swarm_needs_ray_and_a_sampling_strategy() -> None:
    cli = runner.invoke(app, ["explore", "counter-racy", "--swarm", "2"])
    assert cli.exit_code == 2 and "--engine ray" in cli.output
    cli = runner.invoke(app, ["explore", "counter-racy", "--engine", "ray", "--swarm", "2"])
    assert cli.exit_code == 2 and "--strategy" in cli.output
    cli = runner.invoke(app, ["explore", "counter-racy", "--engine", "ray", "--strategy", "pct"])
    assert cli.exit_code == 2 and "--swarm" in cli.output
