"""`lanecheck report` on the command line: bad input exits 2 naming it; a good run writes the site."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from model_checks.cli import app

runner = CliRunner()


def run(*args: str) -> Any:
    return runner.invoke(app, ["report", *args])


def refused(result: Any, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    for word in words:
        assert word in result.output, (word, result.output)


def test_unknown_design_is_named(tmp_path: Path) -> None:
    refused(run("--design", "no-such-design", "--out", str(tmp_path)), "--design", "no-such-design")
    assert not any(tmp_path.iterdir())


def test_out_that_is_a_file(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("")
    refused(run("--design", "work-lane", "--out", str(target)), "--out", "is a file")
    refused(run("--out", str(target / "below")), "--out", "cannot create")


def test_rows_file_that_is_not_verify_output(tmp_path: Path) -> None:
    bad = tmp_path / "rows.json"
    bad.write_text(json.dumps({"rows": [{"area": "spec"}]}))
    refused(run("--rows", str(bad), "--out", str(tmp_path / "o")), "--rows", "row 1", "subject")
    refused(
        run("--rows", str(tmp_path / "missing.json"), "--out", str(tmp_path / "o")), "--rows", "missing.json"
    )


@pytest.mark.timeout(240)
def test_writes_the_site_with_given_rows(plugin_registered: Path, tmp_path: Path) -> None:
    rows = tmp_path / "rows.json"
    row: dict[str, object] = {
        "area": "harness",
        "subject": "handoff scenario producer-consumer",
        "expected": "exhaustive",
    }
    row |= {"actual": "exhaustive", "figures": "7 executions", "seconds": 0.5}
    rows.write_text(json.dumps({"ok": True, "rows": [row]}))
    result = run("--design", "handoff", "--quick", "--rows", str(rows), "--out", str(tmp_path / "site"))
    assert result.exit_code == 0, result.output
    assert "site written" in result.output
    text = (tmp_path / "site" / "handoff" / "index.html").read_text()
    assert "handoff scenario producer-consumer" in text and "7 executions" in text
    assert "not computed (report --quick)" not in text  # given rows are shown as given
