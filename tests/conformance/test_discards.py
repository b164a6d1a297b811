"""Rule 7's discards: every accepted item is invoked or listed in exactly one ``discard`` before
``stop_end``. A lane's items may take several discards, in any order; both engines agree."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model_checks.conformance.lines import validate_with
from model_checks.conformance.verdict import Verdict
from model_checks.designs.work_lane.trace.discards import not_held, take_out
from model_checks.designs.work_lane.trace.spec_format import FORMAT as SPEC
from model_checks.designs.work_lane.trace.validate import FORMAT as FAST

CONFIG = {"lanes": 2, "workers": 2, "lane_capacity": 4, "max_per_drain": 2, "ready_capacity": 2}
Step = tuple[str, str, dict[str, Any]]


def lines(steps: list[Step]) -> list[str]:
    header = {"trace": "lanecheck", "version": 1, "design": "work-lane", "config": CONFIG}
    out = [json.dumps(header)]
    for seq, (thread, event, fields) in enumerate(steps, 1):
        out.append(json.dumps({"seq": seq, "thread": thread, "event": event, **fields}))
    return out


def post(thread: str, lane: int, item: str, submit: bool) -> Step:
    return (thread, "post", {"lane": lane, "item": item, "result": "ok", "submit": submit})


def discard(lane: int, items: list[str], thread: str = "main") -> Step:
    return (thread, "discard", {"lane": lane, "items": items})


END: Step = ("main", "stop_end", {"mode": "discard", "result": "ok"})
# Lane 0 holds a, b, c and lane 1 holds d when Stop(discard) begins; nothing was drained.
QUEUED: list[Step] = [
    post("p0", 0, "a", True),
    ("p0", "submit", {"lane": 0}),
    post("p0", 0, "b", False),
    post("p0", 0, "c", False),
    post("p1", 1, "d", True),
    ("p1", "submit", {"lane": 1}),
    ("main", "stop_begin", {"mode": "discard"}),
]
FIRST_DISCARD = len(QUEUED) + 1


def both(steps: list[Step]) -> tuple[Verdict, Verdict]:
    return both_of(lines(steps))


def both_of(trace: list[str]) -> tuple[Verdict, Verdict]:
    """The two engines' verdicts on ``trace``, asserted to agree on code, seq and rule."""
    fast = validate_with(FAST, trace, engine="fast")
    spec = validate_with(SPEC, trace, engine="spec")
    assert (fast.code, fast.seq, fast.rule) == (spec.code, spec.seq, spec.rule), (fast.message, spec.message)
    return fast, spec


ALLOWED = {
    "one discard per lane, out of queue order": [discard(0, ["c", "a", "b"]), discard(1, ["d"])],
    "a lane split over two discards, another lane between": [
        discard(0, ["b"]),
        discard(1, ["d"]),
        discard(0, ["c", "a"]),
    ],
    "one discard per item": [discard(0, ["a"]), discard(0, ["b"]), discard(0, ["c"]), discard(1, ["d"])],
    "empty discards drop nothing": [
        discard(1, []),
        discard(0, ["a", "b", "c"]),
        discard(0, []),
        discard(1, ["d"]),
    ],
}


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_the_items_of_a_lane_may_be_listed_over_several_discards_in_any_order(name: str) -> None:
    fast, _ = both([*QUEUED, *ALLOWED[name], END])
    assert fast.code == 0 and not fast.prefix, fast.message


# (the discards, the seq refused, words the message holds)
REFUSED: dict[str, tuple[list[Step], int, str]] = {
    "an item listed twice in one discard": (
        [discard(0, ["a", "a"])],
        FIRST_DISCARD,
        'item "a" is listed twice',
    ),
    "an item listed in two discards": (
        [discard(0, ["b"]), discard(0, ["b"])],
        FIRST_DISCARD + 1,
        'item "b" is not queued there',
    ),
    "an item of another lane": ([discard(0, ["d"])], FIRST_DISCARD, 'item "d" is not queued there'),
    "an item never posted": ([discard(1, ["z"])], FIRST_DISCARD, 'item "z" is not queued there'),
    "an item left unlisted at stop_end": (
        [discard(0, ["c", "a"]), discard(1, ["d"]), END],
        FIRST_DISCARD + 2,
        'lane 0 still holds ["b"]',
    ),
    "a discard by a thread whose Stop is not in progress": (
        [discard(0, ["a"], thread="other")],
        FIRST_DISCARD,
        "",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_each_item_is_listed_once_and_none_is_left(name: str) -> None:
    steps, seq, words = REFUSED[name]
    fast, spec = both([*QUEUED, *steps])
    assert fast.code == 1 and fast.seq == seq and fast.rule == 7, fast.message
    assert words in fast.message and words in spec.message, (fast.message, spec.message)


def test_a_discard_while_a_drain_runs_is_refused_even_when_empty() -> None:
    running: list[Step] = [
        post("p0", 0, "a", True),
        ("p0", "submit", {"lane": 0}),
        ("w0", "take", {"lane": 0}),
        ("w0", "drain_begin", {"lane": 0}),
        ("main", "stop_begin", {"mode": "discard"}),
    ]
    for items in ([], ["a"]):
        fast, _ = both([*running, discard(1, items)])
        assert fast.code == 1 and fast.seq == 6 and fast.rule == 7, fast.message


def test_a_prefix_with_items_still_to_list_names_them() -> None:
    fast, spec = both([*QUEUED, discard(0, ["b"])])
    assert fast.code == 0 and fast.prefix
    assert fast.pending["items"] == spec.pending["items"] == {"0": ["a", "c"], "1": ["d"]}


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_partition_of_the_queues_in_any_order_is_allowed(data: st.DataObject) -> None:
    queued = [(0, "a"), (0, "b"), (0, "c"), (1, "d")]
    order = data.draw(st.permutations(queued))
    cuts = data.draw(st.lists(st.booleans(), min_size=len(order), max_size=len(order)))
    steps: list[Step] = []
    for (lane, item), cut in zip(order, cuts, strict=True):
        last = steps[-1] if steps else None
        if last is not None and not cut and last[1] == "discard" and last[2]["lane"] == lane:
            last[2]["items"].append(item)
        else:
            steps.append(discard(lane, [item]))
    fast, _ = both([*QUEUED, *steps, END])
    assert fast.code == 0, fast.message


def test_take_out_keeps_the_order_of_what_is_held() -> None:
    assert take_out(["a", "b", "a", "c"], ["a", "c"]) == ["b", "a"]
    assert take_out(["a"], ["a", "a"]) is None
    assert take_out([1, "1"], ["1"]) == [1]
    assert take_out([], []) == []
    assert "listed twice" in not_held(0, ["a", "a"], ["a"])
    with pytest.raises(ValueError):
        not_held(0, ["a"], ["a"])


def _one_worker(steps: list[Step]) -> list[str]:
    trace = lines(steps)
    header = json.loads(trace[0])
    header["config"] = {**CONFIG, "workers": 1}
    return [json.dumps(header), *trace[1:]]


def test_a_worker_that_gave_its_drain_up_frees_the_pool_for_another_thread() -> None:
    """A pool of one: w0 takes lane 0, Stop(discard) begins, w0 gives its drain up (unlogged), and
    another thread takes lane 1. The spec engine refused that take, naming a FIFO it did not break:
    the give-up is deferred, and it was declared to move past another worker's take, which the
    pool's size does not let it do (found by a review of the contract, session 34)."""
    took = [
        post("p0", 0, "a", True),
        ("p0", "submit", {"lane": 0}),
        post("p0", 1, "b", True),
        ("p0", "submit", {"lane": 1}),
        ("w0", "take", {"lane": 0}),
    ]
    _, verdict = both_of(
        _one_worker(
            [
                *took,
                ("main", "stop_begin", {"mode": "discard"}),
                ("w1", "take", {"lane": 1}),
                discard(0, ["a"]),
                discard(1, ["b"]),
                END,
            ]
        )
    )
    assert verdict.allowed and not verdict.prefix, verdict.message
    # A drain begun is not given up: a second thread's take is one too many for the pool.
    began = [*took, ("w0", "drain_begin", {"lane": 0}), ("w1", "take", {"lane": 1})]
    _, refused = both_of(_one_worker(began))
    assert not refused.allowed and refused.rule == 3 and "only 1 workers" in refused.message
