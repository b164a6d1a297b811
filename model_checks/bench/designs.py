"""The three reference designs on one workload, in one run: items/s of each, as ratios.

Workload: ``items`` no-op items over 16 lanes / actors / mailboxes, 4 workers,
a budget (throughput) of 16, 4 producer threads posting round-robin; a refused
post (full lane, no permit) is retried after yielding, so every design does the
same work. Each design is run ``rounds`` times and the best round counts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from reference.akka_mailbox import Dispatcher
from reference.results import Result
from reference.schedule_gate import GateScheduler
from reference.scheduler import LaneSpec, StopMode, WorkerScheduler

TARGETS = 16
WORKERS = 4
BUDGET = 16
PRODUCERS = 4


def _drive(post: Callable[[int, int], bool], items: int) -> float:
    """Run the producers; return the seconds they took (the design drains inside ``finish``)."""
    per = items // PRODUCERS

    def producer(p: int) -> None:
        for k in range(per):
            target = (p + k) % TARGETS
            while not post(target, k):
                time.sleep(0)

    threads = [threading.Thread(target=producer, args=(p,)) for p in range(PRODUCERS)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return started


def work_lane(items: int) -> float:
    count = [0]

    def invoke(ctx: object, item: object) -> None:
        count[0] += 1

    sched: WorkerScheduler[int] = WorkerScheduler(
        [LaneSpec(invoke) for _ in range(TARGETS)], workers=WORKERS, lane_capacity=1024, max_per_drain=BUDGET
    )
    handles = [sched.get_lane(i)[1] for i in range(TARGETS)]
    started = _drive(lambda t, k: sched.try_post(handles[t], k) is Result.SUCCESS, items)
    sched.stop(StopMode.DRAIN)
    return time.perf_counter() - started


def schedule_gate(items: int) -> float:
    def receive(item: object) -> None:
        return None

    gate: GateScheduler[int] = GateScheduler(
        [receive] * TARGETS, permits=TARGETS, workers=WORKERS, mailbox_capacity=1024, max_per_drain=BUDGET
    )
    started = _drive(lambda t, k: gate.post(t, k) is Result.SUCCESS, items)
    gate.stop()
    return time.perf_counter() - started


def akka_mailbox(items: int) -> float:
    def receive(item: object) -> None:
        return None

    dispatcher: Dispatcher = Dispatcher(BUDGET, WORKERS)
    refs = [dispatcher.spawn(receive) for _ in range(TARGETS)]
    started = _drive(lambda t, k: (refs[t].tell(k), True)[1], items)
    dispatcher.shutdown()
    return time.perf_counter() - started


DESIGNS: dict[str, Callable[[int], float]] = {
    "work-lane": work_lane,
    "schedule-gate": schedule_gate,
    "akka-mailbox": akka_mailbox,
}


def bench(quick: bool = False, rounds: int = 3) -> dict[str, Any]:
    items = 20_000 if quick else 200_000
    out: dict[str, Any] = {"items": items, "targets": TARGETS, "workers": WORKERS, "budget": BUDGET}
    rates: dict[str, float] = {}
    for name, run in DESIGNS.items():
        best = min(run(items) for _ in range(1 if quick else rounds))
        rates[name] = items / best
        out[f"{name}_items_per_s"] = round(rates[name])
    for name, rate in rates.items():
        out[f"{name}_vs_work_lane"] = round(rate / rates["work-lane"], 3)
    return out


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(bench(quick="--quick" in sys.argv), indent=2))
