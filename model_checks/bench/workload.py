"""The shared workload of `lanecheck bench designs`, and how a design's bench module offers it.

Every design runs the same work: ``items`` no-op items over ``targets`` lanes /
actors / mailboxes, ``workers`` workers, a budget (throughput) of ``budget``,
``producers`` producer threads posting round-robin; a refused post (full lane,
no permit) is retried after yielding, so every design does the same work.

A design takes part by giving, in one of the modules of its ``Design.benches``,
``workload(items: int, shape: Workload) -> float``: the seconds from the first
post until its reference has run every item (``drive`` runs the producers).
``versus_direct`` measures it against a loop calling the handler itself.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from model_checks import registry

# (items, shape) -> seconds from the first post until every item ran.
Run = Callable[[int, "Workload"], float]


@dataclass(frozen=True)
class Workload:
    targets: int = 16
    workers: int = 4
    budget: int = 16
    producers: int = 4


SHARED = Workload()


def drive(post: Callable[[int, int], bool], items: int, shape: Workload) -> float:
    """Run the producers to the end; return when they started (``time.perf_counter``).

    ``post(target, k)`` is True when the design accepted item ``k``; a refusal is
    retried after yielding. The design drains after this returns, and its
    ``workload`` measures up to the end of the drain.
    """
    per = items // shape.producers

    def producer(p: int) -> None:
        for k in range(per):
            target = (p + k) % shape.targets
            while not post(target, k):
                time.sleep(0)

    started = time.perf_counter()
    run_producers(producer, shape.producers)
    return started


def run_producers(produce: Callable[[int], object], count: int) -> None:
    """Run ``produce(p)`` for p in 0..count-1, each on its own thread named ``p<p>`` (the name the
    traces give a producer), all at once, and wait for them all."""
    threads = [threading.Thread(target=produce, args=(p,), name=f"p{p}") for p in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def paced(count: int, rate: int, post: Callable[[int], object]) -> None:
    """Call ``post(now_ns)`` ``count`` times at ``rate`` calls/s (one producer, for latencies)."""
    clock = time.perf_counter_ns
    interval = 1e9 / rate
    began = clock()
    for i in range(count):
        due = began + int(i * interval)
        while clock() < due:
            # yield when close to due; sleep a little otherwise (no core kept busy waiting)
            time.sleep(0) if due - clock() < 200_000 else time.sleep(0.0001)
        post(clock())


def percentiles(samples: list[int]) -> tuple[float, float]:
    """p50 and p99 of nanosecond ``samples``, in microseconds (sorts them)."""
    samples.sort()
    p50 = samples[len(samples) // 2]
    p99 = samples[min(len(samples) - 1, len(samples) * 99 // 100)]
    return p50 / 1e3, p99 / 1e3


def versus_direct(run: Run, handler: Callable[[int], object], quick: bool = False) -> dict[str, Any]:
    """A design's own bench: the shared workload through its reference (best of three rounds,
    one with ``quick``) against a direct loop calling the same ``handler`` on one thread."""
    items = 20_000 if quick else 200_000
    seconds = min(run(items, SHARED) for _ in range(1 if quick else 3))
    began = time.perf_counter()
    for i in range(items):
        handler(i)
    direct_rate = items / (time.perf_counter() - began)
    rate = items / seconds
    return {
        "items": items,
        "workload": {"targets": SHARED.targets, "workers": SHARED.workers, "budget": SHARED.budget},
        "items_per_s": round(rate),
        "direct_items_per_s": round(direct_rate),
        "ratio_vs_direct": round(rate / direct_rate, 4),
    }


def bench_modules(attribute: str) -> dict[str, ModuleType]:
    """Per design (registry order): the first of its bench modules that defines ``attribute``."""
    found: dict[str, ModuleType] = {}
    for name, design in registry.designs().items():
        for module_name, _ in design.benches.values():
            module = importlib.import_module(module_name)
            if hasattr(module, attribute):
                found[name] = module
                break
    return found


def offered(attribute: str) -> dict[str, Any]:
    """Per design (registry order): ``attribute`` of the first of its bench modules that defines it."""
    return {name: getattr(module, attribute) for name, module in bench_modules(attribute).items()}


def workloads() -> dict[str, Run]:
    """Every design's run of the shared workload, by design name (registry order)."""
    return offered("workload")


__all__ = [
    "SHARED",
    "Run",
    "Workload",
    "bench_modules",
    "drive",
    "offered",
    "paced",
    "percentiles",
    "run_producers",
    "versus_direct",
    "workloads",
]
