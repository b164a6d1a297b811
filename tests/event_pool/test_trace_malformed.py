"""Malformed event-pool traces are refused (exit 2) naming the line; the hand checks agree with the schema."""

from __future__ import annotations

import json
from typing import Any

import pytest

from model_checks.conformance.verdict import MALFORMED
from model_checks.designs.event_pool.trace import validate_lines
from model_checks.designs.event_pool.trace.fields import ok
from model_checks.designs.event_pool.trace.schema import event_problem

HEAD = json.dumps({"trace": "lanecheck", "version": 1, "design": "event-pool", "config": {"threads": 1}})
GOOD = '{"seq": 1, "thread": "t0", "event": "wait"}'


def refused(text: list[str], line: int, *words: str) -> None:
    verdict = validate_lines(text)
    assert verdict.code == MALFORMED and verdict.line == line, verdict.message
    for w in words:
        assert w in verdict.message, verdict.message


@pytest.mark.parametrize(
    ("header", "words"),
    [
        ('{"trace": "lanecheck", "version": 1, "design": "event-pool", "config": {}}', ("threads",)),
        (
            '{"trace": "lanecheck", "version": 1, "design": "event-pool", "config": {"threads": 0}}',
            ("threads",),
        ),
        (
            '{"trace": "lanecheck", "version": 1, "design": "event-pool", "config": {"threads": 2.0}}',
            ("integer",),
        ),
        (
            '{"trace": "lanecheck", "version": 1, "design": "event-pool", "config": {"threads": true}}',
            ("threads",),
        ),
        (
            '{"trace": "lanecheck", "version": 1, "design": "event-pool", "config": {"threads": 70000}}',
            ("threads",),
        ),
        (
            '{"trace": "lanecheck", "version": 1, "design": "work-lane", "config": {"threads": 1}}',
            ("design",),
        ),
        ("[1, 2]", ("header",)),
        ("{not json", ("bad JSON",)),
    ],
)
def test_a_bad_header_is_refused_on_line_1(header: str, words: tuple[str, ...]) -> None:
    refused([header, GOOD], 1, *words)


def test_an_empty_trace_is_refused() -> None:
    refused([], 1, "header is missing")


@pytest.mark.parametrize(
    ("event", "words"),
    [
        ('{"seq": 1, "thread": "t0", "event": "nap"}', ("unknown event 'nap'",)),
        ('{"seq": 1, "thread": "t0", "event": 7}', ("`event` must be a string",)),
        ('{"seq": 1, "thread": "t0"}', ("event",)),
        ('{"seq": 1, "event": "wait"}', ("thread",)),
        ('{"seq": 1.0, "thread": "t0", "event": "wait"}', ("seq",)),
        ('{"seq": 0, "thread": "t0", "event": "wait"}', ("seq",)),
        ('{"seq": 2, "thread": "t0", "event": "wait"}', ("seq 2 where 1 was expected",)),
        ('{"seq": 1, "thread": "t0", "event": "wake", "result": "bell"}', ("result",)),
        ('{"seq": 1, "thread": "t0", "event": "take"}', ("item",)),
        ('{"seq": 1, "thread": "t0", "event": "take", "item": -1}', ("item",)),
        ('{"seq": 1, "thread": "t0", "event": "run", "item": 1.0}', ("item",)),
        ('{"seq": 1, "thread": "t0", "event": "run", "item": true}', ("item",)),
        ('{"seq": 1, "thread": "t0", "event": "done", "item": 0}', ("raised",)),
        ('{"seq": 1, "thread": "m", "event": "post", "item": 0, "to": null, "result": "maybe"}', ("result",)),
        (
            '{"seq": 1, "thread": "m", "event": "post", "item": 0, "to": null, "result": "invalid_state"}',
            ("item",),
        ),
        ('{"seq": 1, "thread": "m", "event": "post", "item": null, "to": null, "result": "ok"}', ("item",)),
        ('{"seq": 1, "thread": "m", "event": "signal", "to": 0}', ("to",)),
        ('{"seq": 1, "thread": "m", "event": "cancel", "items": [0]}', ("work",)),
        ('{"seq": 1, "thread": "m", "event": "cancel", "items": 0, "work": "w"}', ("items",)),
        ('{"seq": 1, "thread": "m", "event": "discard", "items": ["a"]}', ("items",)),
        ('{"seq": 1, "thread": "m", "event": "stop_begin", "mode": "now"}', ("mode",)),
        ('{"seq": 1, "thread": "m", "event": "stop_end", "mode": "drain"}', ("result",)),
        ('{"seq": 1, "thread": "t0", "event": "wait", "a": 1, "a": 2}', ("duplicate key",)),
        ("", ("blank line",)),
        ("[]", ("not a well-formed event", "object")),
    ],
)
def test_a_bad_event_line_is_refused_naming_its_line(event: str, words: tuple[str, ...]) -> None:
    verdict = validate_lines([HEAD, event])
    assert verdict.code == MALFORMED and verdict.line == 2, verdict.message
    assert any(w in verdict.message for w in words), verdict.message


def test_a_malformed_line_after_good_ones_names_that_line_and_counts_the_good_ones() -> None:
    refused([HEAD, GOOD, '{"seq": 3, "thread": "t0", "event": "wake", "result": "event"}'], 3, "a gap")


def test_extra_fields_are_ignored() -> None:
    verdict = validate_lines([HEAD, '{"seq": 1, "thread": "t0", "event": "wait", "ts": 12.5}'])
    assert verdict.code == 0 and verdict.prefix, verdict.message


SAMPLES: list[dict[str, Any]] = [
    {"seq": 1, "thread": "m", "event": "post", "item": 0, "to": "t0", "result": "ok"},
    {"seq": 1, "thread": "m", "event": "post", "item": 0, "to": None, "result": "ok"},
    {"seq": 1, "thread": "m", "event": "post", "item": None, "to": None, "result": "invalid_argument"},
    {"seq": 1, "thread": "m", "event": "post", "item": None, "to": "t0", "result": "invalid_state"},
    {"seq": 1, "thread": "m", "event": "signal", "to": "t0"},
    {"seq": 1, "thread": "t0", "event": "wait"},
    {"seq": 1, "thread": "t0", "event": "wake", "result": "timeout"},
    {"seq": 1, "thread": "t0", "event": "wake", "result": "late"},
    {"seq": 1, "thread": "t0", "event": "take", "item": None},
    {"seq": 1, "thread": "t0", "event": "take", "item": 3},
    {"seq": 1, "thread": "t0", "event": "take", "item": "3"},
    {"seq": 1, "thread": "t0", "event": "run", "item": 3},
    {"seq": 1, "thread": "t0", "event": "run"},
    {"seq": 1, "thread": "t0", "event": "done", "item": 3, "raised": True},
    {"seq": 1, "thread": "t0", "event": "done", "item": 3, "raised": 1},
    {"seq": 1, "thread": "m", "event": "cancel", "items": [], "work": "w"},
    {"seq": 1, "thread": "m", "event": "cancel", "items": [1, -2], "work": "w"},
    {"seq": 1, "thread": "m", "event": "stop_begin", "mode": "discard"},
    {"seq": 1, "thread": "m", "event": "discard", "items": [4, 5]},
    {"seq": 1, "thread": "m", "event": "stop_end", "mode": "discard", "result": "failed"},
    {"seq": 1, "thread": "m", "event": "stop_end", "mode": "discard", "result": "fine"},
    {"seq": 1, "thread": 5, "event": "wait"},
    {"seq": -1, "thread": "t0", "event": "wait"},
]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: json.dumps(s)[:60])
def test_the_hand_checks_agree_with_the_schema(sample: dict[str, Any]) -> None:
    assert ok(sample) == (event_problem(sample) is None)
