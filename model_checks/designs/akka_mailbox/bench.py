"""Benchmarks of the Akka-mailbox reference (`lanecheck bench akka-mailbox`).

* the shared workload of `lanecheck bench designs` (``workload``), against a
  direct loop calling the same ``receive`` on one thread;
* traces of the real reference for `lanecheck bench validate`
  (``TRACE_BENCH``, ``akka_real_threads``): 2 producer threads, 3 mailboxes,
  2 workers, a suspend/resume and a close; judged as finished runs.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from model_checks.bench.traces import TraceBench, dump
from model_checks.bench.workload import Workload, drive, versus_direct
from reference.akka_mailbox import ActorRef, Dispatcher, trace_header
from reference.tracing import RecordingTracer


def _receive(item: object) -> None:
    return None


def workload(items: int, shape: Workload) -> float:
    """The shared workload on a Dispatcher, one mailbox per target (seconds; a tell never refuses)."""
    dispatcher: Dispatcher = Dispatcher(shape.budget, shape.workers)
    refs = [dispatcher.spawn(_receive) for _ in range(shape.targets)]
    started = drive(lambda t, k: (refs[t].tell(k), True)[1], items, shape)
    dispatcher.shutdown()
    return time.perf_counter() - started


def bench(quick: bool = False) -> dict[str, Any]:
    return versus_direct(workload, _receive, quick)


def akka_real_threads(sends: int) -> tuple[Any, list[dict[str, Any]]]:
    """Run the reference on real threads with tracing on: ``(config, events)``."""
    tracer = RecordingTracer()
    d = Dispatcher(throughput=2, workers=2, tracer=tracer)
    refs: list[ActorRef[str]] = [d.spawn(lambda m: None) for _ in range(3)]

    def produce(p: int) -> None:
        for k in range(sends):
            refs[(k + p) % 3].tell(f"p{p}.{k}")

    threads = [threading.Thread(target=produce, args=(p,), name=f"p{p}") for p in range(2)]
    for t in threads:
        t.start()
    refs[1].suspend()
    refs[1].resume()
    refs[2].close()
    for t in threads:
        t.join()
    d.shutdown()
    if tracer.config is None:
        raise RuntimeError("the dispatcher began no trace")
    return tracer.config, tracer.events()


def write_trace(path: Path, sends: int, seed: int = 0) -> int:
    """A trace of ``akka_real_threads(sends)`` (real threads: ``seed`` is unused); its event count."""
    config, events = akka_real_threads(sends)
    return dump(path, trace_header(config), events)


# Sends per producer of the long and the short trace.
TRACE_BENCH = TraceBench(write_trace, sizes=(1_000, 100), quick_sizes=(300, 30), complete=True)

if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(bench(quick="--quick" in sys.argv), indent=2))
