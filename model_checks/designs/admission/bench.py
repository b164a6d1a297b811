"""`lanecheck bench jobs`: jobs/s of claim-and-admit against a bare claim loop, same store, same run.

Four worker processes drain one queue of no-op jobs in each phase; the phases alternate on the same
store (each has its own queue), so both see the same disk, the same log and the same load:

* ``bare``: the least a correct claim loop does (``bench_loops``): on SQLite ``BEGIN IMMEDIATE``,
  take the first pending job, mark it processing, ``COMMIT``; on PostgreSQL one ``UPDATE ... WHERE
  id = (SELECT ... FOR UPDATE SKIP LOCKED)``; then mark it done;
* ``admission``: the store's ``claim`` (lease reaping, budgets read, usage counted, ``decide``, in
  one transaction) and ``finish`` (profile recorded), under a queue budget, a group budget and a
  concurrency limit that are all checked on every claim but leave room for the four workers: the
  ratio is the price of checking, not of waiting (a binding budget lowers throughput by design).

Reported: jobs/s of each (best of the rounds), their ratio (the goal is at least 0.8), claim
latency p50/p99 per phase, double claims (a job two workers were handed: must be 0), denials,
the workers' CPU time per job (least of the rounds; on a busy machine a steadier figure than
jobs/s), and the machine's load average before and after.

``python -m model_checks.designs.admission.bench [--quick] [--floor] [--store URL]`` prints the
same as JSON; ``--store postgresql://...`` runs it on that database (SQLite: a new temporary file);
``--floor`` adds a third phase per round, to tell the price of the checks from the price of the
store's code path: on SQLite the least SQL admission needs, hand-written; on PostgreSQL the
store's own claim and finish functions called from the bare loop's plain connection.
``bench_scale`` gives jobs/s against the number of workers on both stores, a table and a chart.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import secrets
import statistics
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from model_checks.designs.admission import bench_loops
from reference.jobs.budgets import Budgets
from reference.jobs.core import StoreCore
from reference.jobs.location import is_postgres, open_store
from reference.jobs.model import JobSpec

PROCESSES = 4
GOAL = 0.8


Phase = Callable[[str, str, str, str], None]


def phase(url: str, queue: str, target: Phase, workdir: Path, processes: int = PROCESSES) -> dict[str, Any]:
    """``processes`` processes of ``target`` drain ``queue`` of the store at ``url``: the figures."""
    context = multiprocessing.get_context("fork")
    outs = [str(workdir / f"{queue}-{i}.json") for i in range(processes)]
    procs = [context.Process(target=target, args=(url, queue, outs[i], f"w{i}")) for i in range(processes)]
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


@contextmanager
def bench_store(url: str | None) -> Iterator[tuple[str, StoreCore, Path]]:
    """The store a bench runs on (``url``, or a new SQLite file), opened, and a work directory."""
    with tempfile.TemporaryDirectory(prefix="lanecheck-bench-jobs-") as tmp:
        workdir = Path(tmp)
        where = url if url is not None else "sqlite:///" + str(workdir / "jobs.db")
        store = open_store(where, process="bench")
        try:
            yield where, store, workdir
        finally:
            store.close()


def bench(quick: bool = False, floor: bool = False, store: str | None = None) -> dict[str, Any]:
    """The comparison on ``store`` (a URL; None: a new SQLite file); ``floor`` adds a third phase
    per round, ``bench_loops.sqlite_floor`` or ``pg_floor`` (reported apart)."""
    postgres = store is not None and is_postgres(store)
    jobs = 300 if quick else 3000
    rounds = 1 if quick else 3
    run = secrets.token_hex(3)  # queue names of this run: a shared database may hold others
    bare_loop = bench_loops.pg_bare if postgres else bench_loops.sqlite_bare
    floor_loop = bench_loops.pg_floor if postgres else bench_loops.sqlite_floor
    load_before = os.getloadavg()
    with bench_store(store) as (url, opened, workdir):
        # Checked on every claim, never binding for four workers (see the module's docstring).
        budgeted = [f"{kind}{run}{r}" for kind in ("admission", "floor") for r in range(rounds)]
        opened.set_budgets(Budgets(dict.fromkeys(budgeted, 64), {f"g{run}": 64}))
        bare: list[dict[str, Any]] = []
        admitted: list[dict[str, Any]] = []
        floors: list[dict[str, Any]] = []
        for r in range(rounds):  # alternate, so drift in the machine's load hits both alike
            # Each phase's jobs are queued just before it: both scan the same number of pending rows.
            for _ in range(jobs):
                opened.enqueue(JobSpec(f"bare{run}{r}", handler="noop"))
            bare.append(phase(url, f"bare{run}{r}", bare_loop, workdir))
            for kind in ("admission", "floor") if floor else ("admission",):
                # The same jobs and budgets for the floor as for the store.
                queue = f"{kind}{run}{r}"
                spec = JobSpec(queue, handler="noop", concurrency_group=f"g{run}", concurrency_limit=8)
                for _ in range(jobs):
                    opened.enqueue(spec)
                loop = bench_loops.admission if kind == "admission" else floor_loop
                (admitted if kind == "admission" else floors).append(phase(url, queue, loop, workdir))
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
        "store": "postgresql" if postgres else "sqlite",
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
    """``python -m model_checks.designs.admission.bench [--quick] [--floor] [--store URL]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m model_checks.designs.admission.bench")
    parser.add_argument("--quick", action="store_true", help="one round of 300 jobs per phase")
    parser.add_argument(
        "--floor", action="store_true", help="add a phase of the least admission needs (SQL and client)"
    )
    parser.add_argument("--store", help="a postgresql:// URL to run on (default: a new SQLite file)")
    args = parser.parse_args(argv)
    print(json.dumps(bench(quick=args.quick, floor=args.floor, store=args.store), indent=2))


if __name__ == "__main__":
    main()
