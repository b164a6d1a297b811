"""How an idle worker of the PostgreSQL job store is woken: LISTEN, then claim, then wait (or poll)."""

from __future__ import annotations

from model_checks.design import Design

DESIGN = Design(
    name="job-wakeup",
    # "module:attribute": imported on first use, so that listing the designs stays cheap
    spec="spec.job_wakeup:SPEC",
    configs="model_checks.designs.job_wakeup.configs:CONFIGS",
    mutants="model_checks.designs.job_wakeup.spec_mutants:MUTANTS",
    summary="a job queue's wakeups: LISTEN before the claim that finds nothing, a poll as fallback",
    reference_modules=("reference.jobs.worker", "reference.jobs.pg_store"),
    projections={
        "worker": lambda c, s: s.worker[c.worker_names()[0]].pc,
        "listening": lambda c, s: s.worker[c.worker_names()[0]].listening,
        "job": lambda c, s: s.job[c.job_names()[0]],
    },
)
