"""Review 16 (a port team's plug-in design): `lanecheck check` on `--tlc` without a twin (F4) and on
a mutant meant for another configuration (F7)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from model_checks.cli import app

runner = CliRunner()
pytestmark = pytest.mark.timeout(120)


def test_tlc_without_a_twin_is_refused_up_front_naming_the_option() -> None:
    result = runner.invoke(app, ["check", "job-wakeup", "--tlc"])
    assert result.exit_code == 2, result.output
    assert "--tlc" in result.output and "work-lane" in result.output
    assert "internal error" not in result.output and "a bug in lanecheck" not in result.output
    assert "HOLDS" not in result.output  # refused before the check ran


def test_tlc_without_a_twin_json_is_one_error_line_naming_the_option() -> None:
    result = runner.invoke(app, ["check", "job-wakeup", "--tlc", "--json"])
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)
    assert error["option"] == "--tlc" and "no TLA+ twin" in error["error"]


def test_variant_defaults_to_the_mutants_own_configuration_as_verify_does() -> None:
    # notify-only is meant for `delayed` (SpecMutant.config); at `small` the bug cannot happen.
    result = runner.invoke(app, ["check", "job-wakeup", "--variant", "notify-only"])
    assert result.exit_code == 1, result.output
    assert "VIOLATED" in result.output and "Deadlock" in result.output
    assert "'delayed'" in result.output and "SpecMutant.config" in result.output


def test_variant_at_another_configuration_keeps_the_choice_and_says_so() -> None:
    result = runner.invoke(app, ["check", "job-wakeup", "-c", "small", "--variant", "notify-only"])
    assert result.exit_code == 0, result.output
    assert "meant for configuration 'delayed'" in result.output


def test_variant_at_its_own_configuration_has_no_note() -> None:
    result = runner.invoke(app, ["check", "job-wakeup", "-c", "delayed", "--variant", "notify-only"])
    assert result.exit_code == 1, result.output
    assert "note:" not in result.output
