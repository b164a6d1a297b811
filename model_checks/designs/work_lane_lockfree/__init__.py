"""The lock-free Work Lane design: the ToolKit's current lane, an atomic word changed by CAS and
a lock-free bounded MPMC queue, with the worker pool and Stop of the lock-based design."""

from __future__ import annotations

from model_checks.design import Design

DESIGN = Design(
    name="work-lane-lockfree",
    # "module:attribute": imported on first use, so that listing the designs stays cheap
    spec="spec.work_lane_lockfree:SPEC",
    configs="model_checks.designs.work_lane_lockfree.configs:CONFIGS",
    mutants="model_checks.designs.work_lane_lockfree.spec_mutants:MUTANTS",
    scenarios="model_checks.designs.work_lane_lockfree.harness:SCENARIOS",
    trace_format="model_checks.designs.work_lane_lockfree.trace.format:FORMAT",
    exporter="model_checks.designs.work_lane_lockfree.trace.export:export",
    reference_modules=(
        "reference.work_lane_lockfree",
        "reference.work_lane_lockfree_lane",
        "reference.work_lane_lockfree_queue",
    ),
    summary="the ToolKit's current Work Lane: lane state by CAS, a lock-free lane queue, push then CAS",
    projections={
        "lane": lambda c, s: s.status[0],
        "worker": lambda c, s: s.worker[c.worker_names()[0]][0],
        "producer": lambda c, s: s.producer[c.producer_names()[0]][0],
        "scheduler": lambda c, s: s.phase,
    },
)
