"""The work-stealing design (design 001): Chase-Lev deques, an injector, parking, fork/join."""

from __future__ import annotations

from typing import Any

from model_checks.design import Design


def _deque(c: Any, s: Any) -> Any:
    from spec.work_stealing import BOTTOM, TOP  # with the spec, when a diagram is drawn

    return s.mem.cells[BOTTOM("w0")] - s.mem.cells[TOP("w0")]


DESIGN = Design(
    name="work-stealing",
    # "module:attribute": imported on first use, so that listing the designs stays cheap
    spec="spec.work_stealing:SPEC",
    configs="model_checks.designs.work_stealing.configs:CONFIGS",
    mutants="model_checks.designs.work_stealing.spec_mutants:MUTANTS",
    scenarios="model_checks.designs.work_stealing.harness:SCENARIOS",
    reference_modules=(
        "reference.work_stealing",
        "reference.work_stealing_deque",
        "reference.global_queue_pool",
    ),
    trace_format="model_checks.designs.work_stealing.trace:FORMAT",
    verify_rows=(("conformance", "model_checks.designs.work_stealing.rows:rows"),),
    exporter="model_checks.designs.work_stealing.trace_export:export",
    commands=("model_checks.designs.work_stealing.simulate_command:register",),
    benches={
        "work-stealing": (
            "model_checks.designs.work_stealing.bench",
            "fork-join fib and a task tree: work-stealing pool vs global-lock pool vs ThreadPoolExecutor",
        ),
        "work-stealing-simulator": (
            "model_checks.designs.work_stealing.simulator_bench",
            "the seed's step simulator: 1M tasks on 64 workers, stealing on and off",
        ),
        "work-stealing-trace": (
            "model_checks.designs.work_stealing.trace_bench",
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
