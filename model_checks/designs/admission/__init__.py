"""Queuety's resource layer (design 004): workers claim and admit jobs under group limits and budgets."""

from __future__ import annotations

from model_checks.design import Design

DESIGN = Design(
    name="admission",
    # "module:attribute": imported on first use, so that listing the designs stays cheap
    spec="spec.admission:SPEC",
    configs="model_checks.designs.admission.configs:CONFIGS",
    mutants="model_checks.designs.admission.spec_mutants:MUTANTS",
    summary="a job queue's admission: claim and admit in one transaction, group limits, cost budgets",
    trace_format="model_checks.designs.admission.trace:FORMAT",
    scenarios="model_checks.designs.admission.harness:SCENARIOS",
    verify_rows=(("harness", "model_checks.designs.admission.rows:rows"),),
    reference_modules=(
        "reference.jobs.core",
        "reference.jobs.admission",
        "reference.jobs.inmemory",
        "reference.jobs.sqlite_store",
    ),
    benches={
        "jobs": (
            "model_checks.designs.admission.bench",
            "jobs/s with claim-and-admit vs a bare claim loop, same SQLite file, 4 processes; claim p50/p99",
        )
    },
    projections={
        "job": lambda c, s: s.job[c.job_names()[0]].status,
        "worker": lambda c, s: s.worker[c.worker_names()[0]].pc,
        "pending": lambda c, s: len(s.ready),
        "expiries left": lambda c, s: s.expiries,
    },
)
