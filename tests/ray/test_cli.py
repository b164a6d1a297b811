"""The command line's ray engine: a check on Ray, liveness refused, Ray missing.

Apart from ``test_engine.py``: a command-line check starts (and ends) its own actors, which
could not get a CPU while that module's pool holds both of the local Ray's."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from typer.testing import CliRunner

from model_checks.cli import app
from model_checks.explorer.ray.engine import LIVENESS_UNSUPPORTED

pytestmark = pytest.mark.timeout(120)
runner = CliRunner()


def test_cli_runs_a_check_on_ray(ray_session: Any) -> None:
    cli = runner.invoke(
        app,
        ["check", "work-lane", "-c", "small", "--engine", "ray", "--workers", "2", "--no-liveness", "--json"],
    )
    assert cli.exit_code == 0, cli.output
    assert '"states": 11996,' in cli.output and '"verdict": "holds"' in cli.output


def test_cli_refuses_liveness_plainly() -> None:
    cli = runner.invoke(app, ["check", "work-lane", "--engine", "ray", "--workers", "2"])
    assert cli.exit_code == 2 and LIVENESS_UNSUPPORTED[:40] in cli.output


def test_without_ray_the_engine_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    cli = runner.invoke(app, ["check", "work-lane", "--engine", "ray", "--no-liveness"])
    assert cli.exit_code == 2 and "pip install 'lanecheck[ray]'" in cli.output
    cli = runner.invoke(
        app, ["explore", "counter-racy", "--engine", "ray", "--swarm", "2", "--strategy", "pct"]
    )
    assert cli.exit_code == 2 and "pip install 'lanecheck[ray]'" in cli.output
