"""model_checks.spec_mutation.split: a mutant that cuts one atomic step in two, and the shared
process operators of spec/processes.py and spec.language.at_least_one."""

from __future__ import annotations

import pytest

from model_checks.spec_mutation import split
from spec.language import SpecError, at_least_one
from spec.work_lane import SPEC
from spec.work_lane_state import Constants


def _first(c: object, s: object, w: str) -> object:
    return None


def _then(c: object, s: object, w: str) -> object:
    return None


def test_split_replaces_the_step_and_adds_its_second_half_for_the_same_processes() -> None:
    cut = split(SPEC, "cut", "DrainEndIdle", _first, _then)
    original = next(a for a in SPEC.actions if a.name == "DrainEndIdle")
    names = [a.name for a in cut.actions]
    assert "DrainEndIdle" not in names and names[-1] == "_then"
    first = next(a for a in cut.actions if a.name == "_first")
    then = cut.actions[-1]
    assert first.event is None and first.domains == original.domains
    assert then.event == original.event == "drain_end" and then.domains == original.domains
    assert cut.variant == "cut"


def test_split_events_and_dropped_steps_can_be_given() -> None:
    cut = split(
        SPEC, "cut", "PostAccepted", _first, _then, first_event="a", then_event="b", drop=["PostFull"]
    )
    assert [a.event for a in cut.actions if a.name in ("_first", "_then")] == ["a", "b"]
    assert "PostFull" not in [a.name for a in cut.actions]


def test_split_of_a_step_the_spec_does_not_have_is_refused_naming_it() -> None:
    with pytest.raises(SpecError, match="has no action NoSuchStep"):
        split(SPEC, "cut", "NoSuchStep", _first, _then)


def test_at_least_one_names_the_first_constant_below_one() -> None:
    c = Constants(lanes=1, workers=0, lane_capacity=0, max_per_drain=1, ready_capacity=1)
    assert at_least_one(c, "lanes", "workers", "lane_capacity") == "workers must be at least 1"
    assert at_least_one(c, "lanes", "max_per_drain") is None


def test_scripted_constants_name_processes_and_posts_and_header() -> None:
    c = Constants(
        lanes=2, workers=2, lane_capacity=1, max_per_drain=1, ready_capacity=2, script=((0, 1), (None,))
    )
    assert c.producer_names() == ("p0", "p1") and c.worker_names() == ("w0", "w1")
    assert c.post_of("p0", 1) == (1, "p0.1") and c.post_of("p1", 0) == (None, "p1.0")
    assert c.post_of("p0", 2) is None
    assert list(c.header()) == ["lanes", "workers", "lane_capacity", "max_per_drain", "ready_capacity"]
