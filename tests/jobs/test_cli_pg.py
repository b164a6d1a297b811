"""`lanecheck jobs ... --store postgresql://...`: the commands on the PostgreSQL store, through the
real root command; a server that is not there is an exit 2 naming --store."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from model_checks.cli import app
from model_checks.conformance.validator import validate_lines
from model_checks.designs.admission.trace import merged_lines

pytestmark = pytest.mark.timeout(120)
runner = CliRunner()


def run(*args: str) -> Any:
    return runner.invoke(app, list(args))


def test_enqueue_budgets_worker_status_workflow_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    result = run("jobs", "budgets", "--queue", "work=4", "--trace-dir", str(traces), "--store", pg_url)
    assert result.exit_code == 0, result.output
    for n in range(3):
        result = run(
            "jobs", "enqueue", "work", "--payload", json.dumps({"n": n}), "--cost", "2",
            "--trace-dir", str(traces), "--store", pg_url, "--json",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["id"] == n + 1
    result = run(
        "jobs", "worker", "--handlers", "tests.jobs.handlers", "--until-done", "--quiet", "--poll", "0.05",
        "--no-system-memory", "--name", "w1", "--trace-dir", str(traces), "--store", pg_url, "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["done"] == 3 and report["stopped"] == "done"
    status = json.loads(run("jobs", "status", "--store", pg_url, "--json").stdout)
    assert status["counts"]["done"] == 3 and status["budgets"]["queues"] == {"work": 4}
    job = json.loads(run("jobs", "status", "--job", "2", "--store", pg_url, "--json").stdout)
    assert job["state"] == "done" and job["result"] == {"n": 1}
    # The three processes' traces merge into one run the admission format accepts.
    end = {k: v for k, v in status["counts"].items() if v}
    verdict = validate_lines(merged_lines(traces.glob("*.jsonl"), end=end), complete=True)
    assert verdict.code == 0, verdict.message

    flow = tmp_path / "flow.json"
    steps = [
        {"kind": "then", "handler": "plan", "queue": "flows"},
        {"kind": "for_each", "key": "tasks", "handler": "square", "into": "out", "queue": "flows"},
    ]
    flow.write_text(json.dumps({"name": "squares", "queue": "flows", "steps": steps}))
    result = run("jobs", "workflow", str(flow), "--state", '{"count": 3}', "--store", pg_url, "--json")
    assert result.exit_code == 0, result.output
    assert (
        run("jobs", "worker", "--handlers", "tests.jobs.handlers", "--once", "--store", pg_url).exit_code == 0
    )
    run_doc = json.loads(run("jobs", "status", "--workflow", "1", "--store", pg_url, "--json").stdout)
    assert run_doc["status"] == "completed" and run_doc["state"]["out"] == [0, 1, 4]


def test_a_postgresql_store_opened_by_url_is_not_a_sqlite_file(pg_url: str, tmp_path: Path) -> None:
    result = run("jobs", "enqueue", "q", "--store", pg_url)
    assert result.exit_code == 0 and "enqueued job 1 on q" in result.output
    assert not list(tmp_path.glob("*.db")) and not list(Path.cwd().glob("lanecheck-jobs.db"))


def test_an_unreachable_server_is_exit_2_naming_the_store(tmp_path: Path) -> None:
    missing = f"postgresql://nobody@{str(tmp_path / 'no-socket-here').replace('/', '%2F')}/db"
    result = run("jobs", "status", "--store", missing, "--json")
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)
    assert error["option"] == "--store" and "cannot reach the PostgreSQL store" in error["error"]
    assert "Traceback" not in result.output


def test_a_sqlite_command_never_imports_psycopg(tmp_path: Path) -> None:
    import subprocess

    code = (
        "import sys\nfrom typer.testing import CliRunner\nfrom model_checks.cli import app\n"
        f"r = CliRunner().invoke(app, ['jobs', 'enqueue', 'q', '--store', 'sqlite:///{tmp_path}/j.db'])\n"
        "assert r.exit_code == 0, r.output\nprint('psycopg' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
