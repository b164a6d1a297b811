"""The event-pool bench runs (quick mode) and reports its ratios; speed is never asserted."""

from __future__ import annotations

import pytest

from model_checks.designs.event_pool import bench


@pytest.mark.timeout(120)
def test_quick_bench_reports_ratios_against_the_executor_and_latencies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bench, "REPEAT", 1)
    figures = bench.bench(quick=True)
    for key in ("ratio_noop_vs_executor", "ratio_spin_vs_executor"):
        assert isinstance(figures[key], float) and figures[key] > 0  # type: ignore[operator]
    for key in ("pool_p50_us", "pool_p99_us", "executor_p50_us", "executor_p99_us"):
        assert figures[key] >= 0  # type: ignore[operator]
    assert figures["pool_p50_us"] <= figures["pool_p99_us"]  # type: ignore[operator]
    assert "load_before" in figures and figures["threads"] == bench.THREADS
