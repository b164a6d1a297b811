"""Benchmarks of the Schedule Gate reference (`lanecheck bench schedule-gate`).

* the shared workload of `lanecheck bench designs` (``workload``), against a
  direct loop calling the same handler on one thread;
* long traces of the real reference for `lanecheck bench validate`
  (``TRACE_BENCH``): 4 producer threads, 16 actors, 4 workers.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from model_checks.bench.traces import TraceBench, dump
from model_checks.bench.workload import Workload, drive, run_producers, versus_direct
from reference.results import Result
from reference.schedule_gate import GateScheduler, header
from reference.tracing import RecordingTracer


def _receive(item: object) -> None:
    return None


def workload(items: int, shape: Workload) -> float:
    """The shared workload on a GateScheduler with a permit per actor (seconds)."""
    gate: GateScheduler[int] = GateScheduler(
        [_receive] * shape.targets,
        permits=shape.targets,
        workers=shape.workers,
        mailbox_capacity=1024,
        max_per_drain=shape.budget,
    )
    started = drive(lambda t, k: gate.post(t, k) is Result.SUCCESS, items, shape)
    gate.stop()
    return time.perf_counter() - started


def bench(quick: bool = False) -> dict[str, Any]:
    return versus_direct(workload, _receive, quick)


def write_trace(path: Path, posts: int, seed: int = 0) -> int:
    """A trace of the real reference: ``posts`` posts per producer (real threads: ``seed`` is unused,
    the interleaving varies run to run); the number of events written."""
    tracer = RecordingTracer()
    sched: GateScheduler[str] = GateScheduler(
        [lambda e: None] * 16, permits=8, workers=4, mailbox_capacity=8, max_per_drain=4, tracer=tracer
    )

    def produce(p: int) -> None:
        for k in range(posts):
            while sched.post((k * 7 + p) % 16, f"p{p}.{k}") is not Result.SUCCESS:
                time.sleep(0.0001)

    run_producers(produce, 4)
    sched.stop()
    if tracer.config is None:
        raise RuntimeError("the scheduler began no trace")
    return dump(path, header(tracer.config), tracer.events())


# Posts per producer of the long and the short trace.
TRACE_BENCH = TraceBench(write_trace, sizes=(2_500, 250), quick_sizes=(500, 50))

if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(bench(quick="--quick" in sys.argv), indent=2))
