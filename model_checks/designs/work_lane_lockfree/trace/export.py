"""`lanecheck traces export --design work-lane-lockfree`: the spec's covering behaviours as v2 traces.

The generic export (``conformance.export``) walks the spec; what this design adds is the way
back from the spec's labels to the trace's words, the inverse of ``checker.spec_event``: a CAS
carries the lane words ``from``/``to`` (and ``saw``) where the spec has ``expect``/``new``,
a ``push`` says its result (the spec's ``Push`` is the one that succeeds, the full queue's
``post`` is a ``push`` with result capacity_exceeded), the Stop(discard)
reset's ``discard`` is a ``reset``; the header is version 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from model_checks.conformance.export import Event
from model_checks.conformance.export import export as export_spec
from model_checks.designs.work_lane_lockfree.trace.checker import TRACE_WORD
from model_checks.designs.work_lane_lockfree.trace.format import DESIGN
from reference.work_lane_lockfree import trace_header
from spec.work_lane_lockfree import SPEC


def trace_event(ev: Event) -> Event:
    """One spec event in the trace format's words (see the module docstring)."""
    kind = ev["event"]
    if kind == "cas":
        out = {k: v for k, v in ev.items() if k not in ("expect", "new", "saw")}
        out["from"], out["to"] = TRACE_WORD[ev["expect"]], TRACE_WORD[ev["new"]]
        if "saw" in ev:
            out["saw"] = TRACE_WORD[ev["saw"]]
        return out
    if kind == "push":  # the spec's Push is the one that succeeds
        return {**ev, "result": "ok"}
    if kind == "post" and ev["result"] == "capacity_exceeded":
        return {k: v for k, v in ev.items() if k != "submit"} | {"event": "push"}
    if kind == "discard":
        return {**ev, "event": "reset"}
    return ev


def export(directory: Path, constants: Any, name: str, *, replace: bool = False) -> list[Path]:
    """Write the covering behaviours at ``constants`` as v2 traces (each validated first)."""
    return export_spec(
        directory,
        SPEC,
        constants,
        name,
        DESIGN,
        replace=replace,
        first=trace_header(constants.header()),
        translate=trace_event,
    )
