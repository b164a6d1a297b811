"""Benchmark of the work-stealing reference (``lanecheck bench work-stealing``).

Two fine-grained workloads, each pool measured in the same run:

- **fork-join**: recursive ``fib(n)`` where every call above the cutoff spawns ``fib(n - 1)``,
  computes ``fib(n - 2)`` itself and joins (one task per spawn), on the work-stealing pool and on
  the global-lock pool (the seed's "stealing off"). ``ThreadPoolExecutor`` has no join that
  helps (a blocking join deadlocks once every thread waits), so it is not run here;
- **tree**: a binary tree of tasks, each forking its two children without joining (completion
  is a shared countdown), on all three: the work-stealing pool, the global-lock pool and
  ``concurrent.futures.ThreadPoolExecutor``.

Figures: tasks per second, microseconds per task (wall time / tasks) and the per-task overhead
against the same computation done sequentially in one thread; the per-worker balance (tasks
run by each worker; ``balance`` = least / most); steals; the ratios of the work-stealing pool
against each baseline *in the same run*; the machine's load average and CPU count, and
``machine`` (``model_checks.bench.machine.context()``: load, cores, whether the process is pinned). Under the
GIL the workers' Python code does not run in parallel, so the ratios measure scheduling
overhead, not speed-up.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from model_checks.bench.machine import context
from reference.global_queue_pool import GlobalQueuePool
from reference.results import Result
from reference.scheduler import StopMode
from reference.work_stealing import PoolBase, WorkStealingPool

PoolClass = Callable[..., PoolBase]
POOLS: dict[str, PoolClass] = {"stealing": WorkStealingPool, "global-lock": GlobalQueuePool}


def fib_sequential(n: int) -> int:
    return n if n < 2 else fib_sequential(n - 1) + fib_sequential(n - 2)


def _fib_tasks(n: int) -> int:
    """Tasks the fork-join fib runs: one root plus one spawn per call with n >= 2."""
    calls = [1, 1]
    for _ in range(2, n + 1):
        calls.append(calls[-1] + calls[-2] + 1)
    return calls[n] // 2 + 1 if n >= 2 else 1


def _fib(pool: PoolBase, n: int) -> int:
    if n < 2:
        return n
    # fork-join as it is written: spawn one half, compute the other here, then join (the join
    # helps while the spawned half runs elsewhere)
    left = pool.spawn(lambda: _fib(pool, n - 1))
    right = _fib(pool, n - 2)
    joined: int = pool.join(left)
    return joined + right


def run_fib(cls: PoolClass, n: int, workers: int) -> dict[str, Any]:
    pool = cls(workers=workers, capacity=64)
    try:
        start = time.perf_counter()
        result, root = pool.submit(lambda: _fib(pool, n))
        assert result is Result.SUCCESS and root is not None
        value = pool.join(root)
        seconds = time.perf_counter() - start
    finally:
        pool.stop(StopMode.DRAIN)
    assert value == fib_sequential(n), f"fib({n}) = {value}"
    return _figures(seconds, sum(pool.stats.runs), pool.stats.runs, sum(pool.stats.steals))


class _Countdown:
    """Tasks left in the tree; the last one sets ``done``."""

    def __init__(self, total: int) -> None:
        self.left = total
        self.lock = threading.Lock()
        self.done = threading.Event()

    def tick(self) -> None:
        with self.lock:
            self.left -= 1
            if self.left == 0:
                self.done.set()


def _tree_task(
    fork: Callable[[Callable[[], None]], object], depth: int, count: _Countdown, runs: Counter[int]
) -> None:
    runs[threading.get_ident()] += 1
    if depth > 0:
        fork(lambda: _tree_task(fork, depth - 1, count, runs))
        fork(lambda: _tree_task(fork, depth - 1, count, runs))
    count.tick()


def run_tree_pool(cls: PoolClass, depth: int, workers: int) -> dict[str, Any]:
    total = (1 << (depth + 1)) - 1
    count, runs = _Countdown(total), Counter[int]()
    pool = cls(workers=workers, capacity=64)
    try:
        start = time.perf_counter()
        result, _ = pool.submit(lambda: _tree_task(pool.spawn, depth, count, runs))
        assert result is Result.SUCCESS
        if not count.done.wait(timeout=300):
            raise RuntimeError(f"tree of depth {depth} did not finish: {count.left} tasks left")
        seconds = time.perf_counter() - start
    finally:
        pool.stop(StopMode.DRAIN)
    return _figures(seconds, total, pool.stats.runs, sum(pool.stats.steals))


def run_tree_executor(depth: int, workers: int) -> dict[str, Any]:
    total = (1 << (depth + 1)) - 1
    count, runs = _Countdown(total), Counter[int]()
    with ThreadPoolExecutor(max_workers=workers) as executor:
        start = time.perf_counter()
        executor.submit(_tree_task, executor.submit, depth, count, runs)
        if not count.done.wait(timeout=300):
            raise RuntimeError(f"tree of depth {depth} did not finish on the executor")
        seconds = time.perf_counter() - start
    per_worker = sorted(runs.values(), reverse=True) + [0] * max(0, workers - len(runs))
    return _figures(seconds, total, per_worker, 0)


def _figures(seconds: float, tasks: int, per_worker: list[int], steals: int) -> dict[str, Any]:
    most = max(per_worker) if per_worker else 0
    return {
        "seconds": round(seconds, 4),
        "tasks": tasks,
        "tasks_per_s": round(tasks / seconds) if seconds > 0 else None,
        "us_per_task": round(seconds / tasks * 1e6, 2),
        "per_worker": list(per_worker),
        "balance": round(min(per_worker) / most, 3) if most else None,
        "steals": steals,
    }


def _sequential_us(fn: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) / calls * 1e6


def _ratio(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    if not a["tasks_per_s"] or not b["tasks_per_s"]:
        return None
    return round(float(a["tasks_per_s"]) / float(b["tasks_per_s"]), 2)


def bench(quick: bool = False) -> dict[str, Any]:
    """The figures of one run (``quick``: small sizes, for tests and a first look)."""
    workers = 2 if quick else 4
    n = 10 if quick else 20
    depth = 6 if quick else 13
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    fib = {name: run_fib(cls, n, workers) for name, cls in POOLS.items()}
    tree = {name: run_tree_pool(cls, depth, workers) for name, cls in POOLS.items()}
    tree["ThreadPoolExecutor"] = run_tree_executor(depth, workers)
    fib_calls = _fib_tasks(n)
    seq_fib = _sequential_us(lambda: fib_sequential(n), fib_calls)
    for figures in fib.values():
        figures["overhead_us_per_task"] = round(figures["us_per_task"] - seq_fib, 2)
    return {
        "machine": context(),  # load, cores, pinned: the ratios below depend on all three
        "workers": workers,
        "fib_n": n,
        "tree_depth": depth,
        "cpu_count": os.cpu_count(),
        "load_average": [round(x, 2) for x in load] if load else None,
        "fork_join": fib,
        "tree": tree,
        "fork_join_vs_global_lock": _ratio(fib["stealing"], fib["global-lock"]),
        "tree_vs_global_lock": _ratio(tree["stealing"], tree["global-lock"]),
        "tree_vs_thread_pool_executor": _ratio(tree["stealing"], tree["ThreadPoolExecutor"]),
        "sequential_fib_us_per_task": round(seq_fib, 3),
    }


if __name__ == "__main__":  # pragma: no cover
    import json
    import sys

    json.dump(bench(quick="--quick" in sys.argv), sys.stdout, indent=2)
    sys.stdout.write("\n")
