"""``harness.drain_watch`` and ``harness.lane_programs``: the "one drainer per lane" rule and the
conservation at Stop that the Work Lane's and the lock-free Work Lane's scenarios both check."""

from __future__ import annotations

import re

import pytest

from model_checks.harness.drain_watch import DrainWatch, drain_violation
from model_checks.harness.lane_programs import DrainOverlap, assert_conserved


def test_drains_taking_turns_and_invokes_inside_them_pass() -> None:
    draining: dict[int, str] = {}
    steps = [("drain_begin", "w0"), ("invoke", "w0"), ("drain_end", "w0"), ("drain_begin", "w1")]
    assert [drain_violation(draining, 0, kind, who) for kind, who in steps] == [None] * 4
    assert draining == {0: "w1"}
    assert drain_violation(draining, 1, "drain_begin", "w0") is None  # another lane: no overlap


@pytest.mark.parametrize(
    ("steps", "words"),
    [
        ([("drain_begin", "w0"), ("drain_begin", "w1")], "w1 began a drain while w0 drains it"),
        ([("drain_begin", "w0"), ("drain_end", "w1")], "w1 ended a drain it did not begin"),
        ([("drain_end", "w0")], "w0 ended a drain it did not begin"),
        ([("drain_begin", "w0"), ("invoke", "w1")], "w1 invoked outside its own drain"),
        ([("invoke", "w0")], "w0 invoked outside its own drain"),
    ],
)
def test_two_drainers_or_an_invoke_outside_a_drain_is_named(steps: list[tuple[str, str]], words: str) -> None:
    draining: dict[int, str] = {}
    found = [drain_violation(draining, 3, kind, who) for kind, who in steps]
    assert found[:-1] == [None] * (len(steps) - 1)
    assert found[-1] == f"lane 3: {words}"


def test_the_watch_reads_each_record_once_and_skips_other_events() -> None:
    records: list[tuple[str, str, dict[str, int]]] = [("w0", "drain_begin", {"lane": 1}), ("p0", "post", {})]
    watch = DrainWatch(records)
    assert watch.check()
    records += [("w0", "invoke", {"lane": 1}), ("w0", "drain_end", {"lane": 1})]
    assert watch.check() and watch.check()  # a second call reads nothing new
    records.append(("w1", "invoke", {"lane": 1}))
    with pytest.raises(DrainOverlap, match="lane 1: w1 invoked outside its own drain"):
        watch.check()
    assert len(records) == 5  # kept: no ``keep``
    with pytest.raises(DrainOverlap):  # once broken, it stays broken
        watch.check()


def test_the_watch_with_keep_hands_each_batch_on_and_empties_the_list() -> None:
    kept: list[tuple[object, ...]] = []
    records: list[tuple[str, str, dict[str, int]]] = [("w0", "drain_begin", {"lane": 0})]
    watch = DrainWatch(records, kept.append)
    assert watch.check() and records == []
    records += [("w1", "drain_begin", {"lane": 0}), ("w1", "post", {})]
    with pytest.raises(DrainOverlap, match="lane 0: w1 began a drain while w0 drains it"):
        watch.check()
    second: tuple[object, ...] = (("w1", "drain_begin", {"lane": 0}), ("w1", "post", {}))
    assert kept == [(("w0", "drain_begin", {"lane": 0}),), second]
    assert records == []


def test_conservation_holds() -> None:
    assert_conserved(True, [1, 2], [1, 2], [])
    assert_conserved(False, [1, 2, 3], [2], [1, 3])


@pytest.mark.parametrize(
    ("drain", "invoked", "discarded", "words"),
    [
        (True, [1], [], "conservation: accepted [1, 2], invoked [1]"),  # an item lost
        (True, [1, 2], [2], "Stop(drain) discarded [2]"),
        (False, [1, 2], [2], "invoked [1, 2] + discarded [2]"),  # one item twice
        (False, [1], [], "invoked [1] + discarded []"),
    ],
)
def test_an_item_lost_or_twice_fails(
    drain: bool, invoked: list[int], discarded: list[int], words: str
) -> None:
    with pytest.raises(AssertionError, match=re.escape(words)):
        assert_conserved(drain, [1, 2], invoked, discarded)
