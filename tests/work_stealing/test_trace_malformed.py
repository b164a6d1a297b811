"""Malformed work-stealing traces: a clear refusal (exit code 2) naming the line and the field.

Also: the hand-written check of event lines agrees with ``trace-schema.json``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from model_checks.designs.work_stealing.trace.fields import EventFields
from model_checks.designs.work_stealing.trace.schema import event_problem
from tests.work_stealing.test_trace import VALID, header, judge_lines, numbered

GOOD_LINES = [json.dumps(e) for e in numbered(VALID)]


def with_line(n: int, text: str) -> list[str]:
    """The valid trace with event line ``n`` (line n + 1 of the file) replaced."""
    lines = list(GOOD_LINES)
    lines[n - 1] = text
    return [json.dumps(header()), *lines]


def event(n: int, **changes: Any) -> str:
    obj = dict(numbered(VALID)[n - 1])
    for k, v in changes.items():
        if v is DELETE:
            del obj[k]
        else:
            obj[k] = v
    return json.dumps(obj)


DELETE = object()

# name -> (event number replaced, its new text, words the refusal must contain)
BAD_LINES: dict[str, tuple[int, str, str]] = {
    "bad JSON": (3, '{"seq": 3, "thread": "w0", "event": "run"', "bad JSON"),
    "blank line": (3, "", "blank line"),
    "not an object": (3, "[1, 2]", "is not an object"),
    "missing field": (3, event(3, task=DELETE), 'missing field "task"'),
    "wrong type": (3, event(3, worker="0"), "worker"),
    "worker out of range": (3, event(3, worker=2), "worker"),
    "victim out of range": (8, event(8, victim=5), "victim"),
    "victim a wrong word": (8, event(8, victim="global"), "victim"),
    "a boolean for an int": (3, event(3, worker=True), "worker"),
    "a float task id": (3, event(3, task=1.5), "task"),
    "a task id 2.0": (
        3,
        event(3, task=2.0),
        "task: a number with a fraction or an exponent (read as 2.0), not an integer",
    ),
    "unknown event": (3, event(3, event="sprint"), "unknown event 'sprint'"),
    "event not a string": (3, event(3, event=7), "`event` must be a string"),
    "unhashable event": (3, event(3, event=["run"]), "`event` must be a string"),
    "task with an empty take": (19, event(19, task="x"), 'task: "x" is not null'),
    "no task with an ok take": (11, event(11, task=None), "task"),
    "unknown result": (11, event(11, result="success"), "result"),
    "push size zero": (4, event(4, size=0), "size"),
    "discard tasks not a list": (
        3,
        json.dumps({"seq": 3, "thread": "main", "event": "discard", "tasks": "a"}),
        "tasks",
    ),
    "seq gap": (3, event(3, seq=4), "seq 4 where 3 was expected"),
    "seq zero": (3, event(3, seq=0), "seq"),
    "seq a boolean": (1, event(1, seq=True), "seq"),
    "worker a float": (
        3,
        event(3, worker=0.0),
        "worker: a number with a fraction or an exponent (read as 0.0)",
    ),
    "thread missing": (3, event(3, thread=DELETE), 'missing field "thread"'),
    "duplicate key": (
        3,
        '{"seq": 3, "seq": 3, "thread": "w0", "event": "run", "worker": 0, "task": "a"}',
        "duplicate key",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_LINES))
def test_malformed_event_lines_are_refused_naming_the_line(name: str) -> None:
    n, text, words = BAD_LINES[name]
    verdict = judge_lines(with_line(n, text))
    assert verdict.code == 2 and not verdict.allowed, verdict.message
    assert verdict.line == n + 1
    assert verdict.message.startswith(f"line {n + 1}: ")
    assert words in verdict.message, verdict.message
    assert verdict.events == n - 1  # the events before it were judged


def config(**changes: Any) -> dict[str, Any]:
    h = header()
    h["config"].update(changes)
    return h


BAD_HEADERS: dict[str, tuple[Any, str]] = {
    "no pool": ({**header(), "config": {"workers": 2, "capacity": 2}}, 'missing field "pool"'),
    "unknown pool": (config(pool="fifo"), "pool"),
    "capacity not a power of two": (config(capacity=3), "power of two"),
    "capacity a float": (config(capacity=2.0), "integer"),
    "workers a boolean": (config(workers=True), "workers"),
    "workers zero": (config(workers=0), "workers"),
    "workers above the limit": (config(workers=70_000), "workers"),
    "another design": ({**header(), "design": "work-lane"}, "design"),
    "version 2": ({**header(), "version": 2}, "version"),
}


@pytest.mark.parametrize("name", sorted(BAD_HEADERS))
def test_malformed_headers_are_refused_at_line_1(name: str) -> None:
    obj, words = BAD_HEADERS[name]
    verdict = judge_lines([json.dumps(obj), *GOOD_LINES])
    assert (verdict.code, verdict.line) == (2, 1), verdict.message
    assert verdict.message.startswith("line 1: ") and words in verdict.message, verdict.message


def test_the_hand_check_agrees_with_the_schema() -> None:
    # Every valid event, and every single-field corruption of it from a pool of values.
    fields = EventFields(2)
    values: list[Any] = [None, True, 0, 1, 2, -1, 1.0, "x", "ok", "empty", "injector", "drain", [], ["a"], {}]
    checked = 0
    for ev in [*numbered(VALID), {"seq": 1, "thread": "main", "event": "discard", "tasks": ["a", 1]}]:
        variants = [ev]
        for key in ev:
            variants.append({k: v for k, v in ev.items() if k != key})
            variants += [{**ev, key: v} for v in values]
        for obj in variants:
            schema_ok = event_problem(obj, 2) is None
            if schema_ok and any(type(v) is float for v in obj.values()):
                # The one difference: JSON Schema takes 1.0 for an integer; the trace does not.
                assert not fields.ok(obj) and "not an integer" in fields.problem(obj)
                continue
            assert fields.ok(obj) == schema_ok, (obj, event_problem(obj, 2))
            checked += 1
    assert checked > 1_000
