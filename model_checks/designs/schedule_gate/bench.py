"""Benchmarks of the Schedule Gate reference (`lanecheck bench schedule-gate`).

* the shared workload of `lanecheck bench designs` (``workload``), against a
  direct loop calling the same handler on one thread;
* long traces of the real reference for `lanecheck bench validate`
  (``TRACE_BENCH``): 4 producer threads, 16 actors, 4 workers, one random schedule of the
  harness (``gate_scheduled``: reproducible from its seed).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from model_checks.bench.scheduled import run_scheduled
from model_checks.bench.traces import TraceBench, dump, recorded
from model_checks.bench.workload import Workload, drive, versus_direct
from reference.results import Result
from reference.schedule_gate import GateScheduler, header
from reference.tracing import RecordingTracer

if TYPE_CHECKING:
    from model_checks.harness.options import Strategy


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


def gate_scheduled(
    posts: int, seed: int, strategy: Strategy = "pct"
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The trace workload on the real reference under the harness's scheduler, one schedule of
    ``strategy`` (PCT, or ``random``: a switch at any step) chosen by ``seed`` (the same seed,
    the same interleaving and trace): 4 producers post ``posts`` events each over 16 actors, 4
    workers drain them. A refused post stays with its producer, which goes on to the next (a
    retry loop could spin for ever under a schedule that never runs the workers):
    ``(config, events)``."""

    def traced_run(rt: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        tracer = RecordingTracer()
        sched: GateScheduler[str] = GateScheduler(
            [_receive] * 16,
            permits=8,
            workers=4,
            mailbox_capacity=8,
            max_per_drain=4,
            tracer=tracer,
            runtime=rt,
        )

        def producer(p: int) -> Any:
            def produce() -> None:
                for k in range(posts):
                    sched.post((k * 7 + p) % 16, f"p{p}.{k}")

            return produce

        threads = [rt.start_thread(producer(p), f"p{p}") for p in range(4)]
        for t in threads:
            t.join()
        sched.stop()
        return recorded(tracer, "scheduler")

    return run_scheduled(
        traced_run,
        seed=seed,
        max_steps=_STEPS_PER_POST * (4 * posts + 10),
        what="gate workload",
        strategy=strategy,
    )


# A generous bound on the scheduling points of one post, its drain and its share of the stop.
_STEPS_PER_POST = 200


def write_trace(path: Path, posts: int, seed: int = 0) -> int:
    """A trace of ``gate_scheduled(posts, seed, "random")``; its event count. Scheduled by the
    harness, not by the OS: how hard a real-thread trace is to judge (how many drains end
    together) varied from run to run by a factor of 3; a random schedule is reproducible and
    switches threads at any step, as a busy machine's may."""
    config, events = gate_scheduled(posts, seed, "random")
    return dump(path, header(config), events)


# Posts per producer of the long and the short trace.
TRACE_BENCH = TraceBench(write_trace, sizes=(2_500, 250), quick_sizes=(500, 50))

if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(bench(quick="--quick" in sys.argv), indent=2))
