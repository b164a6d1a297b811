"""`lanecheck bench jobs` in quick mode: it runs and reports its figures (speed is never asserted)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from model_checks.designs.admission.bench import bench
from model_checks.designs.admission.bench_scale import chart, scale, table


@pytest.mark.timeout(120)
def test_quick_bench_reports_rates_latency_and_no_double_claims() -> None:
    figures = bench(quick=True, floor=True)
    assert figures["floor_double_claims"] == 0 and figures["floor_jobs_per_s"] > 0
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


@pytest.mark.timeout(120)
def test_the_postgresql_bench_compares_against_a_bare_skip_locked_loop_and_the_floor(pg_url: str) -> None:
    figures = bench(quick=True, floor=True, store=pg_url)
    assert figures["store"] == "postgresql" and figures["double_claims"] == 0
    assert figures["jobs_done"] == {"bare": 300, "admission": 300}
    # the floor: the store's functions from a plain connection, every job claimed once
    assert figures["floor_double_claims"] == 0 and figures["floor_jobs_per_s"] > 0


@pytest.mark.timeout(120)
def test_jobs_per_second_against_workers_on_both_stores_in_a_table_and_a_chart(
    pg_url: str, tmp_path: Path
) -> None:
    figures = scale([None, pg_url], workers=(1, 2), jobs=40)
    rows = figures["rows"]
    assert [(r["store"], r["workers"]) for r in rows] == [
        ("sqlite", 1), ("sqlite", 2), ("postgresql", 1), ("postgresql", 2)
    ]  # fmt: skip
    assert all(r["jobs"] == 40 and r["double_claims"] == 0 and r["jobs_per_s"] > 0 for r in rows)
    assert all(isinstance(r["load_1min"], float) for r in rows)  # every figure carries the load
    assert table(figures).count("\n") == 1 + len(rows)
    png = chart(figures, tmp_path / "scale.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_callgrind_loops_each_drain_their_jobs_once(tmp_path: Path) -> None:
    from model_checks.designs.admission import bench_callgrind as cg

    path = tmp_path / "jobs.db"
    cg.prep(path, jobs=8)
    cg.bare(path, 3)
    cg.minimal(path, 2)
    cg.store(path, 3)
    with sqlite3.connect(path) as db:
        states = dict(db.execute("SELECT queue || ':' || state, COUNT(*) FROM jobs GROUP BY 1").fetchall())
        samples = db.execute(
            "SELECT json_array_length(samples) FROM profiles WHERE handler = 'noop'"
        ).fetchone()
    # prep's one run, then 2 + 3: every admission job finished once, each with its sample
    assert states == {"bare:done": 3, "bare:pending": 5, "adm:done": 6, "adm:pending": 2}
    assert samples == (6,)
    with pytest.raises(RuntimeError, match="ran out of jobs"):
        cg.store(path, 3)  # two left
    with pytest.raises(RuntimeError, match="no instruction count"):
        cg._collected("==1== valgrind: failed to start")
    assert cg._collected("==7== Events    : Ir\n==7== Collected : 123456\n") == 123456
