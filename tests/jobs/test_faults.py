"""Faults with real processes: a worker killed with SIGKILL in the middle of a job (on SQLite and
on PostgreSQL), and the PostgreSQL server restarted under running workers. Nothing is lost, nothing
completes twice, the attempts account for the killed run, and the processes' merged traces
(the killed one's included) validate as one complete run.

A killed worker's trace file is a prefix of its run: the tracer appends each committed step's
events with one ``os.write`` after the commit, so SIGKILL leaves every batch it wrote whole and
loses at most the batch of a step it had committed but not yet written, which shows as a missing
seq that ``merge`` refuses. Killed in the middle of a handler, as here, it has written everything.

The workers are ``lanecheck jobs worker`` processes; their handlers are this module's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from model_checks.conformance.validator import validate_lines
from model_checks.designs.admission.trace import merged_lines
from reference.jobs import JobSpec
from reference.jobs.admission import Conditions
from reference.jobs.location import open_store
from reference.jobs.tracing import JsonlTraceFile
from tests.pg import PgServer

MODULE = "tests.jobs.test_faults"


def stall_once(payload: Any) -> Any:
    """Log the run; the first run of a job (no marker yet) hangs until it is killed."""
    with open(payload["log"], "a") as log:
        log.write(f"{payload['n']}\n")
    marker = Path(payload["marker"]) if payload.get("marker") else None
    if marker is not None and not marker.exists():
        marker.touch()
        time.sleep(120)
    time.sleep(payload.get("sleep", 0))
    return payload["n"]


HANDLERS = {"stall_once": stall_once}


def wait_for(predicate: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def worker(url: str, traces: Path, name: str, *extra: str) -> subprocess.Popen[str]:
    argv = [
        sys.executable, "-c", "from model_checks.cli import app; app()", "jobs", "worker",
        "--handlers", MODULE, "--name", name, "--store", url, "--trace-dir", str(traces),
        "--quiet", "--json", "--no-system-memory", *extra,
    ]  # fmt: skip
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def enqueue_all(url: str, traces: Path, payloads: list[dict[str, Any]]) -> None:
    with JsonlTraceFile(traces / "trace-setup.jsonl", "setup", {}) as tracer:
        store = open_store(url, tracer=tracer, process="setup")
        for payload in payloads:
            store.enqueue(JobSpec("q", payload, handler="stall_once"))
        store.close()


def final_counts(url: str) -> tuple[dict[str, int], list[Any]]:
    store = open_store(url)
    try:
        counts = dict(store.status(0).counts)
        jobs = [store.get(i) for i in range(1, sum(counts.values()) + 1)]
    finally:
        store.close()
    return counts, jobs


def validate(traces: Path, counts: dict[str, int]) -> None:
    verdict = validate_lines(merged_lines(traces.glob("*.jsonl"), end=counts), complete=True)
    assert verdict.code == 0 and not verdict.prefix, verdict.message


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'jobs.db'}"
    else:
        yield request.getfixturevalue("pg_url")


@pytest.mark.timeout(90)
def test_a_worker_killed_mid_job_loses_nothing(store_url: str, tmp_path: Path) -> None:
    traces, log = tmp_path / "traces", tmp_path / "ran.log"
    traces.mkdir()
    enqueue_all(
        store_url,
        traces,
        [{"n": 0, "log": str(log), "marker": str(tmp_path / "stalled")}]
        + [{"n": n, "log": str(log)} for n in (1, 2)],
    )
    first = worker(store_url, traces, "victim", "--lease", "1", "--max-jobs", "1")
    try:
        wait_for((tmp_path / "stalled").exists, 30, "the victim to start job 1")
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.communicate(timeout=30)
    assert first.returncode == -signal.SIGKILL
    second = worker(store_url, traces, "rescuer", "--lease", "1", "--until-done", "--poll", "0.1")
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    report = json.loads(out)
    assert report["done"] == 3 and report["expired"] == 1  # it reaped the victim's lease

    counts, jobs = final_counts(store_url)
    assert counts["done"] == 3 and sum(counts.values()) == 3
    assert [job.attempts for job in jobs] == [2, 1, 1]  # the killed run spent an attempt, once
    assert sorted(int(n) for n in log.read_text().split()) == [0, 0, 1, 2]  # only job 1 ran twice
    validate(traces, counts)  # the victim's trace (admit, no finish) merged with the rescuer's


@pytest.mark.timeout(120)
def test_postgresql_restarted_mid_run_workers_reconnect_and_go_on(
    pg_server: PgServer, pg_url: str, tmp_path: Path
) -> None:
    traces, log = tmp_path / "traces", tmp_path / "ran.log"
    traces.mkdir()
    jobs = 40
    enqueue_all(pg_url, traces, [{"n": n, "log": str(log), "sleep": 0.2} for n in range(jobs)])
    workers = [worker(pg_url, traces, f"w{i}", "--until-done", "--poll", "0.1") for i in range(2)]

    def both_running() -> bool:
        # A worker's trace has events past its header once it has opened the store and claimed:
        # a worker still starting (a loaded machine) would meet the restart at its first connect,
        # which fails at once by design (tests/jobs/test_cli_pg.py), not mid-run.
        files = [next(iter(traces.glob(f"trace-w{i}-*.jsonl")), None) for i in range(2)]
        return all(f is not None and len(f.read_text().splitlines()) > 1 for f in files)

    try:
        wait_for(both_running, 60, "both workers to claim a job")
        pg_server.restart()  # every session is cut, mid-claim, mid-finish or mid-wait
        assert len(log.read_text().split()) < jobs  # it really was mid-run
        results = [w.communicate(timeout=90) for w in workers]
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
    for w, (out, err) in zip(workers, results, strict=True):
        assert w.returncode == 0, f"stdout: {out}\nstderr: {err}"  # --json: an error is on stdout
    reports = [json.loads(out) for out, _ in results]
    assert sum(r["done"] for r in reports) == jobs  # each job completed by exactly one worker
    assert all(r["lease_lost"] == 0 for r in reports)
    counts, stored = final_counts(pg_url)
    assert counts["done"] == jobs and sum(counts.values()) == jobs
    assert all(job.attempts == 1 for job in stored)
    assert sorted(int(n) for n in log.read_text().split()) == list(range(jobs))  # each ran once
    validate(traces, counts)


@pytest.mark.timeout(120)
def test_a_step_outlasts_a_server_away_longer_than_one_pool_checkout(
    pg_server: PgServer, pg_url: str
) -> None:
    """While the server is down the pool reconnects with a growing backoff, which can outlast one
    checkout's timeout (the CLI's is 10 s; 1 s here): that is a connection lost before anything
    ran, so both kinds of step (a transaction, the fast claim's one statement) wait it out."""
    from reference.jobs.pg_store import PgStore  # psycopg: only where a server is

    store = open_store(pg_url, connect_timeout=1.0, reconnect_timeout=60.0)
    assert isinstance(store, PgStore)
    try:
        store.enqueue(JobSpec("q", {"n": 0}))
        for step in (lambda: store.enqueue(JobSpec("q", {"n": 1})), lambda: store.claim("w", Conditions())):
            pg_server.halt()
            back = threading.Timer(3.0, pg_server.resume)  # away for three checkouts' timeouts
            back.start()
            try:
                step()
            finally:
                back.join()
        assert store.reconnects > 0
        counts = dict(store.status(0).counts)
        assert sum(counts.values()) == 2 and counts["processing"] == 1, counts
    finally:
        store.close()
