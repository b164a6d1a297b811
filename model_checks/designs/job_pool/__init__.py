"""The adaptive worker pool of the job queue: when its controller starts and stops worker processes."""

from __future__ import annotations

from model_checks.design import built_in

DESIGN = built_in(
    __name__,
    "job-pool",
    summary="an adaptive worker pool: min and max workers, scale on backlog, a memory gate, idle scale-down",
    reference_modules=("reference.jobs.pool_policy", "reference.jobs.pool"),
    projections={
        "phase": lambda c, s: s.phase,
        "active": lambda c, s: s.active,
        "backlog": lambda c, s: s.backlog,
    },
)
