"""Rule 4, "nothing duplicated": an item id accepted again while it is still in flight is refused.

The corpus holds the refusals (``invalid_r4_item_accepted_twice``, ``..._posted_to_another_lane``);
here the words, what stays allowed (docs/trace-format.md, "Item uniqueness") and the memory bound.
"""

from __future__ import annotations

import pytest

from model_checks.conformance import ENGINES, validate_lines
from model_checks.conformance.item_ids import ItemIds
from model_checks.designs.work_lane.bench_traces import CONFIG, synthetic_events
from tests.conformance.corpus_steps import (
    begin,
    end,
    inv,
    lines_of,
    one_item,
    post,
    retried_and_resubmitted,
    stopped,
    submitted,
)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_refusal_names_the_item_and_its_first_acceptance(engine: str) -> None:
    steps = [post("main", None, "a", "invalid_argument"), *submitted("p0", 1, "a"), post("p1", 1, "a")]
    v = validate_lines(lines_of(steps), engine=engine)
    assert (v.code, v.seq, v.rule) == (1, 4, 4)
    assert v.message == (
        'seq 4: post of item "a" to lane 1 is ok, but item "a" was already accepted (seq 2, lane 1) and '
        "has not been invoked or discarded yet: an item id is unique per trace, so one id cannot be in "
        "flight twice"
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_a_refused_post_may_be_retried_with_its_id(engine: str) -> None:
    steps = [
        *retried_and_resubmitted(),
        ("w0", "submit", {"lane": 0}),
        *begin("w1", 0),
        inv("w1", 0, "c"),
        end("w1", 0, "idle", 1),
        *stopped("drain"),
    ]
    v = validate_lines(lines_of(steps), engine=engine)
    assert v.code == 0 and not v.prefix, v.message


@pytest.mark.parametrize("engine", ENGINES)
def test_ids_of_different_json_types_differ(engine: str) -> None:
    steps = [*submitted("p0", 0, 1), post("p0", 0, "1"), *begin("w0", 0), inv("w0", 0, 1), inv("w0", 0, "1")]
    v = validate_lines(lines_of([*steps, end("w0", 0, "idle", 2), *stopped("drain")]), engine=engine)
    assert v.code == 0, v.message


@pytest.mark.parametrize("engine", ENGINES)
def test_an_id_reused_after_it_ran_is_still_accepted(engine: str) -> None:
    """The departure that stays (docs/trace-format.md): refusing it would hold every id ever accepted."""
    v = validate_lines(lines_of([*one_item(), *one_item(), *stopped("drain")]), engine=engine)
    assert v.code == 0, v.message


def test_only_the_ids_in_flight_are_held() -> None:
    """Memory stays the live state: at most every lane full plus one popped item per worker."""
    ids = ItemIds()
    most = 0
    for ev in synthetic_events(20_000, seed=3):
        if ev["event"] in ("post", "invoke", "discard"):
            ids.see(ev)
            most = max(most, len(ids.live))
    assert 0 < most <= CONFIG["lanes"] * CONFIG["lane_capacity"] + CONFIG["workers"]
