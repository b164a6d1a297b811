"""The seed's simulator charts for `lanecheck report` (``Design.report_pages``).

Design 001's own question is whether stealing evens the load when every task starts on W0: the
charts show the tasks each worker completed with stealing on and off, and throughput (tasks per
step) as workers are added, from the step simulator (`lanecheck simulate work-stealing`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from model_checks.designs.work_stealing.simulator import Params, Result, simulate, sweep
from model_checks.report.charts import bar_chart


def _mode(steal: bool) -> str:
    return "on" if steal else "off"


def _load(result: Result) -> str:
    bars = [(f"W{i}", float(done)) for i, done in enumerate(result.completed_per_worker)]
    return bar_chart(f"tasks completed per worker, stealing {_mode(result.params.steal)}", bars)


def pages(quick: bool) -> Iterator[tuple[str, str]]:
    """(title, HTML fragment) per chart; ``quick`` simulates fewer tasks."""
    base = Params(workers=8, split=0.55, steal=True, tasks=200 if quick else 1000, seed=0)
    for steal in (True, False):
        result = simulate(replace(base, steal=steal))
        caption = (
            f"<p>{result.params.tasks} initial tasks on W0, {result.params.workers} workers, seed "
            f"{result.params.seed}: {result.steps} steps, {result.steals} steals, imbalance "
            f"{result.imbalance:.2f} (busiest worker over the mean).</p>"
        )
        yield f"load per worker, stealing {_mode(steal)}", caption + _load(result)
    runs = sweep(base, list(range(1, 9)), (True, False))
    bars = [(f"{r.params.workers} workers, stealing {_mode(r.params.steal)}", r.throughput) for r in runs]
    yield "throughput by workers", bar_chart("tasks per step", bars)
