"""`lanecheck validate` of a folder or a glob whose ``*.jsonl`` are not all regular files: each such
name is reported as not validated (exit 2), never skipped and never opened. From the second outside
review of the validators (session 44): a FIFO matched by a glob hung the batch (F1), and a folder's
dangling link was skipped with exit 0, "1 allowed" (F2)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from model_checks.cli import app
from model_checks.commands.validate import expand

pytestmark = pytest.mark.timeout(60)

CORPUS = Path(__file__).parent / "corpus"


@pytest.fixture
def odd(tmp_path: Path) -> Path:
    """One allowed trace beside a dangling link, a FIFO and a folder, each named *.jsonl."""
    shutil.copy(CORPUS / "valid_basic_drain.jsonl", tmp_path / "ok.jsonl")
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "gone")
    os.mkfifo(tmp_path / "fifo.jsonl")
    (tmp_path / "dir.jsonl").mkdir()
    return tmp_path


PROBLEMS = {
    "dangling.jsonl": "cannot read: No such file or directory",
    "dir.jsonl": "not a file, and no trace (*.jsonl) in this folder",
    "fifo.jsonl": "not a regular file",
    "ok.jsonl": None,
}


@pytest.mark.parametrize("pattern", [False, True], ids=["folder", "glob"])
def test_each_odd_name_is_reported_in_folder_and_glob_mode(odd: Path, pattern: bool) -> None:
    named = expand([str(odd / "*.jsonl") if pattern else str(odd)])
    assert {Path(n.file).name: n.problem for n in named} == PROBLEMS


@pytest.mark.parametrize("pattern", [False, True], ids=["folder", "glob"])
def test_the_batch_ends_and_says_not_validated(odd: Path, pattern: bool) -> None:
    result = CliRunner().invoke(app, ["validate", str(odd / "*.jsonl") if pattern else str(odd)])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("1 allowed, 3 not validated (4 traces)"), result.output
