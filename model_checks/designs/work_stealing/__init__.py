"""The work-stealing design (design 001): Chase-Lev deques, an injector, parking, fork/join."""

from __future__ import annotations

from typing import Any

from model_checks.design import built_in


def _deque(c: Any, s: Any) -> Any:
    from spec.work_stealing import BOTTOM, TOP  # with the spec, when a diagram is drawn

    return s.mem.cells[BOTTOM("w0")] - s.mem.cells[TOP("w0")]


DESIGN = built_in(
    __name__,
    "work-stealing",
    scenarios=".harness:SCENARIOS",
    reference_modules=(
        "reference.work_stealing",
        "reference.work_stealing_base",
        "reference.work_stealing_task",
        "reference.work_stealing_deque",
        "reference.global_queue_pool",
    ),
    trace_format=".trace:FORMAT",
    verify_rows=(("conformance", ".rows:rows"),),
    exporter=".trace_export:export",
    commands=(".simulate_command:register",),
    report_pages=(".report_pages:pages",),
    benches={
        "work-stealing": (
            ".bench",
            "fork-join fib and a task tree: work-stealing pool vs global-lock pool vs ThreadPoolExecutor",
        ),
        "work-stealing-simulator": (
            ".simulator_bench",
            "the seed's step simulator: 1M tasks on 64 workers, stealing on and off",
        ),
        "work-stealing-trace": (
            ".trace_bench",
            "trace validator events/s on a 1M-event work-stealing trace (goal 50k/s)",
        ),
    },
    summary="Chase-Lev deques per worker, an injector, parking with re-check, fork/join; SC or TSO memory",
    projections={
        "worker": lambda c, s: s.worker[c.worker_names()[0]].pc,
        "deque": _deque,
        "store buffer": lambda c, s: len(s.mem.pending(c.worker_names()[0])),
        "client": lambda c, s: s.client[0],
    },
)
