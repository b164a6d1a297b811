"""Jobs/s against the number of worker processes (1, 2, 4, 8), on each store given, in one table
and one chart: the same no-op jobs and the same non-binding budgets as ``bench``'s admission phase.

``python -m model_checks.designs.admission.bench_scale [--quick] [--store URL] [--chart PNG]``
(SQLite always; PostgreSQL too with ``--store``) prints the rows as JSON and the table.

Every figure carries the machine's load average (``os.getloadavg``, one minute) taken just before
it: on a shared machine a figure means little without it.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from model_checks.designs.admission import bench_loops
from model_checks.designs.admission.bench import bench_store, phase
from reference.jobs.budgets import Budgets
from reference.jobs.location import is_postgres
from reference.jobs.model import JobSpec

WORKERS = (1, 2, 4, 8)


def scale(
    stores: list[str | None],
    *,
    quick: bool = False,
    workers: tuple[int, ...] = WORKERS,
    jobs: int | None = None,
) -> dict[str, Any]:
    """For each store (a URL; None: a new SQLite file) and each worker count: jobs/s draining
    ``jobs`` no-op jobs (200 quick, else 2000) with claim-and-admit. Rows: store, workers, jobs,
    seconds, jobs/s, load."""
    jobs = jobs or (200 if quick else 2000)
    rows: list[dict[str, Any]] = []
    for store in stores:
        kind = "postgresql" if store is not None and is_postgres(store) else "sqlite"
        run = secrets.token_hex(3)
        with bench_store(store) as (url, opened, workdir):
            queues = {f"scale{run}{n}": 64 for n in workers}
            opened.set_budgets(Budgets(queues, {f"g{run}": 64}))
            for n in workers:
                queue = f"scale{run}{n}"
                for _ in range(jobs):
                    opened.enqueue(
                        JobSpec(queue, handler="noop", concurrency_group=f"g{run}", concurrency_limit=16)
                    )
                load = os.getloadavg()[0]
                figures = phase(url, queue, bench_loops.admission, workdir, processes=n)
                rows.append(
                    {
                        "store": kind,
                        "workers": n,
                        "jobs": figures["jobs"],
                        "double_claims": figures["double_claims"],
                        "seconds": round(figures["seconds"], 3),
                        "jobs_per_s": round(figures["jobs"] / figures["seconds"], 1),
                        "load_1min": round(load, 2),
                    }
                )
    return {"jobs_per_count": jobs, "cpus": os.cpu_count(), "rows": rows}


def table(figures: dict[str, Any]) -> str:
    """The rows as a Markdown table."""
    lines = ["| store | workers | jobs/s | load (1 min) | double claims |", "|---|---|---|---|---|"]
    for row in figures["rows"]:
        lines.append(
            f"| {row['store']} | {row['workers']} | {row['jobs_per_s']} | {row['load_1min']} |"
            f" {row['double_claims']} |"
        )
    return "\n".join(lines)


def chart(figures: dict[str, Any], path: Path) -> Path:
    """Jobs/s against workers, one line per store, written to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for kind in sorted({row["store"] for row in figures["rows"]}):
        mine = [row for row in figures["rows"] if row["store"] == kind]
        ax.plot([r["workers"] for r in mine], [r["jobs_per_s"] for r in mine], marker="o", label=kind)
        for r in mine:
            ax.annotate(f"load {r['load_1min']}", (r["workers"], r["jobs_per_s"]), fontsize=7)
    ax.set_xlabel("worker processes")
    ax.set_ylabel("jobs/s (claim-and-admit + finish)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(WORKERS), [str(n) for n in WORKERS])
    ax.set_title(f"lanecheck jobs: jobs/s vs workers ({figures['cpus']} CPUs)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> None:
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m model_checks.designs.admission.bench_scale")
    parser.add_argument("--quick", action="store_true", help="200 jobs per worker count (else 2000)")
    parser.add_argument("--store", help="a postgresql:// URL to measure beside SQLite")
    parser.add_argument("--chart", type=Path, help="write the chart here (PNG)")
    args = parser.parse_args(argv)
    figures = scale([None, *([args.store] if args.store else [])], quick=args.quick)
    if args.chart is not None:
        chart(figures, args.chart)
    print(json.dumps(figures, indent=2))
    print(table(figures))


if __name__ == "__main__":
    main()
