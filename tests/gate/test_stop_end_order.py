"""Stop's stop_end is logged after the permit_release that made the pool quiescent.

The worker returns a permit and logs it in one step under the trace lock; Stop reads the permit
count without it. Logging stop_end outside the trace lock let it fall between a release and its
event (seen by the validator on real threads about one run in five, and found by the harness once
the race detector made the lock-free `_stopping` flag a scheduling point). Run with the detector on,
the one-producer scenario is explored exhaustively and every trace validated.
"""

from __future__ import annotations

import pytest

from model_checks.harness import Options, check
from model_checks.registry import design


@pytest.mark.timeout(120)
def test_every_trace_of_the_one_producer_scenario_validates_with_races_on() -> None:
    scenario = design("schedule-gate").harness()["one-producer"]
    result = check(scenario.build(), Options(races=True))
    assert result.failure is None, result.report()
    assert result.verdict == "exhaustive" and result.races
