"""Validate a work-lane-lockfree trace given as lines, without going through the design registry
(the harness scenarios and tests call this; `lanecheck validate` reaches ``FORMAT`` by the header)."""

from __future__ import annotations

from collections.abc import Iterable

from model_checks.conformance.reader import parse_line, text_lines
from model_checks.conformance.verdict import MALFORMED, Malformed, Verdict
from model_checks.designs.work_lane_lockfree.trace.format import DESIGN, FORMAT


def validate_lines(lines: Iterable[str], *, complete: bool = False) -> Verdict:
    """The verdict on a work-lane-lockfree trace (header line first)."""
    it = text_lines(lines)
    try:
        first = next(it, None)
        if first is None:
            raise Malformed(1, "line 1: empty file: the header is missing")
        header = parse_line(first, 1)
    except Malformed as problem:
        return Verdict(False, MALFORMED, problem.message, line=problem.line, engine="spec", design=DESIGN)
    return FORMAT.validate(header, it, engine="spec", complete=complete)
