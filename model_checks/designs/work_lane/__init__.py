"""The Work Lane design (design 000): lanes + Worker Scheduler + Worker Pool, lock-based."""

from __future__ import annotations

from model_checks.design import Design
from model_checks.designs.work_lane.configs import CONFIGS
from model_checks.designs.work_lane.spec_mutants import MUTANTS
from spec.work_lane import SPEC

DESIGN = Design(
    name="work-lane",
    spec=SPEC,
    configs=CONFIGS,
    mutants=MUTANTS,
    summary="the ToolKit's Work Lane: a lane mutex, one reservation per lane, a shared worker pool",
    verify_rows=(
        ("conformance", "model_checks.designs.work_lane.trace.rows:rows"),
        ("conformance", "model_checks.designs.work_lane.link.verify_rows:rows"),
    ),
    tla="model_checks.designs.work_lane.tla:TWIN",
    commands=("model_checks.designs.work_lane.link_command:register",),
    scenarios="model_checks.designs.work_lane.harness:SCENARIOS",
    reference_modules=("reference.scheduler", "reference.work_lane", "reference.worker_pool"),
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
