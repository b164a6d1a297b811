"""The v1 work-lane validator rejects a Stop that drops accepted items at its stop_end, in both
engines, even when nothing after it looks wrong (issue 21)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from model_checks.conformance.validator import validate_lines

CONFIG = {"lanes": 1, "workers": 1, "lane_capacity": 2, "max_per_drain": 1, "ready_capacity": 1}
HEADER = json.dumps({"trace": "lanecheck", "version": 1, "design": "work-lane", "config": CONFIG})
POSTED: list[dict[str, Any]] = [
    {"thread": "p", "event": "post", "lane": 0, "item": "a", "result": "ok", "submit": True},
    {"thread": "p", "event": "submit", "lane": 0},
]


def trace(events: list[dict[str, Any]]) -> list[str]:
    return [HEADER, *(json.dumps({"seq": i + 1, **e}) for i, e in enumerate(events))]


@pytest.mark.parametrize("engine", ["fast", "spec"])
@pytest.mark.parametrize("mode", ["drain", "discard"])
def test_stop_end_owes_every_accepted_item(engine: str, mode: str) -> None:
    stop = [
        {"thread": "s", "event": "stop_begin", "mode": mode},
        {"thread": "s", "event": "stop_end", "mode": mode, "result": "ok"},
    ]
    v = validate_lines(trace(POSTED + stop), engine)
    assert not v.allowed and v.seq == 4 and v.rule == 7, v.message


@pytest.mark.parametrize("engine", ["fast", "spec"])
def test_a_discard_that_answers_for_the_item_is_allowed(engine: str) -> None:
    stop: list[dict[str, Any]] = [
        {"thread": "s", "event": "stop_begin", "mode": "discard"},
        {"thread": "s", "event": "discard", "lane": 0, "items": ["a"]},
        {"thread": "s", "event": "stop_end", "mode": "discard", "result": "ok"},
    ]
    v = validate_lines(trace(POSTED + stop), engine)
    assert v.allowed and not v.prefix, v.message


@pytest.mark.parametrize("version", [2])
def test_a_work_lane_header_with_version_2_is_malformed(version: int) -> None:
    header = json.dumps({"trace": "lanecheck", "version": version, "design": "work-lane", "config": CONFIG})
    v = validate_lines([header, json.dumps({"seq": 1, **POSTED[0]})])
    assert not v.allowed and v.code == 2 and v.line == 1, v.message
