"""Check 3 of issue 5: the reference under real threads; every trace validated (fast engine)."""

from __future__ import annotations

import pytest

from model_checks.designs.work_lane.link.real_threads import stress


@pytest.mark.timeout(60)
def test_stress_100k_items_every_trace_allowed() -> None:
    r = stress(runs=20, items=5_000)
    assert r.items >= 100_000
    assert r.verdict == "allowed", r.rejected
