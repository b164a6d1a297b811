"""`lanecheck bench jobs` in quick mode: it runs and reports its figures (speed is never asserted)."""

from __future__ import annotations

import pytest

from model_checks.designs.admission.bench import bench


@pytest.mark.timeout(120)
def test_quick_bench_reports_rates_latency_and_no_double_claims() -> None:
    figures = bench(quick=True)
    assert figures["double_claims"] == 0
    assert figures["jobs_done"] == {"bare": 300, "admission": 300}
    assert figures["bare_jobs_per_s"] > 0 and figures["admission_jobs_per_s"] > 0
    assert figures["ratio_vs_bare"] == pytest.approx(
        figures["admission_jobs_per_s"] / figures["bare_jobs_per_s"], rel=0.01
    )
    for phase in ("bare", "admission"):
        latency = figures["claim_latency_ms"][phase]
        assert 0 <= latency["p50"] <= latency["p99"]
    assert len(figures["load_before"]) == 3 and figures["meets_goal"] == (figures["ratio_vs_bare"] >= 0.8)
