"""pytest-benchmark twin of ``model_checks.designs.work_lane.bench``: small sizes, no timing assertions."""

from __future__ import annotations

from typing import Any

import pytest

from model_checks.designs.work_lane import bench as bench_scheduler
from reference import NullTracer, StopMode


@pytest.mark.timeout(60)
def test_bench_scheduler_throughput(benchmark: Any) -> None:
    seconds = benchmark.pedantic(bench_scheduler._run_scheduler, args=(20_000,), rounds=1, iterations=1)
    assert seconds > 0


@pytest.mark.timeout(60)
def test_bench_scheduler_with_noop_tracer(benchmark: Any) -> None:
    seconds = benchmark.pedantic(
        bench_scheduler._run_scheduler,
        args=(20_000,),
        kwargs={"tracer": NullTracer()},
        rounds=1,
        iterations=1,
    )
    assert seconds > 0


@pytest.mark.timeout(60)
def test_bench_executor_baseline(benchmark: Any) -> None:
    seconds = benchmark.pedantic(bench_scheduler._run_executor, args=(4_000,), rounds=1, iterations=1)
    assert seconds > 0


@pytest.mark.timeout(120)
def test_bench_quick_reports_every_figure() -> None:
    figures = bench_scheduler.bench(quick=True)
    for key in (
        "scheduler_items_per_s",
        "executor_items_per_s",
        "direct_items_per_s",
        "ratio_vs_executor",
        "ratio_vs_direct",
        "latency_p50_us",
        "latency_p99_us",
        "peak_memory_bytes",
        "noop_tracer_overhead",
        "tracing_off_overhead",
        "ceiling_vs_direct",
        "ceiling_vs_executor",
    ):
        assert key in figures
    # the ceiling: what the design's own per-item CPU allows against this run's executor
    per = figures["per_item_ns"]
    assert isinstance(per, dict)
    ceiling = 1e9 / (per["post_alone_cpu"] + per["drain_alone_cpu"]) / figures["executor_items_per_s"]
    assert figures["ceiling_vs_executor"] == pytest.approx(ceiling, rel=0.02)
    per_item = figures["per_item_ns"]
    assert isinstance(per_item, dict)
    assert {"post_alone_cpu", "drain_alone_cpu", "direct_cpu_ns", "lock_round_trip_ns"} <= set(per_item)


@pytest.mark.timeout(60)
def test_the_runs_use_the_scheduler_the_figures_report() -> None:
    """Throughput and latency share one scheduler; its sizes are the ``config`` the figures name,
    with one ready slot a lane."""
    scheduler, handles = bench_scheduler._scheduler(bench_scheduler._noop)
    try:
        reported = {
            "lanes": bench_scheduler.LANES,
            "workers": bench_scheduler.WORKERS,
            "max_per_drain": bench_scheduler.BUDGET,
            "lane_capacity": bench_scheduler.LANE_CAPACITY,
        }
        assert {k: getattr(scheduler.config, k) for k in reported} == reported
        assert scheduler.config.ready_capacity == bench_scheduler.LANES
        assert len(handles) == bench_scheduler.LANES
    finally:
        scheduler.stop(StopMode.DRAIN)
