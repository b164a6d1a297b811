"""`lanecheck bench jobs`: jobs/s of claim-and-admit against a bare claim loop, same SQLite file, same run.

Four worker processes drain one queue of no-op jobs in each phase; the phases alternate on the same
database file (each has its own queue), so both see the same disk, the same WAL and the same load:

* ``bare``: ``BEGIN IMMEDIATE``; take the first pending job; mark it processing; ``COMMIT``; then
  mark it done — the least a correct claim loop does;
* ``admission``: ``SqliteStore.claim`` (lease reaping, budgets read, usage counted, ``decide``, in
  one transaction) and ``finish`` (profile recorded), under a queue budget, a group budget and a
  concurrency limit that are all checked on every claim but leave room for the four workers: the
  ratio is the price of checking, not of waiting (a binding budget lowers throughput by design).

Reported: jobs/s of each (best of the rounds), their ratio (the goal is at least 0.8), claim
latency p50/p99 per phase, double claims (a job two workers were handed: must be 0), denials,
the workers' CPU time per job (least of the rounds; on a busy machine a steadier figure than
jobs/s), and the machine's load average before and after.

``python -m model_checks.designs.admission.bench [--quick] [--floor]`` prints the same as JSON;
``--floor`` adds a third phase per round, ``_floor_worker``: the least SQL admission needs,
hand-written, to tell the price of the checks from the price of the store's code path.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import secrets
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reference.jobs.admission import Conditions
from reference.jobs.budgets import Budgets
from reference.jobs.model import JobSpec
from reference.jobs.sqlite_store import BUSY_TIMEOUT, SqliteStore

PROCESSES = 4
GOAL = 0.8


def _bare_worker(db: str, queue: str, out: str, name: str) -> None:
    conn = sqlite3.connect(db, timeout=BUSY_TIMEOUT, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
    conn.execute("PRAGMA synchronous = NORMAL")
    claimed: list[int] = []
    latency: list[float] = []
    first, cpu = time.time(), time.process_time()
    while True:
        began = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute(
            "SELECT id FROM jobs WHERE state = 'pending' AND queue = ? AND available_at <= ?"
            " ORDER BY priority DESC, available_at, id LIMIT 1",
            (queue, time.time()),
        ).fetchone()
        if row is not None:
            conn.execute(
                "UPDATE jobs SET state = 'processing', attempts = attempts + 1, lease_until = ?,"
                " lease_token = ?, worker = ? WHERE id = ?",
                (time.time() + 300.0, secrets.token_hex(8), name, row[0]),
            )
        conn.execute("COMMIT")
        latency.append(time.perf_counter() - began)
        if row is None:
            break
        claimed.append(int(row[0]))
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "UPDATE jobs SET state = 'done', lease_until = NULL, lease_token = NULL WHERE id = ?", (row[0],)
        )
        conn.execute("COMMIT")
    last, cpu = time.time(), time.process_time() - cpu
    conn.close()
    Path(out).write_text(
        json.dumps({"claimed": claimed, "latency": latency, "denied": 0, "span": [first, last], "cpu": cpu})
    )


def _floor_worker(db: str, queue: str, out: str, name: str) -> None:
    """The least SQL admission needs, hand-written: the bare loop plus, in the claim, the running
    cost of the job's queue and group, the budgets' version and the handler's profile, and in the
    finish the profile's new sample. No lease reaping, no scan past the first job, no Python
    objects: a lower bound on admission's price, for ``python -m ... --floor``; never the result."""
    conn = sqlite3.connect(db, timeout=BUSY_TIMEOUT, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
    conn.execute("PRAGMA synchronous = NORMAL")
    claimed: list[int] = []
    latency: list[float] = []
    first, cpu = time.time(), time.process_time()
    while True:
        began = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("SELECT value FROM meta WHERE key = 'budgets_version'").fetchone()
        row = conn.execute(
            "SELECT id, handler, concurrency_group FROM jobs WHERE state = 'pending' AND queue = ?"
            " AND available_at <= ? ORDER BY priority DESC, available_at, id LIMIT 1",
            (queue, time.time()),
        ).fetchone()
        if row is not None:
            conn.execute(
                "SELECT SUM(concurrency_group = ?2), SUM(CASE WHEN queue = ?1 THEN cost_units END),"
                " SUM(CASE WHEN concurrency_group = ?2 THEN cost_units END)"
                " FROM jobs WHERE state = 'processing'",
                (queue, row[2]),
            ).fetchone()
            conn.execute("SELECT samples FROM profiles WHERE handler = ?", (row[1],)).fetchone()
            conn.execute(
                "UPDATE jobs SET state = 'processing', attempts = attempts + 1, lease_until = ?,"
                " lease_token = ?, worker = ? WHERE id = ?",
                (time.time() + 300.0, secrets.token_hex(8), name, row[0]),
            )
        conn.execute("COMMIT")
        latency.append(time.perf_counter() - began)
        if row is None:
            break
        claimed.append(int(row[0]))
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "UPDATE jobs SET state = 'done', lease_until = NULL, lease_token = NULL WHERE id = ?", (row[0],)
        )
        conn.execute(
            "INSERT INTO profiles (handler, samples) VALUES (?, '[[0.0,0.0]]')"
            " ON CONFLICT (handler) DO UPDATE SET samples = excluded.samples",
            (row[1],),
        )
        conn.execute("COMMIT")
    last, cpu = time.time(), time.process_time() - cpu
    conn.close()
    Path(out).write_text(
        json.dumps({"claimed": claimed, "latency": latency, "denied": 0, "span": [first, last], "cpu": cpu})
    )


def _admission_worker(db: str, queue: str, out: str, name: str) -> None:
    store = SqliteStore(db, process=name)
    conditions = Conditions(enabled=True, retry_after=0.0)
    claimed: list[int] = []
    latency: list[float] = []
    denied = 0
    first, cpu = time.time(), time.process_time()
    while True:
        began = time.perf_counter()
        outcome = store.claim(name, conditions, [queue])
        latency.append(time.perf_counter() - began)
        denied += len(outcome.denied)
        if outcome.claim is None:
            # Given back (claimable again at once: retry_after 0) or claimable: not drained yet.
            # A job another worker holds is that worker's to finish; like the bare loop, this one
            # stops (waiting on it, e.g. polling ``status``, would bill the tail to admission).
            if outcome.denied or store.claimable([queue]):
                continue
            break
        claimed.append(outcome.claim.job.id)
        store.finish(outcome.claim.job.id, outcome.claim.token, None, 0.0, 0)
    last, cpu = time.time(), time.process_time() - cpu
    store.close()
    Path(out).write_text(
        json.dumps(
            {"claimed": claimed, "latency": latency, "denied": denied, "span": [first, last], "cpu": cpu}
        )
    )


Phase = Callable[[str, str, str, str], None]


def _phase(db: str, queue: str, target: Phase, workdir: Path) -> dict[str, Any]:
    context = multiprocessing.get_context("fork")
    outs = [str(workdir / f"{queue}-{i}.json") for i in range(PROCESSES)]
    procs = [context.Process(target=target, args=(db, queue, outs[i], f"w{i}")) for i in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    failed = [p.exitcode for p in procs if p.exitcode != 0]
    if failed:
        raise RuntimeError(f"bench worker exited with {failed} in phase {queue}")
    results = [json.loads(Path(o).read_text()) for o in outs]
    claimed = [job for r in results for job in r["claimed"]]
    latency = sorted(x for r in results for x in r["latency"])
    # From the first worker's first claim to the last one's end: process start-up is not the queue's.
    seconds = max(r["span"][1] for r in results) - min(r["span"][0] for r in results)
    return {
        "jobs": len(claimed),
        "double_claims": len(claimed) - len(set(claimed)),
        "seconds": seconds,
        "latency": latency,
        "denied": sum(r["denied"] for r in results),
        # The workers' own CPU time per job: less swayed than jobs/s by what else the machine runs.
        "cpu_us_per_job": 1e6 * sum(r["cpu"] for r in results) / max(len(claimed), 1),
    }


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    return values[min(len(values) - 1, int(q * len(values)))]


def bench(quick: bool = False, floor: bool = False) -> dict[str, Any]:
    """The comparison; ``floor`` adds a third phase per round, ``_floor_worker`` (reported apart)."""
    jobs = 300 if quick else 3000
    rounds = 1 if quick else 3
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="lanecheck-bench-jobs-") as tmp:
        workdir = Path(tmp)
        db = str(workdir / "jobs.db")
        store = SqliteStore(db, process="bench")
        # Checked on every claim, never binding for four workers (see the module's docstring).
        store.set_budgets(Budgets({f"admission{r}": 64 for r in range(rounds)}, {"g": 64}))
        bare, admitted, floors = [], [], []
        for r in range(rounds):  # alternate, so drift in the machine's load hits both alike
            # Each phase's jobs are queued just before it: both scan the same number of pending rows.
            for _ in range(jobs):
                store.enqueue(JobSpec(f"bare{r}", handler="noop"))
            bare.append(_phase(db, f"bare{r}", _bare_worker, workdir))
            for _ in range(jobs):
                store.enqueue(
                    JobSpec(f"admission{r}", handler="noop", concurrency_group="g", concurrency_limit=8)
                )
            admitted.append(_phase(db, f"admission{r}", _admission_worker, workdir))
            if floor:
                for _ in range(jobs):
                    store.enqueue(JobSpec(f"floor{r}", handler="noop", concurrency_group="g"))
                floors.append(_phase(db, f"floor{r}", _floor_worker, workdir))
        store.close()
    best_bare = min(bare, key=lambda p: p["seconds"])
    best_admitted = min(admitted, key=lambda p: p["seconds"])
    bare_rate = best_bare["jobs"] / best_bare["seconds"]
    admitted_rate = best_admitted["jobs"] / best_admitted["seconds"]
    ratio = admitted_rate / bare_rate
    extra: dict[str, Any] = {}
    if floors:
        best_floor = min(floors, key=lambda p: p["seconds"])
        floor_rate = best_floor["jobs"] / best_floor["seconds"]
        extra = {
            "floor_jobs_per_s": round(floor_rate, 1),
            "floor_ratio_vs_bare": round(floor_rate / bare_rate, 3),
            "floor_double_claims": sum(p["double_claims"] for p in floors),
            "floor_cpu_us_per_job": round(min(p["cpu_us_per_job"] for p in floors), 1),
        }
    return {
        "processes": PROCESSES,
        "jobs_per_phase": jobs,
        "rounds": rounds,
        "bare_jobs_per_s": round(bare_rate, 1),
        "admission_jobs_per_s": round(admitted_rate, 1),
        "ratio_vs_bare": round(ratio, 3),
        "goal_ratio": GOAL,
        "meets_goal": ratio >= GOAL,
        "double_claims": sum(p["double_claims"] for p in bare + admitted),
        "jobs_done": {"bare": sum(p["jobs"] for p in bare), "admission": sum(p["jobs"] for p in admitted)},
        "denials": sum(p["denied"] for p in admitted),
        "claim_latency_ms": {
            name: {
                "p50": round(_percentile(p["latency"], 0.5) * 1e3, 3),
                "p99": round(_percentile(p["latency"], 0.99) * 1e3, 3),
                "mean": round(statistics.fmean(p["latency"]) * 1e3, 3) if p["latency"] else 0.0,
            }
            for name, p in (("bare", best_bare), ("admission", best_admitted))
        },
        "cpu_us_per_job": {
            "bare": round(min(p["cpu_us_per_job"] for p in bare), 1),
            "admission": round(min(p["cpu_us_per_job"] for p in admitted), 1),
        },
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        **extra,
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m model_checks.designs.admission.bench [--quick] [--floor]``: the figures as JSON."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m model_checks.designs.admission.bench")
    parser.add_argument("--quick", action="store_true", help="one round of 300 jobs per phase")
    parser.add_argument("--floor", action="store_true", help="add the hand-written least-SQL admission phase")
    args = parser.parse_args(argv)
    print(json.dumps(bench(quick=args.quick, floor=args.floor), indent=2))


if __name__ == "__main__":
    main()
