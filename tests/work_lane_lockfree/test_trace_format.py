"""Trace format v2 (work-lane-lockfree): spec behaviours accepted, each rule's minimal bad trace rejected
at the right seq, malformed lines refused (docs/trace-format.md, "Trace format v2")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from model_checks.designs.work_lane_lockfree.behaviours import Event as SpecEvent
from model_checks.designs.work_lane_lockfree.behaviours import behaviours
from model_checks.designs.work_lane_lockfree.configs import CONFIGS
from model_checks.designs.work_lane_lockfree.trace.export import trace_event
from model_checks.designs.work_lane_lockfree.trace.format import FORMAT
from model_checks.designs.work_lane_lockfree.trace.validate import validate_lines
from spec import work_lane_lockfree as wlf

CONFIG = {"lanes": 1, "workers": 1, "lane_capacity": 1, "max_per_drain": 1, "ready_capacity": 1}
HEADER = {"trace": "lanecheck", "version": 2, "design": "work-lane-lockfree", "config": CONFIG}


def lines(events: list[tuple[str, str, dict[str, Any]]], header: dict[str, Any] = HEADER) -> list[str]:
    body = [json.dumps({"seq": i + 1, "thread": t, "event": e, **f}) for i, (t, e, f) in enumerate(events)]
    return [json.dumps(header), *body]


def cas(lane: int, frm: str, to: str, ok: bool, **extra: Any) -> dict[str, Any]:
    return {"lane": lane, "from": frm, "to": to, "ok": ok, **extra}


# One post, drained, Stop(drain): every step of a post and of a drain's end.
GOOD: list[tuple[str, str, dict[str, Any]]] = [
    ("p", "push", {"lane": 0, "item": "a", "result": "ok"}),  # 1
    ("p", "cas", cas(0, "idle", "scheduled", True)),  # 2
    ("p", "submit", {"lane": 0}),  # 3
    ("w", "take", {"lane": 0}),  # 4
    ("w", "drain_begin", {"lane": 0}),  # 5
    ("w", "pop", {"lane": 0, "item": "a"}),  # 6
    ("w", "invoke", {"lane": 0, "item": "a"}),  # 7
    ("w", "cas", cas(0, "draining", "idle", True, invoked=1)),  # 8
    ("w", "recheck", {"lane": 0, "empty": True}),  # 9
    ("s", "stop_begin", {"mode": "drain"}),  # 10
    ("s", "stop_end", {"mode": "drain", "result": "ok"}),  # 11
]


def test_a_minimal_trace_is_allowed_and_complete() -> None:
    v = validate_lines(lines(GOOD))
    assert v.allowed and not v.prefix and v.design == "work-lane-lockfree", v.message


def test_a_prefix_is_allowed_and_says_what_is_pending() -> None:
    v = validate_lines(lines(GOOD[:2]))
    assert v.allowed and v.prefix and "submit of lane 0" in v.message, v.message
    # A Stop is pending only once the trace shows it: some behaviours call Stop early, unlogged.
    for cut in (1, 2, 9):
        assert "Stop" not in validate_lines(lines(GOOD[:cut])).message
    v = validate_lines(lines(GOOD[:10]))
    assert v.prefix and "a Stop(drain) in progress" in v.message, v.message


def _replace(i: int, event: tuple[str, str, dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    return [*GOOD[: i - 1], event, *GOOD[i:]]


# (rule, trace, seq rejected, words in the message): the smallest trace breaking each rule.
BAD: dict[str, tuple[int, list[tuple[str, str, dict[str, Any]]], int, str]] = {
    "submit not owed": (1, [GOOD[0], ("p", "submit", {"lane": 0})], 2, "submit"),
    "cas won on a busy lane": (
        2,
        [
            *GOOD[:6],
            ("q", "push", {"lane": 0, "item": "b", "result": "ok"}),
            ("q", "cas", cas(0, "idle", "scheduled", True)),
        ],
        8,
        "ok = False",
    ),
    "other event before the owed submit": (
        2,
        [GOOD[0], GOOD[1], ("p", "push", {"lane": 0, "item": "b", "result": "capacity_exceeded"})],
        3,
        "owes the submission of lane 0",
    ),
    "drain_begin without a take": (
        3,
        [*GOOD[:3], ("w", "drain_begin", {"lane": 0})],
        4,
        "has logged no take before",
    ),
    # (rule 3, "`invoked` its count", as version 1's drain_end: it was named rule 2 before the trace
    # review of session 42)
    "release with a wrong invoked count": (
        3,
        _replace(8, ("w", "cas", cas(0, "draining", "idle", True, invoked=5))),
        8,
        "invoked = 1",
    ),
    "invoke of an item not popped": (4, _replace(7, ("w", "invoke", {"lane": 0, "item": "z"})), 7, "item"),
    "pop of an item not pushed": (4, _replace(6, ("w", "pop", {"lane": 0, "item": "z"})), 6, "item"),
    "recheck empty on a non-empty lane": (
        5,
        [
            *GOOD[:8],
            ("p", "push", {"lane": 0, "item": "b", "result": "ok"}),
            ("w", "recheck", {"lane": 0, "empty": True}),
        ],
        10,
        "empty = False",
    ),
    "push ok on a full lane": (
        6,
        [GOOD[0], ("q", "push", {"lane": 0, "item": "b", "result": "ok"})],
        2,
        "capacity",
    ),
    "stop_end drain drops an accepted item": (
        7,
        [
            *GOOD[:3],
            ("s", "stop_begin", {"mode": "drain"}),
            ("s", "stop_end", {"mode": "drain", "result": "ok"}),
        ],
        5,
        "drops accepted items: 'a' never invoked",
    ),
    "stop_end discard drops an accepted item": (
        7,
        [
            *GOOD[:3],
            ("s", "stop_begin", {"mode": "discard"}),
            ("s", "stop_end", {"mode": "discard", "result": "ok"}),
        ],
        5,
        "owes each an invoke or a reset",
    ),
    "push after stop_begin": (7, [GOOD[9], GOOD[0]], 2, "after Stop took effect"),
}


def test_the_bad_traces_cover_every_rule_but_the_prefix_rule() -> None:
    assert {rule for rule, *_ in BAD.values()} == set(FORMAT.rules) - {max(FORMAT.rules)}


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_trace_is_rejected_at_its_seq(name: str) -> None:
    rule, events, seq, words = BAD[name]
    v = validate_lines(lines(events))
    assert not v.allowed and v.code == 1, v.message
    assert (v.seq, v.rule) == (seq, rule), v.message
    assert words in v.message, v.message


def test_the_reset_answers_for_what_stop_discard_finds() -> None:
    events = [*GOOD[:3], ("s", "stop_begin", {"mode": "discard"})]
    good = [
        *events,
        ("s", "reset", {"lane": 0, "items": ["a"]}),
        ("s", "stop_end", {"mode": "discard", "result": "ok"}),
    ]
    assert validate_lines(lines(good)).allowed
    wrong = [*events, ("s", "reset", {"lane": 0, "items": []})]
    v = validate_lines(lines(wrong))
    assert not v.allowed and v.seq == 5 and v.rule == 7, v.message


def test_a_failed_stop_is_not_allowed() -> None:
    v = validate_lines(lines([*GOOD[:10], ("s", "stop_end", {"mode": "drain", "result": "failed"})]))
    assert not v.allowed and v.seq == 11 and "failed" in v.message


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ({"seq": 1, "thread": "p", "event": "post", "lane": 0, "item": "a", "result": "ok"}, "result"),
        (
            {"seq": 1, "thread": "p", "event": "drain_end", "lane": 0},
            "drain_end is a version-1 (work-lane) event",
        ),
        (
            {
                "seq": 1,
                "thread": "p",
                "event": "cas",
                "lane": 0,
                "from": "Idle",
                "to": "scheduled",
                "ok": True,
            },
            "from",
        ),
        ({"seq": 1, "thread": "p", "event": "push", "lane": 1, "item": "a", "result": "ok"}, "lane"),
        (
            {"seq": 1, "thread": "p", "event": "post", "lane": None, "item": "a", "result": "invalid_state"},
            "invalid_argument",
        ),
        ({"seq": 1, "thread": "p", "event": "post", "item": "a", "result": "invalid_argument"}, "lane"),
        ({"seq": 2, "thread": "p", "event": "take", "lane": 0}, "seq 2 where 1"),
    ],
)
def test_malformed_lines_are_refused_naming_the_line(line: dict[str, Any], words: str) -> None:
    v = validate_lines([json.dumps(HEADER), json.dumps(line)])
    assert not v.allowed and v.code == 2 and v.line == 2 and words in v.message, v.message


@pytest.mark.parametrize("version", [1, 3, "2"])
def test_the_header_must_say_version_2(version: object) -> None:
    v = validate_lines(lines(GOOD, {**HEADER, "version": version}))
    assert not v.allowed and v.code == 2 and v.line == 1, v.message


def v2(ev: SpecEvent) -> tuple[str, str, dict[str, Any]]:
    """A spec step's event in the trace's words (the exporter's, the inverse of ``checker.spec_event``)."""
    thread, name, fields = ev
    f = trace_event({"event": name, **{k: list(v) if isinstance(v, tuple) else v for k, v in fields}})
    return thread, f.pop("event"), f


@pytest.mark.timeout(300)
@pytest.mark.parametrize("config", ["refine", "refine-drain"])
def test_spec_behaviours_are_allowed(config: str) -> None:
    """A sample of every complete behaviour of the spec, each logged in the trace's words."""
    c = CONFIGS[config]
    keep = {a.event for a in wlf.SPEC.actions if a.event}
    found = sorted(behaviours(wlf.SPEC, c, keep))
    header = {**HEADER, "config": c.header()}
    for b in found[:: max(1, len(found) // 150)]:
        v = validate_lines(lines([v2(ev) for ev in b], header))
        assert v.allowed and not v.prefix, (v.message, b)


def test_complete_judges_a_run_without_stop_as_over() -> None:
    assert validate_lines(lines(GOOD[:9]), complete=True).allowed
    v = validate_lines(lines(GOOD[:3]), complete=True)
    assert not v.allowed and v.seq is None and "'a'" in v.message, v.message
