"""`lanecheck jobs`: enqueue, worker, status, budgets, workflow through the real root command."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from model_checks.cli import app
from model_checks.conformance.validator import validate_lines
from model_checks.designs.admission.trace import merged_lines
from reference.jobs.tracing import merge
from tests.helpers.cli import bad_option
from tests.jobs.helpers import check_trace

runner = CliRunner()


def run(*args: str) -> Any:
    return runner.invoke(app, list(args))


def work_once(db: str, *args: str) -> Any:
    """``jobs worker --once`` with the test handlers on ``db``, plus ``args``."""
    return run("jobs", "worker", "--handlers", "tests.jobs.handlers", "--once", "--store", db, *args)


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'jobs.db'}"


def test_enqueue_worker_status_round_trip(db: str, tmp_path: Path) -> None:
    assert run("jobs", "budgets", "--queue", "work=4", "--group", "g=2", "--store", db).exit_code == 0
    for n in range(3):
        result = run(
            "jobs",
            "enqueue",
            "work",
            "--payload",
            json.dumps({"n": n}),
            "--group",
            "g",
            "--cost",
            "2",
            "--store",
            db,
            "--json",
        )
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["state"] == "pending"
    traces = tmp_path / "traces"
    traces.mkdir()
    result = work_once(db, "--json", "--trace-dir", str(traces), "--name", "w0")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["done"] == 3 and report["stopped"] == "idle"
    status = json.loads(run("jobs", "status", "--store", db, "--json").stdout)
    assert status["counts"]["done"] == 3 and status["budgets"]["queues"] == {"work": 4}
    job = json.loads(run("jobs", "status", "--job", "1", "--store", db, "--json").stdout)
    assert job["result"] == {"n": 0}
    _, events = merge(traces.glob("*.jsonl"))
    assert [e["event"] for e in events].count("finish") == 3 and check_trace(events) == []


def test_cost_over_budget_is_refused_with_exit_2(db: str) -> None:
    run("jobs", "budgets", "--queue", "exports=8", "--store", db)
    result = run("jobs", "enqueue", "exports", "--cost", "9", "--store", db, "--json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)
    assert error["option"] == "--cost" and "exceeds queue 'exports' budget 8" in error["error"]


@pytest.mark.parametrize(
    "command_line",
    [
        "enqueue q --payload {bad",
        "enqueue q --cost -1",
        "enqueue q --max-attempts 0",
        "enqueue q --delay nan",
        "worker --handlers no.such.module",
        "worker --handlers tests.jobs.handlers --lease 0",
        "budgets --queue providers",
        "status --job 7",
    ],
)
def test_bad_arguments_exit_2_naming_the_option(db: str, command_line: str) -> None:
    args, option = bad_option(command_line)
    assert run("jobs", "budgets", "--clear", "--store", db).exit_code == 0  # the store exists (status reads)
    result = run("jobs", *args, "--store", db, "--json")
    assert result.exit_code == 2, result.output
    assert option in result.stdout and "Traceback" not in result.output


def test_enqueue_with_a_limit_but_no_group_is_refused(db: str) -> None:
    result = run("jobs", "enqueue", "q", "--limit", "2", "--store", db)
    assert result.exit_code == 2 and "concurrency_group" in result.output


def test_bad_store_urls(tmp_path: Path) -> None:
    assert run("jobs", "status", "--store", "postgres://x/y").exit_code == 2
    assert run("jobs", "status", "--store", f"sqlite:///{tmp_path}").exit_code == 2
    assert run("jobs", "status", "--store", f"sqlite:///{tmp_path}/no/such/dir.db").exit_code == 2
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    result = run("jobs", "status", "--store", str(garbage))
    assert result.exit_code == 2 and "--store" in result.output


def test_store_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANECHECK_JOBS_STORE", f"sqlite:///{tmp_path / 'env.db'}")
    assert run("jobs", "enqueue", "q").exit_code == 0
    assert (tmp_path / "env.db").exists()


def test_workflow_command_and_time_budget(db: str, tmp_path: Path) -> None:
    definition = tmp_path / "flow.json"
    definition.write_text(
        json.dumps(
            {
                "name": "research",
                "queue": "workflows",
                "budget": {"max_for_each_items": 12},
                "steps": [
                    {"kind": "then", "handler": "plan", "queue": "workflows"},
                    {
                        "kind": "for_each",
                        "key": "tasks",
                        "handler": "square",
                        "into": "results",
                        "queue": "workflows",
                    },
                ],
            }
        )
    )
    result = run("jobs", "workflow", str(definition), "--state", '{"count": 3}', "--store", db, "--json")
    assert result.exit_code == 0, result.output
    run_id = json.loads(result.stdout)["id"]
    result = work_once(db, "--time-budget", "30", "--quiet")
    assert result.exit_code == 0, result.output
    doc = json.loads(run("jobs", "status", "--workflow", str(run_id), "--store", db, "--json").stdout)
    assert doc["status"] == "completed" and doc["state"]["results"] == [0, 1, 4]
    assert (
        doc["budget"]["limits"]["max_for_each_items"] == 12 and doc["budget"]["usage"]["for_each_items"] == 3
    )
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "steps": []}')
    assert run("jobs", "workflow", str(bad), "--store", db).exit_code == 2


def _cli_run(db: str, traces: Path, *, trace_enqueues: bool) -> Any:
    """Enqueue 3 jobs and drain them with ``worker --once``, all from the command line."""
    traced = ["--trace-dir", str(traces)] if trace_enqueues else []
    result = run("jobs", "budgets", "--queue", "work=4", "--store", db, *traced)
    assert result.exit_code == 0, result.output
    for n in range(3):
        payload = json.dumps({"n": n})
        result = run("jobs", "enqueue", "work", "--payload", payload, "--cost", "2", "--store", db, *traced)
        assert result.exit_code == 0, result.output
    result = work_once(db, "--quiet", "--trace-dir", str(traces), "--name", "w0")
    assert result.exit_code == 0, result.output
    counts = json.loads(run("jobs", "status", "--store", db, "--json").stdout)["counts"]
    return validate_lines(merged_lines(traces.glob("*.jsonl"), end=counts), complete=True)


def test_a_command_line_run_traced_throughout_validates(db: str, tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    verdict = _cli_run(db, traces, trace_enqueues=True)
    assert verdict.code == 0, verdict.message
    # One file per command; three enqueues in this one test process: suffixed, none reused.
    names = sorted(p.name for p in traces.glob("*.jsonl"))
    assert len(names) == 5 and sum(n.startswith("trace-enqueue-") for n in names) == 3
    headers = [json.loads(p.read_text().splitlines()[0]) for p in traces.glob("*.jsonl")]
    assert {h["design"] for h in headers} == {"admission"}


def test_a_run_whose_enqueues_were_not_traced_is_rejected(db: str, tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    verdict = _cli_run(db, traces, trace_enqueues=False)
    assert verdict.code != 0 and "never enqueued" in verdict.message


def _trace_dir_help(command: str) -> str:
    jobs = typer.main.get_command(app).commands["jobs"]  # type: ignore[attr-defined]
    [option] = [p for p in jobs.commands[command].params if p.name == "trace_dir"]
    return str(option.help)


def test_the_trace_dir_help_names_the_file_the_command_writes(db: str, tmp_path: Path) -> None:
    assert "DIR/trace-NAME-PID.jsonl" in _trace_dir_help("worker")
    assert "DIR/trace-enqueue-PID.jsonl" in _trace_dir_help("enqueue")
    run("jobs", "enqueue", "work", "--store", db, "--trace-dir", str(tmp_path))
    work_once(db, "--quiet", "--trace-dir", str(tmp_path), "--name", "w0")
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == [
        f"trace-enqueue-{os.getpid()}.jsonl",
        f"trace-w0-{os.getpid()}.jsonl",
    ]
