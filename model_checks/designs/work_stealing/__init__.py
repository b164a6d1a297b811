"""The work-stealing design (design 001): Chase-Lev deques, an injector, parking, fork/join."""

from __future__ import annotations

from typing import Any

from model_checks.design import built_in

# What the state diagrams group the spec's states by: worker w0's view of its own program, its
# deque and its store buffer, and the client's program.


def _worker(c: Any, s: Any) -> Any:
    return s.worker[c.worker_names()[0]].pc


def _deque(c: Any, s: Any) -> Any:
    from spec.work_stealing import BOTTOM, TOP  # with the spec, when a diagram is drawn

    return s.mem.cells[BOTTOM("w0")] - s.mem.cells[TOP("w0")]


def _store_buffer(c: Any, s: Any) -> Any:
    return len(s.mem.pending(c.worker_names()[0]))


def _client(c: Any, s: Any) -> Any:
    return s.client[0]


DESIGN = built_in(
    __name__,
    "work-stealing",
    summary="Chase-Lev deques per worker, an injector, parking with re-check, fork/join; SC or TSO memory",
    reference_modules=(
        "reference.work_stealing",
        "reference.work_stealing_base",
        "reference.work_stealing_park",
        "reference.work_stealing_task",
        "reference.work_stealing_deque",
        "reference.global_queue_pool",
    ),
    spec_trace_format=".trace.spec_search:SPEC_FORMAT",
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
    projections={"worker": _worker, "deque": _deque, "store buffer": _store_buffer, "client": _client},
)
