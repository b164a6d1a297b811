"""The shared workload of `lanecheck bench designs`, and how a design's bench module offers it.

Every design runs the same work: ``items`` no-op items over ``targets`` lanes /
actors / mailboxes, ``workers`` workers, a budget (throughput) of ``budget``,
``producers`` producer threads posting round-robin; a refused post (full lane,
no permit) is retried after yielding, so every design does the same work.

A design takes part by giving, in one of the modules of its ``Design.benches``,
``workload(items: int, shape: Workload) -> float``: the seconds from the first
post until its reference has run every item (``drive`` runs the producers).
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

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

    threads = [threading.Thread(target=producer, args=(p,)) for p in range(shape.producers)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return started


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


def workloads() -> dict[str, Run]:
    """Every design's run of the shared workload, by design name (registry order)."""
    runs: dict[str, Run] = {}
    for name, module in bench_modules("workload").items():
        run: Run = module.workload
        runs[name] = run
    return runs


__all__ = ["SHARED", "Run", "Workload", "bench_modules", "drive", "workloads"]
