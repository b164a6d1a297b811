"""The lock-free Work Lane design: the ToolKit's current lane, an atomic word changed by CAS and
a lock-free bounded MPMC queue, with the worker pool and Stop of the lock-based design."""

from __future__ import annotations

from model_checks.design import built_in

DESIGN = built_in(
    __name__,
    "work-lane-lockfree",
    trace_format=".trace.format:FORMAT",
    exporter=".trace.export:export",
    reference_modules=(
        "reference.work_lane_lockfree",
        "reference.work_lane_scheduler",
        "reference.work_lane_lockfree_lane",
        "reference.work_lane_lockfree_queue",
    ),
    benches={
        "work-lane-lockfree-trace": (
            ".trace_bench",
            "trace validator events/s on a real-thread v2 trace of the lock-free lane (goal 50k/s)",
        )
    },
    summary="the ToolKit's current Work Lane: lane state by CAS, a lock-free lane queue, push then CAS",
    projections={
        "lane": lambda c, s: s.status[0],
        "worker": lambda c, s: s.worker[c.worker_names()[0]][0],
        "producer": lambda c, s: s.producer[c.producer_names()[0]][0],
        "scheduler": lambda c, s: s.phase,
    },
)
