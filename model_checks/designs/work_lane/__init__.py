"""The Work Lane design (design 000): lanes + Worker Scheduler + Worker Pool, lock-based."""

from __future__ import annotations

from model_checks.design import built_in

DESIGN = built_in(
    __name__,
    "work-lane",
    summary="the ToolKit's Work Lane: a lane mutex, one reservation per lane, a shared worker pool",
    verify_rows=(
        ("conformance", ".trace.rows:rows"),
        ("conformance", ".link.verify_rows:rows"),
    ),
    tla=".tla:TWIN",
    commands=(".link_command:register",),
    reference_modules=(
        "reference.scheduler",
        "reference.work_lane_scheduler",
        "reference.scheduler_config",
        "reference.work_lane",
        "reference.worker_pool",
    ),
    trace_format=".trace.validate:FORMAT",
    spec_trace_format=".trace.spec_format:FORMAT",
    benches={
        "scheduler": (
            ".bench",
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
