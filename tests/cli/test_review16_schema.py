"""Review 16 F3: a design whose own trace schema cannot be read is reported as a broken design,
never as "cannot read" the user's trace (nor "cannot write" the export directory)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from model_checks.cli import app
from model_checks.conformance import trace_schema

runner = CliRunner()
pytestmark = pytest.mark.timeout(120)


def said(result: object) -> str:
    return " ".join(getattr(result, "output", "").split())  # rich wraps long lines


def _schema_missing(package: str, file: str) -> dict[str, object]:
    raise FileNotFoundError(2, "No such file or directory")


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    result = runner.invoke(app, ["traces", "export", str(tmp_path / "out"), "--design", "schedule-gate"])
    assert result.exit_code == 0, result.output
    return sorted((tmp_path / "out").glob("*.jsonl"))[0]


def test_validate_names_the_schema_not_the_trace(exported: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_schema, "_document", _schema_missing)
    result = runner.invoke(app, ["validate", str(exported)])
    assert result.exit_code == 2, result.output
    assert "cannot read its trace schema" in said(result) and "schedule-gate is broken" in said(result)
    assert f"cannot read {exported}" not in said(result)


def test_a_batch_says_the_design_is_broken(exported: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_schema, "_document", _schema_missing)
    result = runner.invoke(app, ["validate", "--jobs", "1", str(exported), str(exported)])
    assert "schedule-gate is broken" in said(result), result.output
    assert "cannot read:" not in said(result)


def test_export_names_the_schema_not_the_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_schema, "_document", _schema_missing)
    result = runner.invoke(app, ["traces", "export", str(tmp_path / "x"), "--design", "schedule-gate"])
    assert result.exit_code == 2, result.output
    assert "cannot read its trace schema" in said(result) and "cannot write" not in said(result)
