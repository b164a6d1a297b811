"""`lanecheck check` and `lanecheck verify` from the command line: exit codes and outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from model_checks.cli import app

runner = CliRunner()
pytestmark = pytest.mark.timeout(300)


def test_check_holds_exit_0_with_figures() -> None:
    result = runner.invoke(app, ["check", "work-lane", "--config", "small"])
    assert result.exit_code == 0, result.output
    assert "HOLDS" in result.output and "distinct states" in result.output


def test_check_variant_exit_1_and_files(tmp_path: Path) -> None:
    mmd, js = tmp_path / "cx.mmd", tmp_path / "cx.json"
    result = runner.invoke(
        app,
        [
            "check",
            "work-lane",
            "--variant",
            "double-reserve",
            "--mermaid",
            str(mmd),
            "--counterexample",
            str(js),
        ],
    )
    assert result.exit_code == 1, result.output
    assert "OneReservationPerLane" in result.output
    assert mmd.read_text().startswith("sequenceDiagram")
    assert json.loads(js.read_text())["violation"]["length"] == 5


def test_check_json_and_incomplete_exit_3() -> None:
    result = runner.invoke(app, ["check", "work-lane", "--max-states", "50", "--json"])
    assert result.exit_code == 3, result.output
    data = json.loads(result.stdout)
    assert data["verdict"] == "incomplete" and "state bound" in data["incomplete_reason"]


@pytest.mark.parametrize(
    "args",
    [
        ["check", "no-such-design"],
        ["check", "work-lane", "--variant", "nope"],
        ["check", "work-lane", "-c", "colossal"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "known" in result.output


def test_verify_quick_spec_rows() -> None:
    result = runner.invoke(app, ["verify", "--quick", "--area", "spec", "--json"])
    data = json.loads(result.stdout)
    assert result.exit_code == 0, result.output
    assert data["ok"] is True
    subjects = {row["subject"] for row in data["rows"]}
    assert "work-lane [small]" in subjects
    assert sum(1 for s in subjects if s.startswith("work-lane --variant")) == 6
    assert {"schedule-gate [small]", "akka-mailbox [small]"} <= subjects


def test_check_workers_2_safety_json() -> None:
    result = runner.invoke(app, ["check", "work-lane", "--workers", "2", "--no-liveness", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["verdict"], data["states"], data["processes"]) == ("holds", 11_996, 2)


def test_check_workers_2_with_liveness_uses_one_process_and_says_so() -> None:
    result = runner.invoke(app, ["check", "work-lane", "--workers", "2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["processes"] == 1 and "EveryStopReturns" in data["checked"]
    assert any("searched with 1 process, not 2" in note for note in data["notes"])


def test_check_workers_0_is_a_usage_error() -> None:
    result = runner.invoke(app, ["check", "work-lane", "--workers", "0"])
    assert result.exit_code == 2
