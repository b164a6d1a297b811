"""Benchmarks of the Akka-mailbox reference (`lanecheck bench akka-mailbox`).

* the shared workload of `lanecheck bench designs` (``workload``), against a
  direct loop calling the same ``receive`` on one thread;
* traces of the real reference for `lanecheck bench validate` (``TRACE_BENCH``):
  2 producer threads, 3 mailboxes, 2 workers, a suspend/resume and a close
  (``supervised_workload``), judged as finished runs. ``akka_scheduled`` runs it
  under the harness's scheduler with one PCT schedule per seed, so a seed always
  writes the same trace (the validator's cost depends on the interleaving by orders
  of magnitude: docs/performance.md); ``akka_real_threads`` runs it on OS threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from model_checks.bench.scheduled import run_scheduled
from model_checks.bench.traces import TraceBench, dump, recorded
from model_checks.bench.workload import Workload, drive, versus_direct
from reference.akka_mailbox import ActorRef, Dispatcher, trace_header
from reference.runtime import Runtime, ThreadHandle
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


StartThread = Callable[[Callable[[], None], str], ThreadHandle]


def supervised_workload(
    sends: int, start_thread: StartThread, runtime: Runtime | None = None
) -> tuple[Any, list[dict[str, Any]]]:
    """The traced workload: producers ``p0``, ``p1`` send ``sends`` messages each round-robin
    over 3 mailboxes while the calling thread suspends and resumes mailbox 1 and closes
    mailbox 2; then shutdown. ``(config, events)``."""
    tracer = RecordingTracer()
    d = Dispatcher(throughput=2, workers=2, runtime=runtime, tracer=tracer)
    refs: list[ActorRef[str]] = [d.spawn(_receive) for _ in range(3)]

    def producer(p: int) -> Callable[[], None]:
        def produce() -> None:
            for k in range(sends):
                refs[(k + p) % 3].tell(f"p{p}.{k}")

        return produce

    threads = [start_thread(producer(p), f"p{p}") for p in range(2)]
    refs[1].suspend()
    refs[1].resume()
    refs[2].close()
    for t in threads:
        t.join()
    d.shutdown()
    return recorded(tracer, "dispatcher")


def _os_thread(target: Callable[[], None], name: str) -> ThreadHandle:
    thread = threading.Thread(target=target, name=name)
    thread.start()
    return thread


def akka_real_threads(sends: int) -> tuple[Any, list[dict[str, Any]]]:
    """The workload on OS threads with tracing on (each run another interleaving): ``(config, events)``."""
    return supervised_workload(sends, _os_thread)


# Steps of one scheduled run: 41-66 per send (seeds 0, 2, 3 at 1,000 sends); the bound only
# stops a livelock.
_STEPS_PER_SEND = 200


def akka_scheduled(sends: int, seed: int) -> tuple[Any, list[dict[str, Any]]]:
    """The workload on the real reference under the harness's scheduler, one PCT schedule
    chosen by ``seed`` (the harness decides every synchronisation: the same seed, the same
    interleaving and trace): ``(config, events)``."""
    return run_scheduled(
        lambda rt: supervised_workload(sends, rt.start_thread, rt),
        seed=seed,
        max_steps=_STEPS_PER_SEND * (sends + 10),
        what="akka workload",
    )


def write_trace(path: Path, sends: int, seed: int = 0) -> int:
    """A trace of ``akka_scheduled(sends, seed)``; its event count."""
    config, events = akka_scheduled(sends, seed)
    return dump(path, trace_header(config), events)


# Sends per producer of the long and the short trace.
TRACE_BENCH = TraceBench(write_trace, sizes=(1_000, 100), quick_sizes=(300, 30), complete=True)

if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(bench(quick="--quick" in sys.argv), indent=2))
