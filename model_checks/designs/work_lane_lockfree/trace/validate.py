"""Validate a work-lane-lockfree trace given as lines, without going through the design registry
(the harness scenarios and tests call this; `lanecheck validate` reaches ``FORMAT`` by the header)."""

from __future__ import annotations

from collections.abc import Iterable

from model_checks.conformance.lines import validate_with
from model_checks.conformance.verdict import Verdict
from model_checks.designs.work_lane_lockfree.trace.format import FORMAT


def validate_lines(lines: Iterable[str], *, complete: bool = False) -> Verdict:
    """The verdict on a work-lane-lockfree trace (header line first)."""
    return validate_with(FORMAT, lines, engine="spec", complete=complete)
