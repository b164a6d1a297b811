"""Check 5 of issue 5: one counterexample, three places."""

from __future__ import annotations

import pytest

from model_checks.conformance.link.three_places import three_places


@pytest.mark.timeout(60)
def test_double_submit_same_step() -> None:
    r = three_places("double-submit")
    assert r.spec_property == "OneReservationPerLane"
    assert r.schedule.startswith("lc1.")
    assert r.verdict == "same-step", r.figures()
    assert (r.impl_seq, r.impl_rule) == (3, 2)
