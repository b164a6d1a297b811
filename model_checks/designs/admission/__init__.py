"""Queuety's resource layer (design 004): workers claim and admit jobs under group limits and budgets."""

from __future__ import annotations

from model_checks.design import built_in

DESIGN = built_in(
    __name__,
    "admission",
    summary="a job queue's admission: claim and admit in one transaction, group limits, cost budgets",
    verify_rows=(("harness", ".rows:rows"),),
    reference_modules=(
        "reference.jobs.core",
        "reference.jobs.admission",
        "reference.jobs.inmemory",
        "reference.jobs.sqlite_store",
        "reference.jobs.primitives",
        "reference.jobs.rows",
        "reference.jobs.sqlite_rows",
    ),
    benches={
        "jobs": (
            ".bench",
            "jobs/s with claim-and-admit vs a bare claim loop (SQLite, or --store postgresql://...), "
            "4 processes; claim p50/p99",
        ),
        "jobs-soak": (
            ".soak",
            "100,000 jobs (2,000 with --quick), 4 workers, kill -9 every ~3 s, tight budgets; the merged "
            "trace validated",
        ),
    },
    projections={
        "job": lambda c, s: s.job[c.job_names()[0]].status,
        "worker": lambda c, s: s.worker[c.worker_names()[0]].pc,
        "pending": lambda c, s: len(s.ready),
        "expiries left": lambda c, s: s.expiries,
    },
)
