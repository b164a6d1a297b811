"""The event-pool validator's memory does not grow with the trace; a repeat of a work handed out
long ago is still refused (only the words of how and when it left the list are forgotten)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_checks.conformance.verdict import NOT_ALLOWED
from model_checks.designs.event_pool.trace import validate_lines
from model_checks.designs.event_pool.trace.state import KEPT
from model_checks.designs.event_pool.trace_bench import write_trace
from tests.helpers.trace_memory import short_and_long_peaks


@pytest.mark.timeout(240)
def test_the_validators_memory_does_not_grow_with_the_trace(tmp_path: Path) -> None:
    short, long = short_and_long_peaks(tmp_path, write_trace, 20_000, 200_000)
    # with a byte and a seq kept per accepted post, the long trace's peak was about 8 times the short one's
    assert long < 1.5 * short, (short, long)


def _trace(works: int, repeat: int) -> list[str]:
    head = {"trace": "lanecheck", "version": 1, "design": "event-pool", "config": {"threads": 1}}
    # t0 is picked by the first post and is busy from then on: later posts pick nobody.
    events: list[tuple[str, str, dict[str, object]]] = [
        ("main", "post", {"item": 0, "to": "t0", "result": "ok"}),
        ("main", "signal", {"to": "t0"}),
        ("t0", "wait", {}),
        ("t0", "wake", {"result": "event"}),
    ]
    for i in range(works):
        if i:
            events.append(("main", "post", {"item": i, "to": None, "result": "ok"}))
        events += [
            ("t0", "take", {"item": i}),
            ("t0", "run", {"item": i}),
            ("t0", "done", {"item": i, "raised": False}),
        ]
    events.append(("t0", "take", {"item": repeat}))
    return [json.dumps(head)] + [
        json.dumps({"seq": n, "thread": th, "event": kind, **fields})
        for n, (th, kind, fields) in enumerate(events, start=1)
    ]


@pytest.mark.parametrize(
    ("repeat", "words"),
    [
        (0, "left the list earlier (taken, cancelled or discarded: how and when is kept only for works"),
        (3 * KEPT - 1, "was taken at seq"),
    ],
)
def test_a_repeat_is_refused_however_long_ago_the_work_left(repeat: int, words: str) -> None:
    works = 3 * KEPT  # past the window: work 0's fate is forgotten, the last one's is not
    verdict = validate_lines(_trace(works, repeat))
    assert verdict.code == NOT_ALLOWED, verdict.message
    assert verdict.rule == 7 and "repeats work" in verdict.message and words in verdict.message
