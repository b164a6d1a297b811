"""Benchmark of the reference event pool (``lanecheck bench event-pool``).

One run measures, on the same machine in the same process:

- throughput of N tasks posted by one producer to the reference ``EventPool`` and to
  ``concurrent.futures.ThreadPoolExecutor`` with the same number of threads, for no-op
  tasks and for tasks that spin 10 µs (from the first post until every task ran:
  ``stop(DRAIN)`` / ``shutdown(wait=True)``); the ratios are pool rate / executor rate;
- post-to-run latency p50/p99 of the pool and of the executor, one producer at a
  moderate fixed rate (so the threads are mostly idle and each post wakes one);
- the machine's load average at the start and the end (the figures are only
  comparable with the ratio measured in the same run).

Each throughput figure is the best of ``REPEAT`` runs, alternating pool and executor.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from model_checks.bench.workload import paced, percentiles
from reference.event_pool import EventPool

THREADS = 4
REPEAT = 3
SPIN_S = 10e-6


def _noop() -> None:
    return None


def _spin() -> None:
    end = time.perf_counter() + SPIN_S
    while time.perf_counter() < end:
        pass


def _run_pool(total: int, task: Callable[[], None]) -> float:
    pool = EventPool(THREADS)
    post = pool.post
    began = time.perf_counter()
    for _ in range(total):
        post(task)
    pool.stop()
    return time.perf_counter() - began


def _run_executor(total: int, task: Callable[[], None]) -> float:
    executor = ThreadPoolExecutor(max_workers=THREADS)
    submit = executor.submit
    began = time.perf_counter()
    for _ in range(total):
        submit(task)
    executor.shutdown(wait=True)
    return time.perf_counter() - began


def _best_rates(total: int, task: Callable[[], None]) -> tuple[float, float]:
    pool_s = executor_s = float("inf")
    for _ in range(REPEAT):
        pool_s = min(pool_s, _run_pool(total, task))
        executor_s = min(executor_s, _run_executor(total, task))
    return total / pool_s, total / executor_s


def _latency(rate: int, seconds: float) -> dict[str, float]:
    """Post-to-run p50/p99 in µs for the pool and the executor, one producer at ``rate`` tasks/s."""
    clock = time.perf_counter_ns
    count = int(rate * seconds)
    pool_samples: list[int] = []
    pool = EventPool(THREADS)
    paced(count, rate, lambda t: pool.post(lambda: pool_samples.append(clock() - t)))
    pool.stop()
    executor_samples: list[int] = []
    with ThreadPoolExecutor(max_workers=THREADS) as executor:
        paced(count, rate, lambda t: executor.submit(lambda: executor_samples.append(clock() - t)))
    pool_p50, pool_p99 = percentiles(pool_samples)
    executor_p50, executor_p99 = percentiles(executor_samples)
    return {
        "pool_p50_us": round(pool_p50, 1),
        "pool_p99_us": round(pool_p99, 1),
        "executor_p50_us": round(executor_p50, 1),
        "executor_p99_us": round(executor_p99, 1),
    }


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def bench(quick: bool = False) -> dict[str, object]:
    """Run every measurement once and return the figures (printed as JSON by ``main``)."""
    load_before = _load()
    noop_total = 20_000 if quick else 200_000
    spin_total = 2_000 if quick else 20_000
    _run_pool(min(noop_total, 5_000), _noop)  # warm up
    pool_noop, executor_noop = _best_rates(noop_total, _noop)
    pool_spin, executor_spin = _best_rates(spin_total, _spin)
    rate = 1_000 if quick else 5_000
    latency = _latency(rate=rate, seconds=0.2 if quick else 1.0)
    return {
        "threads": THREADS,
        "noop_tasks": noop_total,
        "pool_noop_per_s": round(pool_noop),
        "executor_noop_per_s": round(executor_noop),
        "ratio_noop_vs_executor": round(pool_noop / executor_noop, 2),
        "target_noop_vs_executor": 1.5,
        "spin_tasks": spin_total,
        "spin_us": SPIN_S * 1e6,
        "pool_spin_per_s": round(pool_spin),
        "executor_spin_per_s": round(executor_spin),
        "ratio_spin_vs_executor": round(pool_spin / executor_spin, 2),
        "latency_rate_per_s": rate,
        **latency,
        "load_before": load_before,
        "load_after": _load(),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    print(json.dumps(bench(quick="--quick" in args), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
