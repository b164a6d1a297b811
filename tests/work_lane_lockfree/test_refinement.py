"""The comparison of the lock-free Work Lane with the lock-based one, projected to v1 events,
on the ``refine`` configuration (exhaustive on it; a bound, not a proof beyond it)."""

from __future__ import annotations

import pytest

from model_checks.designs.work_lane_lockfree.behaviours import accepts, canonical
from model_checks.designs.work_lane_lockfree.configs import CONFIGS
from model_checks.designs.work_lane_lockfree.refinement import DIFFERENCES, compare, first_difference, to_v1
from model_checks.designs.work_lane_lockfree.spec_mutants import MUTANTS
from spec import work_lane

pytestmark = pytest.mark.timeout(300)


def test_lock_free_shows_the_lock_based_behaviours_plus_exactly_the_documented_differences() -> None:
    result = compare(CONFIGS["refine"])
    assert result.explained, result.summary()
    assert result.user_visible_equal
    assert (result.lock_based, result.lock_free, result.common) == (434, 966, 294)
    assert dict(result.differences) == {
        "late-reservation": 516,
        "reservation-by-later-push": 40,
        "resubmit-for-later-items": 88,
        "refused-submission": 28,
    }
    assert dict(result.missing) == {"submission-after-discard": 140}
    assert set(result.differences) <= set(DIFFERENCES)
    # the example of the refused submission: the worker owes its resubmission, the pool refuses it,
    # and the reset reports the lane's item discarded
    refused = result.examples["refused-submission"]
    names = [(thread, name) for thread, name, _ in refused]
    assert ("w0", "submit") not in names[names.index(("w0", "drain_end")) :]
    assert names[-2:] == [("s0", "discard"), ("s0", "stop_end")]


@pytest.mark.slow
def test_with_stop_drain_every_lock_based_trace_is_a_lock_free_one() -> None:
    result = compare(CONFIGS["refine-drain"])
    assert result.explained, result.summary()
    assert (result.lock_based, result.lock_free, result.common) == (298, 958, 298)
    assert not result.missing
    assert dict(result.differences) == {
        "late-reservation": 528,
        "reservation-by-later-push": 40,
        "resubmit-for-later-items": 92,
    }


def test_a_reset_that_drops_items_is_a_user_visible_difference() -> None:
    """The bad case: the mutant's behaviours are not the lock-based spec's, and the check says so."""
    result = compare(CONFIGS["refine"], lock_free=MUTANTS["reset-drops-unreported"].spec)
    assert not result.user_visible_equal
    assert not result.explained


def test_an_unexplained_divergence_is_reported_as_such() -> None:
    c = CONFIGS["refine"]
    ok = {"lane": 0, "result": "ok"}
    post = tuple(sorted({**ok, "item": "p0.0", "submit": True}.items()))
    # an item invoked that was never posted: no documented difference
    trace = (("p0", "post", post), ("w0", "invoke", (("item", "p1.0"), ("lane", 0))))
    assert first_difference(c, trace) == ("unexplained", 1)


def test_the_projection_places_post_at_the_push_with_the_cas_outcome() -> None:
    push = ("p0", "push", (("item", "p0.0"), ("lane", 0)))
    cas = ("p0", "cas", (("expect", "Idle"), ("lane", 0), ("new", "Scheduled"), ("ok", True)))
    submit = ("p0", "submit", (("lane", 0),))
    v1 = to_v1((push, cas, submit))
    assert [name for _, name, _ in v1] == ["post", "submit"]
    assert dict(v1[0][2])["submit"] is True


def test_replay_accepts_a_lock_based_trace() -> None:
    c = CONFIGS["refine"]
    post = tuple(sorted({"lane": 0, "result": "ok", "item": "p0.0", "submit": True}.items()))
    assert accepts(work_lane.SPEC, c, canonical((("p0", "post", post),))) == 1  # a prefix, not a behaviour
