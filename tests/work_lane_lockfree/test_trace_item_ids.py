"""Version 2 too: an item id pushed ok again while it is still in flight is refused (rule 4)."""

from __future__ import annotations

import json

from model_checks.conformance import validate_lines

CONFIG = {"lanes": 2, "workers": 2, "lane_capacity": 2, "max_per_drain": 2, "ready_capacity": 2}
HEADER = json.dumps({"trace": "lanecheck", "version": 2, "design": "work-lane-lockfree", "config": CONFIG})


def _push(seq: int, thread: str, lane: int, item: str) -> str:
    return json.dumps(
        {"seq": seq, "thread": thread, "event": "push", "lane": lane, "item": item, "result": "ok"}
    )


def test_a_push_of_an_id_in_flight_is_refused_naming_the_first() -> None:
    v = validate_lines([HEADER, _push(1, "p0", 0, "a"), _push(2, "p1", 1, "a")])
    assert (v.code, v.seq, v.rule) == (1, 2, 4), v.message
    assert v.message.startswith(
        'seq 2: push of item "a" to lane 1 is ok, but item "a" was already accepted (seq 1'
    )


def test_distinct_ids_in_flight_are_allowed() -> None:
    v = validate_lines([HEADER, _push(1, "p0", 0, "a"), _push(2, "p1", 1, "b")])
    assert v.code == 0 and v.prefix, v.message
