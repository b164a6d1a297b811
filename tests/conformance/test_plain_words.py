"""A line that is not a well-formed event is refused in plain words naming the line and the field.

Session 37's review found jsonschema's own words (``lane: True is not valid under any of the given
schemas``), ``1e0`` shown only as ``1.0`` ("is not an integer (write it without a fraction)"), a
bare "not a well-formed event" for ``1e0`` in the streamed designs, and a version-1 event in a
version-2 trace refused as "unknown" or for a field.
"""

from __future__ import annotations

import json

import pytest

from model_checks.conformance import validate_lines

CONFIG = {"lanes": 2, "workers": 2, "lane_capacity": 2, "max_per_drain": 2, "ready_capacity": 2}
V1 = json.dumps({"trace": "lanecheck", "version": 1, "design": "work-lane", "config": CONFIG})
V2 = json.dumps({"trace": "lanecheck", "version": 2, "design": "work-lane-lockfree", "config": CONFIG})
GATE_CONFIG = {"actors": 2, "workers": 1, "permits": 1, "mailbox_capacity": 1, "max_per_drain": 2}
GATE = json.dumps({"trace": "lanecheck", "version": 1, "design": "schedule-gate", "config": GATE_CONFIG})
FRACTION = "a number with a fraction or an exponent (read as 1.0), not an integer"
V1_POST = "this post is a version-1 (work-lane) event, not one of trace format version 2 (work-lane-lockfree)"


def _ev(event: str, fields: str, thread: str = "p0", seq: str = "1") -> str:
    """An event line with ``fields`` as written (``1e0`` stays ``1e0``)."""
    return f'{{"seq": {seq}, "thread": "{thread}", "event": "{event}", {fields}}}'


def _post(fields: str) -> str:
    return _ev("post", f'"lane": 0, "item": "a", {fields}')


LANE_TRUE = "lane: true (a boolean) is not an integer"
CASES = [
    (V1, _post('"result": "ok", "submit": 1'), "submit: 1 is not a boolean (true or false)"),
    (V1, _ev("submit", '"lane": true'), LANE_TRUE),
    (V1, _post('"result": "ok", "submit": true').replace('"lane": 0', '"lane": true'), LANE_TRUE),
    (V1, _ev("submit", '"lane": 1e0'), f"lane: {FRACTION}"),
    (V1, _ev("submit", '"lane": 1', seq="1e0"), f"seq: {FRACTION}"),
    (V1, _ev("discard", '"lane": 1, "items": ["a", 1e0]'), f"items: {FRACTION}"),
    (V1, _ev("push", '"lane": 0, "item": "a", "result": "ok"'), "push is an event of trace format version 2"),
    (V2, _ev("push", '"lane": 1e0, "item": "a", "result": "ok"'), f"lane: {FRACTION}"),
    (V2, _post('"ok": true, "submit": true'), V1_POST),
    (V2, _post('"result": "ok", "submit": true'), V1_POST),
    (V2, _post('"result": "capacity_exceeded", "submit": false'), V1_POST),
    (V2, _ev("drain_end", '"lane": 0, "outcome": "idle", "invoked": 1', "w0"), "drain_end is a version-1"),
    (V2, _ev("recheck", '"lane": 0, "empty": 0', "w0"), "empty: 0 is not a boolean (true or false)"),
    (GATE, _ev("permit_acquire", '"actor": 1e0, "item": "a", "granted": true'), f"actor: {FRACTION}"),
    (GATE, _ev("permit_acquire", '"actor": 0, "item": "a", "granted": 1'), "granted: 1 is not a boolean"),
]


@pytest.mark.parametrize("header,line,words", CASES)
def test_the_words_name_the_line_the_field_and_what_was_expected(header: str, line: str, words: str) -> None:
    v = validate_lines([header, line])
    assert (v.code, v.line) == (2, 2), v.message
    assert v.message.startswith(f"line 2: {words}"), v.message
    assert "True" not in v.message and "given schemas" not in v.message


@pytest.mark.parametrize("engine", ["fast", "spec"])
def test_a_second_drain_begin_by_the_drainer_says_it_is_draining(engine: str) -> None:
    """The trace review of session 42: both engines said the worker had not taken the lane."""
    events = [
        {"thread": "p0", "event": "post", "lane": 0, "item": "a", "result": "ok", "submit": True},
        {"thread": "p0", "event": "submit", "lane": 0},
        {"thread": "w0", "event": "take", "lane": 0},
        {"thread": "w0", "event": "drain_begin", "lane": 0},
        {"thread": "w0", "event": "drain_begin", "lane": 0},
    ]
    lines = [V1, *(json.dumps({"seq": i, **e}) for i, e in enumerate(events, start=1))]
    verdict = validate_lines(lines, engine=engine)
    assert (verdict.code, verdict.seq, verdict.rule) == (1, 5, 3), verdict.message
    assert "which is already draining it (one per take)" in verdict.message, verdict.message
