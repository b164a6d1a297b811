"""Check 5 of issue 5: one counterexample, three places (all three mutant pairs, guided chooser)."""

from __future__ import annotations

import pytest

from model_checks.designs.work_lane.link.guided import Segment, plans, segments_of
from model_checks.designs.work_lane.link.three_places import three_places
from model_checks.designs.work_lane.spec_mutants import MUTANTS
from model_checks.explorer.check import check as check_spec
from model_checks.explorer.search import Options as SpecOptions
from model_checks.registry import design

# reference mutant -> (spec mutant, spec cx length, property, validator (seq, rule))
PAIRS = {
    "double-submit": ("double-reserve", 5, "OneReservationPerLane", (3, 2)),
    "stop-skips-inflight": ("stop-skips-inflight", 5, "StoppedMeansQuiet", (3, 7)),
    "check-outside-lock": ("split-idle", 12, "NoLostWakeup", (7, 5)),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mutant", sorted(PAIRS))
def test_three_places_same_step(mutant: str) -> None:
    spec_mutant, length, prop, seq_rule = PAIRS[mutant]
    r = three_places(mutant)
    assert r.spec_mutant == spec_mutant
    assert (r.spec_length, r.spec_property) == (length, prop)
    assert r.strategy == "guided" and r.schedule.startswith("lc1."), r.figures()
    assert (r.spec_seq, r.spec_rule) == seq_rule
    assert r.verdict == "same-step", r.figures()
    assert (r.impl_seq, r.impl_rule) == seq_rule
    assert r.executions <= 50, r.figures()
    # ``three_places`` replays the schedule with ``harness.replay`` (ReplayDivergence otherwise)
    # and validates the trace of that replayed execution: impl_seq/impl_rule come from it.


@pytest.mark.timeout(60)
def test_double_submit_same_step_dpor() -> None:
    r = three_places("double-submit", strategy="dpor")
    assert r.schedule.startswith("lc1.")
    assert (r.impl_seq, r.impl_rule) == (3, 2)


def test_segments_of_split_idle() -> None:
    sm = MUTANTS["split-idle"]
    constants = sm.constants(design("work-lane").config(sm.config))
    cx = check_spec(sm.spec, constants, SpecOptions(liveness=False)).counterexample
    assert cx is not None
    assert segments_of(cx) == [
        Segment("p0", 2, 1),
        Segment("w0", 3, 2),
        Segment("p0", 1, 0),
        Segment("w0", 1, 0),
    ]
    # the silent tails of the first two segments (p0's Admit, w0's PopEmpty + DrainSawEmpty) are
    # enumerated, smallest total first; the last segment's tail would change nothing
    first = [[s.extra for s in plan] for plan in plans(segments_of(cx), 2)]
    assert first[:3] == [[0, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0]]
    assert len(first) == 9
