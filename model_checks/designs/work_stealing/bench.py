"""Benchmark of the work-stealing reference (``lanecheck bench work-stealing``).

Two fine-grained workloads, each pool measured in the same run, at the same sizes:

- **fork-join**: recursive ``fib(n)`` where every call above the cutoff spawns ``fib(n - 1)``,
  computes ``fib(n - 2)`` itself and joins (one task per spawn), on the work-stealing pool and on
  the global-lock pool (the seed's "stealing off"). ``ThreadPoolExecutor`` has no join that
  helps (a blocking join deadlocks once every thread waits), so it is not run here;
- **tree**: a binary tree of tasks, each forking its two children without joining (completion
  is a shared countdown), on all three: the work-stealing pool, the global-lock pool and
  ``concurrent.futures.ThreadPoolExecutor``.

Measuring: a short run on a shared machine says little (one scheduler hiccup is a third of a
30 ms run), so the sizes make each pool's run last a few hundred milliseconds, every pool runs
once per **round** (the order rotated each round, so no pool always runs first or after the
slow one), after one unrecorded warm-up round, and each figure is given over the rounds as
``{"median", "min", "max"}``. A ratio is taken *within* a round (the two runs next to each other
in time, at nearly the same load) and reported over the rounds; ``goals`` says whether the median
and the worst round meet each goal. Beside the wall rate each run records the process's CPU time
per task (every thread's, so idle workers searching and parking count): it moves much less than
wall time when other processes share the cores. The machine's context (load, cores, pinned:
``model_checks.bench.machine``) is recorded before and after the rounds, with the interpreter's
GIL switch interval.

Figures per pool: tasks, tasks per second, wall and CPU microseconds per task, the per-task
overhead (CPU per task minus the same computation done sequentially in one thread), the
per-worker balance (tasks run by each worker in the median round; ``balance`` = least / most)
and steals. Under the GIL the workers' Python code does not run in parallel, so the ratios
measure scheduling overhead, not speed-up.
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from model_checks.bench.machine import context
from reference.global_queue_pool import GlobalQueuePool
from reference.results import Result
from reference.scheduler import StopMode
from reference.work_stealing import PoolBase, WorkStealingPool

PoolClass = Callable[..., PoolBase]
POOLS: dict[str, PoolClass] = {"stealing": WorkStealingPool, "global-lock": GlobalQueuePool}
EXECUTOR = "ThreadPoolExecutor"

# The full run: fib(24) is 75,025 tasks and a depth-15 tree 65,535, each 0.15-0.5 s on one pool
# on an idle 2-core machine (the executor's tree about 2 s); quick: a look in well under a second.
FULL = {"workers": 4, "fib_n": 24, "tree_depth": 15, "rounds": 5}
QUICK = {"workers": 2, "fib_n": 10, "tree_depth": 6, "rounds": 2}
# A join that helps nests: a joiner runs another task inside its join, which may fork and join
# in turn. On the global-lock pool the task a joiner pops is the newest of *any* worker, so on 4
# workers the nesting is not bounded by fib's depth, and fib(24) once passed CPython's default
# limit of 1,000 frames (a RecursionError inside a task). Every pool runs under this higher limit
# (Python-to-Python calls in 3.11 take no C stack; the limit is restored afterwards).
RECURSION_LIMIT = 100_000
GOALS = {"fork_join_vs_global_lock": 1.0, "tree_vs_global_lock": 1.0, "tree_vs_thread_pool_executor": 10.0}


def fib_sequential(n: int) -> int:
    return n if n < 2 else fib_sequential(n - 1) + fib_sequential(n - 2)


def _fib_tasks(n: int) -> int:
    """Tasks the fork-join fib runs: one root plus one spawn per call with n >= 2."""
    calls = [1, 1]
    for _ in range(2, n + 1):
        calls.append(calls[-1] + calls[-2] + 1)
    return calls[n] // 2 + 1 if n >= 2 else 1


def _tree_tasks(depth: int) -> int:
    return (1 << (depth + 1)) - 1


def _fib(pool: PoolBase, n: int) -> int:
    if n < 2:
        return n
    # fork-join as it is written: spawn one half, compute the other here, then join (the join
    # helps while the spawned half runs elsewhere)
    left = pool.spawn(lambda: _fib(pool, n - 1))
    right = _fib(pool, n - 2)
    joined: int = pool.join(left)
    return joined + right


class _Clock:
    """Wall and process CPU time of one timed region."""

    def __init__(self) -> None:
        gc.collect()  # every run starts with the same (empty) garbage
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def stop(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def run_fib(cls: PoolClass, n: int, workers: int) -> dict[str, Any]:
    pool = cls(workers=workers, capacity=64)
    try:
        clock = _Clock()
        result, root = pool.submit(lambda: _fib(pool, n))
        assert result is Result.SUCCESS and root is not None
        value = pool.join(root)
        seconds, cpu = clock.stop()
    finally:
        pool.stop(StopMode.DRAIN)
    assert value == fib_sequential(n), f"fib({n}) = {value}"
    return _figures(seconds, cpu, sum(pool.stats.runs), pool.stats.runs, sum(pool.stats.steals))


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
    total = _tree_tasks(depth)
    count, runs = _Countdown(total), Counter[int]()
    pool = cls(workers=workers, capacity=64)
    try:
        clock = _Clock()
        result, _ = pool.submit(lambda: _tree_task(pool.spawn, depth, count, runs))
        assert result is Result.SUCCESS
        if not count.done.wait(timeout=300):
            raise RuntimeError(f"tree of depth {depth} did not finish: {count.left} tasks left")
        seconds, cpu = clock.stop()
    finally:
        pool.stop(StopMode.DRAIN)
    return _figures(seconds, cpu, total, pool.stats.runs, sum(pool.stats.steals))


def run_tree_executor(depth: int, workers: int) -> dict[str, Any]:
    total = _tree_tasks(depth)
    count, runs = _Countdown(total), Counter[int]()
    with ThreadPoolExecutor(max_workers=workers) as executor:
        clock = _Clock()
        executor.submit(_tree_task, executor.submit, depth, count, runs)
        if not count.done.wait(timeout=300):
            raise RuntimeError(f"tree of depth {depth} did not finish on the executor")
        seconds, cpu = clock.stop()
    per_worker = sorted(runs.values(), reverse=True) + [0] * max(0, workers - len(runs))
    return _figures(seconds, cpu, total, per_worker, 0)


def _figures(seconds: float, cpu: float, tasks: int, per_worker: list[int], steals: int) -> dict[str, Any]:
    most = max(per_worker) if per_worker else 0
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "tasks": tasks,
        "tasks_per_s": tasks / seconds if seconds > 0 else None,
        "us_per_task": seconds / tasks * 1e6,
        "cpu_us_per_task": cpu / tasks * 1e6,
        "per_worker": list(per_worker),
        "balance": min(per_worker) / most if most else None,
        "steals": steals,
    }


def _sequential_us(fn: Callable[[], object], tasks: int) -> float:
    """CPU microseconds per task of ``fn`` (the workload without a pool), best of three."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best / tasks * 1e6


def _tree_sequential(depth: int) -> None:
    """The tree's tasks run in one thread, each fork a direct call (the same work per task)."""
    count, runs = _Countdown(_tree_tasks(depth)), Counter[int]()

    def fork(fn: Callable[[], None]) -> None:
        fn()

    _tree_task(fork, depth, count, runs)
    assert count.done.is_set()


def _warm_up(workers: int) -> None:
    """Small unrecorded runs of every pool first: thread start-up, imports, allocator pools."""
    for cls in POOLS.values():
        run_fib(cls, 12, workers)
        run_tree_pool(cls, 8, workers)
    run_tree_executor(8, workers)


def _spread(values: list[float], digits: int) -> dict[str, float] | None:
    if not values:
        return None
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


def _summary(runs: list[dict[str, Any]], sequential_us: float) -> dict[str, Any]:
    """One pool's rounds: each figure as median/min/max; the balance and steals of the median round."""
    by_time = sorted(runs, key=lambda r: r["seconds"])
    median_run = by_time[(len(by_time) - 1) // 2]
    cpu_us = [r["cpu_us_per_task"] for r in runs]
    return {
        "tasks": runs[0]["tasks"],
        "rounds": len(runs),
        "seconds": _spread([r["seconds"] for r in runs], 4),
        "tasks_per_s": _spread([r["tasks_per_s"] for r in runs if r["tasks_per_s"]], 0),
        "us_per_task": _spread([r["us_per_task"] for r in runs], 2),
        "cpu_us_per_task": _spread(cpu_us, 2),
        "overhead_us_per_task": round(statistics.median(cpu_us) - sequential_us, 2),
        "per_worker": median_run["per_worker"],
        "balance": _spread([r["balance"] for r in runs if r["balance"] is not None], 3),
        "steals": _spread([float(r["steals"]) for r in runs], 0),
    }


def _ratios(a: list[dict[str, Any]], b: list[dict[str, Any]], key: str, inverse: bool) -> list[float]:
    """Round by round, ``a`` against ``b`` (a rate: a / b; a cost, ``inverse``: b / a)."""
    out: list[float] = []
    for x, y in zip(a, b, strict=True):
        if x[key] and y[key]:
            out.append(y[key] / x[key] if inverse else x[key] / y[key])
    return out


def _comparison(a: list[dict[str, Any]], b: list[dict[str, Any]], goal: float) -> dict[str, Any]:
    rate = _ratios(a, b, "tasks_per_s", inverse=False)
    cpu = _ratios(a, b, "cpu_us_per_task", inverse=True)
    return {
        "goal": goal,
        "tasks_per_s": _spread(rate, 2),
        "cpu_per_task": _spread(cpu, 2),  # the baseline's CPU per task over the stealing pool's
        "met_by_median": bool(rate) and statistics.median(rate) >= goal,
        "met_every_round": bool(rate) and min(rate) >= goal,
    }


def _verdict(c: dict[str, Any]) -> str:
    if c["met_every_round"]:
        return "met"
    return "met by the median, not every round" if c["met_by_median"] else "not met"


def bench(quick: bool = False, rounds: int | None = None) -> dict[str, Any]:
    """The figures of one run (``quick``: small sizes, for tests and a first look)."""
    sizes = QUICK if quick else FULL
    workers, n, depth = sizes["workers"], sizes["fib_n"], sizes["tree_depth"]
    rounds = sizes["rounds"] if rounds is None else rounds
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    before = context()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        return _bench(workers, n, depth, rounds, before)
    finally:
        sys.setrecursionlimit(limit)


def _bench(workers: int, n: int, depth: int, rounds: int, before: dict[str, Any]) -> dict[str, Any]:
    jobs: list[tuple[str, str, Callable[[], dict[str, Any]]]] = []
    for name, cls in POOLS.items():
        jobs.append(("fork_join", name, partial(run_fib, cls, n, workers)))
    for name, cls in POOLS.items():
        jobs.append(("tree", name, partial(run_tree_pool, cls, depth, workers)))
    jobs.append(("tree", EXECUTOR, partial(run_tree_executor, depth, workers)))
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {(w, p): [] for w, p, _ in jobs}
    _warm_up(workers)
    for r in range(rounds):
        shift = r % len(jobs)  # rotated: each job in each position as the rounds go on
        for workload, pool, job in jobs[shift:] + jobs[:shift]:
            runs[(workload, pool)].append(job())
    seq_fib = _sequential_us(lambda: fib_sequential(n), _fib_tasks(n))
    seq_tree = _sequential_us(lambda: _tree_sequential(depth), _tree_tasks(depth))
    fib = {p: _summary(runs[("fork_join", p)], seq_fib) for p in POOLS}
    tree = {p: _summary(runs[("tree", p)], seq_tree) for p in (*POOLS, EXECUTOR)}
    stealing_fib, stealing_tree = runs[("fork_join", "stealing")], runs[("tree", "stealing")]
    compared = {
        "fork_join_vs_global_lock": _comparison(
            stealing_fib, runs[("fork_join", "global-lock")], GOALS["fork_join_vs_global_lock"]
        ),
        "tree_vs_global_lock": _comparison(
            stealing_tree, runs[("tree", "global-lock")], GOALS["tree_vs_global_lock"]
        ),
        "tree_vs_thread_pool_executor": _comparison(
            stealing_tree, runs[("tree", EXECUTOR)], GOALS["tree_vs_thread_pool_executor"]
        ),
    }
    return {
        "machine": before,  # load, cores, pinned: the ratios below depend on all three
        "machine_after": context(),
        "switch_interval_s": sys.getswitchinterval(),
        "recursion_limit": sys.getrecursionlimit(),
        "python": platform.python_version(),
        "workers": workers,
        "fib_n": n,
        "tree_depth": depth,
        "rounds": rounds,
        "cpu_count": os.cpu_count(),
        "fork_join": fib,
        "tree": tree,
        # same-round ratios of the stealing pool against each baseline, over the rounds
        **compared,
        "goals": {key: _verdict(c) for key, c in compared.items()},
        "sequential_fib_us_per_task": round(seq_fib, 3),
        "sequential_tree_us_per_task": round(seq_tree, 3),
    }


if __name__ == "__main__":  # pragma: no cover
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args()
    json.dump(bench(quick=args.quick, rounds=args.rounds), sys.stdout, indent=2)
    sys.stdout.write("\n")
