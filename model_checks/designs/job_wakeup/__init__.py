"""How an idle worker of the PostgreSQL job store is woken: LISTEN, then claim, then wait (or poll)."""

from __future__ import annotations

from model_checks.design import built_in

DESIGN = built_in(
    __name__,
    "job-wakeup",
    summary="a job queue's wakeups: LISTEN before the claim that finds nothing, a poll as fallback",
    reference_modules=(
        "reference.jobs.worker",
        "reference.jobs.pg_store",
        "reference.jobs.pg_rows",
        "reference.jobs.pg_session",
        "reference.jobs.pg_primitives",
        "reference.jobs.pg_fast",
        "reference.jobs.pg_listen",
    ),
    projections={
        "worker": lambda c, s: s.worker[c.worker_names()[0]].pc,
        "listening": lambda c, s: s.worker[c.worker_names()[0]].listening,
        "job": lambda c, s: s.job[c.job_names()[0]],
    },
)
