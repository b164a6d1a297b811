"""Judging a generated trace of a design with a fast format (``conformance.fast_format``), as
`lanecheck validate` reads one: line 1 parsed, the rest streamed."""

from __future__ import annotations

import json
from typing import Any

from model_checks.conformance.fast_format import FastFormat
from model_checks.conformance.reader import parse_line
from model_checks.conformance.verdict import Verdict

Event = dict[str, Any]


def judge(fmt: FastFormat, head: Event, trace: list[Event], complete: bool = False) -> Verdict:
    lines = [json.dumps(e) for e in trace]
    return fmt.validate(parse_line(json.dumps(head), 1), iter(lines), engine="fast", complete=complete)


def assert_allowed(fmt: FastFormat, head: Event, trace: list[Event]) -> None:
    """A generated trace is a whole behaviour: allowed, not as a prefix, every event judged."""
    verdict = judge(fmt, head, trace)
    assert verdict.code == 0 and not verdict.prefix, verdict.message
    assert verdict.events == len(trace)
