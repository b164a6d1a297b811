"""The adaptive pool: its decisions (pure), and real worker processes scaled up and down, shut down
by SIGTERM, and orphaned by a kill -9 of the controller, with no job lost or run twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from model_checks.commands import jobs_pool
from reference.jobs import pool_status
from reference.jobs.model import JobSpec
from reference.jobs.pool import PoolController, PoolOptions
from reference.jobs.pool_policy import Observation, PoolPolicy, PoolState, decide, fitting
from reference.jobs.sqlite_store import SqliteStore
from reference.jobs.worker import WorkerOptions

MB = 1 << 20
ROOT = Path(__file__).resolve().parents[2]


def seen(**fields: object) -> Observation:
    base: dict[str, object] = {
        "now": 100.0,
        "active": 0,
        "busy": 0,
        "draining": 0,
        "backlog": 0,
        "available": None,
        "peak": None,
    }
    return Observation(**{**base, **fields})  # type: ignore[arg-type]


POLICY = PoolPolicy(1, 4, idle_grace=10.0, worker_memory=100 * MB, memory_margin=50 * MB)

# ------------------------------------------------------------------------------------ decisions


def test_the_minimum_is_started_first() -> None:
    got = decide(POLICY, PoolState(), seen())
    assert (got.start, got.stop, got.reason, got.held_back) == (1, 0, "minimum", None)


def test_scale_up_follows_the_backlog_on_top_of_the_busy_workers_clamped_by_max() -> None:
    assert decide(POLICY, PoolState(), seen(active=1, busy=1, backlog=2)).start == 2
    assert (
        decide(POLICY, PoolState(), seen(active=2, busy=0, backlog=2)).start == 0
    )  # the idle ones take them
    clamped = decide(POLICY, PoolState(), seen(active=1, busy=1, backlog=50))
    assert (clamped.start, clamped.held_back) == (3, "max")


def test_workers_still_draining_count_against_the_maximum() -> None:
    got = decide(POLICY, PoolState(), seen(active=1, busy=1, draining=2, backlog=9))
    assert (got.start, got.held_back) == (1, "max")


def test_the_memory_gate_holds_starts_back_even_below_the_minimum() -> None:
    # 3 starts need 3 * 100 + 50 MiB; 349 MiB fit two.
    got = decide(POLICY, PoolState(), seen(active=1, busy=1, backlog=9, available=349 * MB, peak=100 * MB))
    assert (got.start, got.held_back) == (2, "memory")
    below = decide(POLICY, PoolState(), seen(available=149 * MB))
    assert (below.start, below.reason, below.held_back) == (0, "minimum", "memory")


def test_the_gate_uses_the_measured_peak_else_the_estimate_and_is_open_without_a_reading() -> None:
    assert fitting(POLICY, 450 * MB, None) == 4  # the 100 MiB estimate
    assert fitting(POLICY, 450 * MB, 200 * MB) == 2
    assert fitting(POLICY, 49 * MB, None) == 0
    assert fitting(POLICY, None, 200 * MB) is None
    assert decide(POLICY, PoolState(), seen(active=1, busy=1, backlog=3)).start == 3


def test_an_idle_pool_stops_its_idle_surplus_after_the_grace_and_starts_the_grace_over() -> None:
    first = decide(POLICY, PoolState(), seen(active=3, busy=0))
    assert (first.stop, first.state.idle_since) == (0, 100.0)
    early = decide(POLICY, first.state, seen(now=109.0, active=3))
    assert early.stop == 0
    late = decide(POLICY, first.state, seen(now=110.0, active=3, busy=1))
    assert (late.stop, late.reason, late.state.idle_since) == (2, "idle", 110.0)
    busy = decide(POLICY, first.state, seen(now=120.0, active=3, busy=3))
    assert busy.stop == 0  # the busy ones are stopped once their job is done
    work = decide(POLICY, first.state, seen(now=200.0, active=3, backlog=1))
    assert (work.stop, work.state.idle_since) == (0, None)


def test_shutdown_stops_every_active_worker() -> None:
    got = decide(POLICY, PoolState(50.0), seen(active=3, busy=2, backlog=7, stopping=True))
    assert (got.start, got.stop, got.reason) == (0, 3, "shutdown")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"min_workers": 3, "max_workers": 2}, "min_workers"),
        ({"min_workers": 0, "max_workers": 0}, "max_workers"),
        ({"min_workers": -1, "max_workers": 2}, "min_workers"),
        ({"min_workers": 1, "max_workers": 2, "idle_grace": float("nan")}, "idle_grace"),
        ({"min_workers": 1, "max_workers": 2, "worker_memory": 0}, "worker_memory"),
        ({"min_workers": 1, "max_workers": 2, "memory_margin": -1}, "memory_margin"),
    ],
)
def test_a_bad_policy_is_refused_naming_the_field(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        PoolPolicy(**kwargs)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ processes


def enqueue(db: Path, n: int, log: Path, sleep: float) -> None:
    with SqliteStore(db) as store:
        for i in range(n):
            store.enqueue(JobSpec("q", {"n": i, "log": str(log), "sleep": sleep}, handler="work"))


def runs(log: Path) -> list[int]:
    return sorted(int(line) for line in log.read_text().split()) if log.exists() else []


def counts(db: Path) -> dict[str, int]:
    with SqliteStore(db) as store:
        return store.status(0).counts


def wait_for(what: Callable[[], bool], timeout: float, why: str) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {why}")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie child of ours counts as gone.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stream:
            return stream.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def controller(
    db: Path,
    tmp: Path | None,
    policy: PoolPolicy,
    *,
    lease: float = 30.0,
    shutdown_timeout: float | None = None,
    **extra: object,
) -> PoolController:
    options = PoolOptions(
        "sqlite:///" + str(db),
        "tests.jobs.handlers",
        policy,
        WorkerOptions(name="p", poll=0.05, lease=lease, system_memory=False),
        interval=0.1,
        status_file=None if tmp is None else tmp / "pool.json",
        shutdown_timeout=shutdown_timeout,
    )
    return PoolController(options, **extra)  # type: ignore[arg-type]


@contextmanager
def running(pool: PoolController) -> Iterator[threading.Thread]:
    """The pool's ``run`` in a thread; on the way out it is stopped and joined (the caller checks
    that the thread ended)."""
    thread = threading.Thread(target=pool.run)
    thread.start()
    try:
        yield thread
    finally:
        pool.request_stop()
        thread.join(20)


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(ROOT)  # the workers import tests.jobs.handlers from here
    yield


@pytest.mark.timeout(40)
@pytest.mark.usefixtures("in_root")
def test_the_pool_scales_up_under_a_backlog_and_down_when_idle(tmp_path: Path) -> None:
    db, log = tmp_path / "jobs.db", tmp_path / "runs.log"
    enqueue(db, 8, log, sleep=0.6)
    pool = controller(db, tmp_path, PoolPolicy(1, 3, idle_grace=0.5))
    most = 0
    with running(pool) as thread:
        deadline = time.monotonic() + 20
        while counts(db).get("done", 0) < 8 and time.monotonic() < deadline:
            most = max(most, len(pool.children))
            time.sleep(0.05)
        assert most == 3, "the backlog did not bring the pool to its maximum"
        wait_for(lambda: len(pool.children) == 1, 10, "the pool to scale back down to its minimum")
        assert pool.report.stopped == 2 and pool.report.lost == 0
    assert not thread.is_alive()
    assert runs(log) == list(range(8))  # every job once
    assert counts(db) == {"pending": 0, "processing": 0, "done": 8, "failed": 0, "discarded": 0}
    assert pool_status.read(tmp_path / "pool.json")["phase"] == "stopped"


@pytest.mark.timeout(20)
@pytest.mark.usefixtures("in_root")
def test_the_memory_gate_keeps_a_process_from_starting(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    enqueue(db, 3, tmp_path / "runs.log", sleep=0)
    pool = controller(db, tmp_path, PoolPolicy(1, 3), memory=lambda: 10 * MB)
    actions = pool.reconcile()
    assert (actions.start, actions.held_back) == (0, "memory") and pool.children == []
    doc = pool_status.read(tmp_path / "pool.json")
    assert doc["last"]["held_back"] == "memory" and doc["backlog"] == 3
    assert any("held back: memory" in line for line in pool_status.lines(doc))


CLI = (
    "import sys, typer\nfrom model_checks.commands import jobs_pool\n"
    "app = typer.Typer(); jobs = typer.Typer(); app.add_typer(jobs, name='jobs'); jobs_pool.register(jobs)\n"
    "app(sys.argv[1:])\n"
)


def start_cli_pool(db: Path, tmp: Path, *extra: str) -> subprocess.Popen[str]:
    args = [
        "jobs",
        "pool",
        "--handlers",
        "tests.jobs.handlers",
        "--store",
        str(db),
        "--status-file",
        str(tmp / "pool.json"),
        "--interval",
        "0.1",
        "--poll",
        "0.05",
        "--no-system-memory",
        *extra,
    ]
    return subprocess.Popen(
        [sys.executable, "-c", CLI, *args],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def busy_workers(tmp: Path) -> list[int]:
    try:
        doc = json.loads((tmp / "pool.json").read_text())
    except (OSError, json.JSONDecodeError):
        return []
    return [w["pid"] for w in doc["workers"] if w["busy"]]


@pytest.mark.timeout(30)
def test_sigterm_lets_every_worker_finish_its_job_and_loses_nothing(tmp_path: Path) -> None:
    db, log = tmp_path / "jobs.db", tmp_path / "runs.log"
    enqueue(db, 6, log, sleep=1.0)
    proc = start_cli_pool(db, tmp_path, "--min-workers", "2", "--max-workers", "2", "--json")
    wait_for(lambda: len(busy_workers(tmp_path)) == 2, 15, "two busy workers")
    pids = busy_workers(tmp_path)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    report = json.loads(out)
    assert report["stopped"] == 2 and report["lost"] == 0 and report["killed"] == 0
    assert not any(alive(pid) for pid in pids)
    state = counts(db)
    assert state["processing"] == 0 and state["done"] >= 2
    assert state["done"] + state["pending"] == 6
    assert runs(log) == list(range(state["done"]))  # done ones ran once; the rest never started
    assert json.loads((tmp_path / "pool.json").read_text())["phase"] == "stopped"


@pytest.mark.timeout(40)
@pytest.mark.usefixtures("in_root")
def test_kill_9_of_the_controller_workers_finish_their_job_and_a_restarted_pool_picks_up(
    tmp_path: Path,
) -> None:
    db, log = tmp_path / "jobs.db", tmp_path / "runs.log"
    enqueue(db, 6, log, sleep=1.0)
    proc = start_cli_pool(db, tmp_path, "--min-workers", "2", "--max-workers", "2")
    wait_for(lambda: len(busy_workers(tmp_path)) == 2, 15, "two busy workers")
    pids = busy_workers(tmp_path)
    proc.kill()
    proc.communicate(timeout=5)
    wait_for(lambda: not any(alive(pid) for pid in pids), 10, "the orphaned workers to stop")
    state = counts(db)
    assert state["processing"] == 0 and state["done"] >= 2  # the jobs in hand were finished
    doc = pool_status.read(tmp_path / "pool.json")
    assert doc["stale"] and "not running" in doc["stale_reason"]
    pool = controller(db, tmp_path, PoolPolicy(1, 2, idle_grace=60))
    with running(pool) as thread:
        wait_for(lambda: counts(db).get("done", 0) == 6, 20, "the restarted pool to finish the jobs")
    assert not thread.is_alive()
    assert runs(log) == list(range(6))  # each job exactly once across both pools


# ------------------------------------------------------------------------------------ the command


def cli_app() -> typer.Typer:
    app, jobs = typer.Typer(), typer.Typer()
    app.add_typer(jobs, name="jobs")
    jobs_pool.register(jobs)
    return app


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--min-workers", "3", "--max-workers", "2"], "--min-workers"),
        (["--handlers", "no_such_module_here"], "--handlers"),
        (["--store", "mysql://x"], "--store"),
        (["--interval", "0"], "--interval"),
    ],
)
def test_bad_pool_options_are_refused_naming_the_option(args: list[str], option: str, tmp_path: Path) -> None:
    base = ["jobs", "pool", "--handlers", "tests.jobs.handlers", "--store", str(tmp_path / "j.db")]
    result = CliRunner().invoke(cli_app(), [*base, *args])
    assert result.exit_code == 2
    assert option in result.output


def test_pool_status_reports_a_missing_file_and_a_stopped_pool(tmp_path: Path) -> None:
    missing = CliRunner().invoke(
        cli_app(), ["jobs", "pool-status", "--status-file", str(tmp_path / "no.json")]
    )
    assert missing.exit_code == 2 and "--status-file" in missing.output
    doc = {
        "controller": os.getpid(),
        "name": "p",
        "phase": "stopped",
        "workers": [],
        "min_workers": 0,
        "max_workers": 2,
        "backlog": 0,
        "available": None,
        "last": {},
        "updated_at": 0,
        "interval": 1,
    }
    pool_status.write(tmp_path / "s.json", doc)
    shown = CliRunner().invoke(cli_app(), ["jobs", "pool-status", "--status-file", str(tmp_path / "s.json")])
    assert shown.exit_code == 0 and "stopped" in shown.output and "STALE" not in shown.output
    pool_status.write(tmp_path / "s.json", {**doc, "phase": "running"})  # alive, but not updated since 1970
    assert pool_status.read(tmp_path / "s.json")["stale"]
