"""The lane's ``probing`` flag keeps the trace a valid linearisation against lock-free pops.

The queue has no lock, so without the flag a drainer's pop and its logged ``invoke`` can fall
between a producer's decision under the lane mutex and its ``post`` event. With a tracer whose
``emit`` is a scheduling point (``sequenced``), the harness explores exactly those interleavings.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from model_checks.designs.work_lane.link.impl_to_spec import check_link_scenario
from model_checks.designs.work_lane.link.scenario import LINK_SCENARIOS
from model_checks.harness import Options
from reference.scheduler import WorkerScheduler
from reference.work_lane import WorkLane

OPTIONS = Options(strategy="dpor", max_steps=5_000, max_executions=2_000)


class IgnoresProbeLane(WorkLane[Any]):
    """A drainer that logs its invoke without waiting for a producer that is mid-post."""

    def _wait_for_producer(self) -> None:
        return None


@pytest.mark.timeout(120)
def test_without_the_probe_a_trace_is_rejected() -> None:
    build = partial(WorkerScheduler, lane_factory=IgnoresProbeLane)
    r = check_link_scenario(LINK_SCENARIOS["2x1-cap1-full"], OPTIONS, build=build, sequenced=True)
    assert r.verdict == "rejected", r.failure
    # rule 6: capacity_exceeded logged after a pop made room; rule 4: an invoke before its post
    assert "validator: rule 6" in r.failure or "validator: rule 4" in r.failure, r.failure


@pytest.mark.timeout(120)
def test_with_the_probe_every_sequenced_trace_is_allowed() -> None:
    r = check_link_scenario(LINK_SCENARIOS["2x1-cap1-full"], OPTIONS, sequenced=True)
    assert r.verdict == "allowed", r.failure
    assert r.harness == "exhaustive"
    assert r.traces_validated >= 1
