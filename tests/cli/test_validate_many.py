"""`lanecheck validate` of many traces: files, folders and globs in one call, judged in parallel,
summed up in groups (text and ``--json``), with exit codes 0 all allowed, 1 some not allowed,
2 some malformed or not validated; a missing or malformed file never stops the batch.

One file still prints its one verdict as before (tests/conformance/test_cli.py has the rest).
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from model_checks.cli import app
from model_checks.commands.validate import NOT_VALIDATED, expand, judge, render, write_verdict
from model_checks.conformance import validate_file

pytestmark = pytest.mark.timeout(120)

CORPUS = Path(__file__).resolve().parents[1] / "conformance" / "corpus"
RULE_5 = "work-lane rule 5"
runner = CliRunner()


WORK_STEALING_CORPUS = Path(__file__).parents[1] / "work_stealing" / "corpus"


def run(*args: str) -> Any:
    return runner.invoke(app, ["validate", *args])


@pytest.fixture
def batch(tmp_path: Path) -> Path:
    """A folder of traces: 3 allowed (one in a sub-folder), 2 breaking rule 5, 1 rule 4, 1 malformed."""
    picks = {
        "a1.jsonl": "valid_basic_drain.jsonl",
        "a2.jsonl": "valid_resubmit_below_budget.jsonl",
        "sub/a3.jsonl": "valid_prefix_item_pending.jsonl",
        "r5-1.jsonl": "invalid_r5_lost_wakeup.jsonl",
        "r5-2.jsonl": "invalid_r5_resubmit_empty_lane.jsonl",
        "r4.jsonl": "invalid_r4_invoke_twice.jsonl",
        "bad.jsonl": "malformed_wf_seq_gap.jsonl",
    }
    for name, source in picks.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        shutil.copy(CORPUS / source, tmp_path / name)
    (tmp_path / "notes.txt").write_text("not a trace: a folder stands for its *.jsonl only\n")
    return tmp_path


def as_json(result: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def groups(doc: dict[str, Any]) -> dict[str, int]:
    return {g["group"]: g["count"] for g in doc["summary"]["groups"]}


def test_a_folder_is_every_trace_under_it_grouped_by_verdict(batch: Path) -> None:
    result = run(str(batch), "--json")
    assert result.exit_code == 2, result.output  # the malformed one
    doc = as_json(result)
    summary = doc["summary"]
    assert (summary["traces"], summary["allowed"], summary["not_allowed"], summary["malformed"]) == (
        7,
        3,
        3,
        1,
    )
    assert summary["not_validated"] == 0 and summary["code"] == 2
    found = groups(doc)
    rule_5 = [name for name in found if name.startswith(RULE_5)]
    assert len(rule_5) == 1 and found[rule_5[0]] == 2, found
    assert found["allowed"] == 2 and found["allowed as a prefix"] == 1
    assert sorted(Path(f["file"]).name for f in doc["files"]) == sorted(
        ["a1.jsonl", "a2.jsonl", "a3.jsonl", "r5-1.jsonl", "r5-2.jsonl", "r4.jsonl", "bad.jsonl"]
    )


def test_each_file_carries_its_whole_verdict(batch: Path) -> None:
    doc = as_json(run(str(batch / "r5-1.jsonl"), str(batch / "a1.jsonl"), "--json"))
    first, second = doc["files"]
    single = validate_file(batch / "r5-1.jsonl").as_json()
    assert first == {
        "file": str(batch / "r5-1.jsonl"),
        "verdict": "not allowed",
        "group": first["group"],
        **single,
    }
    assert first["group"].startswith(f"{RULE_5}: ") and first["rule"] == 5 and first["seq"] == 7
    assert second["verdict"] == "allowed" and second["code"] == 0
    assert doc["summary"]["code"] == 1


def test_the_text_summary_counts_and_lists_the_failures(batch: Path) -> None:
    result = run(str(batch))
    assert result.exit_code == 2
    lines = result.stdout.splitlines()
    assert lines[0] == "3 allowed, 3 not allowed, 1 malformed (7 traces)"
    assert any(line.startswith(f"NOT ALLOWED: 2 × {RULE_5}: ") for line in lines), lines
    assert "ALLOWED: 2 × allowed" in lines and "ALLOWED: 1 × allowed as a prefix" in lines
    # each failing file under its group with its own message; allowed files only counted
    assert any("r5-1.jsonl: seq 7: drain_end idle" in line for line in lines)
    assert any("bad.jsonl: line 3: seq 3 where 2 was expected" in line for line in lines)
    assert not any("a1.jsonl" in line for line in lines)


def test_globs_are_expanded_here_and_each_file_counted_once(batch: Path) -> None:
    result = run(str(batch / "a*.jsonl"), str(batch / "**" / "a*.jsonl"), str(batch / "a1.jsonl"), "--json")
    assert result.exit_code == 0, result.output
    names = [Path(f["file"]).name for f in as_json(result)["files"]]
    assert names == ["a1.jsonl", "a2.jsonl", "a3.jsonl"]


def test_parallel_and_serial_give_the_same_verdicts(batch: Path) -> None:
    serial = run(str(batch), str(batch / "nope.jsonl"), "--json", "--jobs", "1")
    parallel = run(str(batch), str(batch / "nope.jsonl"), "--json", "--jobs", "3")
    assert serial.exit_code == parallel.exit_code == 2
    assert as_json(serial) == as_json(parallel)
    assert run(str(batch), "--jobs", "1").stdout == run(str(batch), "--jobs", "2").stdout


def test_a_missing_and_a_malformed_file_do_not_stop_the_batch(batch: Path, tmp_path: Path) -> None:
    missing = str(tmp_path / "gone.jsonl")
    result = run(
        missing, str(batch / "bad.jsonl"), str(batch / "a1.jsonl"), str(tmp_path / "x*.jsonl"), "--json"
    )
    assert result.exit_code == 2
    by_name = {Path(f["file"]).name: f for f in as_json(result)["files"]}
    assert (
        by_name["gone.jsonl"]["verdict"] == NOT_VALIDATED and by_name["gone.jsonl"]["group"] == "no such file"
    )
    assert by_name["x*.jsonl"]["group"] == "no file matches this pattern"
    assert by_name["bad.jsonl"]["verdict"] == "malformed" and by_name["bad.jsonl"]["line"] == 3
    assert by_name["a1.jsonl"]["verdict"] == "allowed"
    text = run(missing, str(batch / "a1.jsonl"))
    assert text.exit_code == 2 and f"    {missing}: no such file" in text.stdout.splitlines()


def test_a_file_that_cannot_be_read_is_its_own_verdict(tmp_path: Path) -> None:
    # e.g. deleted between being listed and being read: reported, not raised
    judged = judge(str(tmp_path / "gone.jsonl"), engine="fast", complete=False, whole=True)
    assert judged.category == NOT_VALIDATED and judged.code == 2
    assert judged.group == "cannot read: No such file or directory"
    assert judged.as_json()["allowed"] is False


def test_a_trace_an_engine_cannot_judge_is_reported_per_file(batch: Path) -> None:
    # the spec engine judges no global-lock work-stealing trace: one line per file, exit 2
    for name in ("valid_global_lock_basic.jsonl", "invalid_r2_global_lock_pop_oldest.jsonl"):
        shutil.copy(WORK_STEALING_CORPUS / name, batch / name)
    files = [
        str(batch / "valid_global_lock_basic.jsonl"),
        str(batch / "invalid_r2_global_lock_pop_oldest.jsonl"),
    ]
    doc = as_json(run(*files, "--engine", "spec", "--json"))
    assert [f["verdict"] for f in doc["files"]] == [NOT_VALIDATED, NOT_VALIDATED]
    assert "--engine fast" in doc["files"][0]["message"] and doc["summary"]["code"] == 2


def test_complete_judges_a_folder_of_work_lane_traces(batch: Path) -> None:
    # --complete is no refusal for work-lane traces: stop_end shows their end; without it, a prefix
    doc = as_json(run(str(batch / "a1.jsonl"), str(batch / "sub" / "a3.jsonl"), "--complete", "--json"))
    assert [f["code"] for f in doc["files"]] == [0, 0] and doc["summary"]["code"] == 0
    assert "judged as a prefix (rule 8)" in doc["files"][1]["message"]


@pytest.mark.parametrize(
    ("names", "code"),
    [
        (["a1.jsonl", "a2.jsonl"], 0),
        (["a1.jsonl", "r4.jsonl"], 1),
        (["r4.jsonl", "bad.jsonl", "a1.jsonl"], 2),
    ],
)
def test_exit_code_is_the_worst_verdict(batch: Path, names: list[str], code: int) -> None:
    assert run(*(str(batch / n) for n in names)).exit_code == code


def test_one_file_prints_one_verdict_as_before(batch: Path) -> None:
    result = run(str(batch / "r5-1.jsonl"))
    assert result.exit_code == 1
    assert result.stdout.startswith("NOT ALLOWED seq 7: drain_end idle on lane 0")
    assert "  rule 5: no lost wakeup" in result.stdout
    doc = as_json(run(str(batch / "a1.jsonl"), "--json"))
    assert "files" not in doc and doc["code"] == 0 and doc["allowed"] is True


def test_naming_no_trace_at_all_is_a_usage_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for args in ([str(empty)], [str(tmp_path / "nope.jsonl")], [str(tmp_path / "*.jsonl"), str(empty)]):
        result = run(*args, "--json")
        assert result.exit_code == 2, (args, result.output)
        assert json.loads(result.stdout)["error"], result.output


def test_stdin_is_validated_alone(batch: Path) -> None:
    result = run("-", str(batch / "a1.jsonl"), "--json")
    assert result.exit_code == 2 and json.loads(result.stdout)["option"] == "TRACE"


def test_jobs_must_be_at_least_one(batch: Path) -> None:
    result = run(str(batch), "--jobs", "0")
    assert result.exit_code == 2 and "--jobs" in result.output


def test_expand_keeps_the_order_given() -> None:
    named = expand([str(CORPUS / "valid_basic_drain.jsonl"), str(CORPUS / "invalid_r4_invoke_*.jsonl")])
    assert [Path(n.file).name for n in named] == [
        "valid_basic_drain.jsonl",
        "invalid_r4_invoke_never_posted.jsonl",
        "invalid_r4_invoke_out_of_order.jsonl",
        "invalid_r4_invoke_refused_item.jsonl",
        "invalid_r4_invoke_twice.jsonl",
    ]


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.jsonl")), ids=lambda p: p.stem)
def test_plain_text_is_what_rich_prints_without_colour(path: Path) -> None:
    """Without a terminal one verdict is written without Rich (start-up time): the same text."""
    verdict = validate_file(path)
    plain, rich = io.StringIO(), io.StringIO()
    write_verdict(verdict, plain)
    render(verdict, Console(file=rich, width=200))
    assert plain.getvalue() == rich.getvalue()
