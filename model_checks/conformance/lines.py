"""Judging a trace given as lines with one design's format, without the registry.

What ``lanecheck validate`` says of a trace of that design, for the callers that hold the
format already (a design's tests, harness scenarios and benches).
"""

from __future__ import annotations

from collections.abc import Iterable

from model_checks.conformance.designs import TraceFormat
from model_checks.conformance.reader import parse_line, text_lines
from model_checks.conformance.verdict import MALFORMED, Malformed, Verdict


def validate_with(fmt: TraceFormat, lines: Iterable[str], *, engine: str, complete: bool = False) -> Verdict:
    """The verdict of ``fmt`` on a whole trace given as lines of text (header first)."""
    it = text_lines(lines)
    try:
        first = next(it, None)
        if first is None:
            raise Malformed(1, "line 1: empty file: the header is missing")
        header = parse_line(first, 1)
    except Malformed as malformed:
        line = malformed.line
        return Verdict(False, MALFORMED, malformed.message, line=line, engine=engine, design=fmt.design)
    return fmt.validate(header, it, engine=engine, complete=complete)


__all__ = ["validate_with"]
