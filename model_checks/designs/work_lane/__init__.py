"""The Work Lane design (design 000): lanes + Worker Scheduler + Worker Pool, lock-based."""

from __future__ import annotations

from model_checks.design import Design

DESIGN = Design(
    name="work-lane",
    # "module:attribute": imported on first use, so that listing the designs stays cheap
    spec="spec.work_lane:SPEC",
    configs="model_checks.designs.work_lane.configs:CONFIGS",
    mutants="model_checks.designs.work_lane.spec_mutants:MUTANTS",
    summary="the ToolKit's Work Lane: a lane mutex, one reservation per lane, a shared worker pool",
    verify_rows=(
        ("conformance", "model_checks.designs.work_lane.trace.rows:rows"),
        ("conformance", "model_checks.designs.work_lane.link.verify_rows:rows"),
    ),
    tla="model_checks.designs.work_lane.tla:TWIN",
    commands=("model_checks.designs.work_lane.link_command:register",),
    scenarios="model_checks.designs.work_lane.harness:SCENARIOS",
    reference_modules=(
        "reference.scheduler",
        "reference.scheduler_config",
        "reference.work_lane",
        "reference.worker_pool",
    ),
    trace_format="model_checks.designs.work_lane.trace.validate:FORMAT",
    benches={
        "scheduler": (
            "model_checks.designs.work_lane.bench",
            "reference Work Lane scheduler vs ThreadPoolExecutor and a direct loop",
        )
    },
    projections={
        "lane": lambda c, s: s.status[0],
        "worker": lambda c, s: s.worker[c.worker_names()[0]][0],
        "producer": lambda c, s: s.producer[c.producer_names()[0]][0],
        "scheduler": lambda c, s: s.phase,
    },
)
