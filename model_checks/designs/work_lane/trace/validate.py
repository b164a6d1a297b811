"""The Work Lane's trace format as `lanecheck validate` reaches it: ``FORMAT.validate``.

A trace is read line by line (``parse.py``) and each event is stepped through one of two
engines: ``fast`` (hand-written from the spec's rules, the default) or ``spec`` (the
spec itself, searched; the cross-check). On top of either, a thread that owes a
submission (a post that reserved its lane, a drain that resubmits) must log it next.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any, Protocol

from model_checks.conformance.item_ids import ITEM_EVENTS, ItemIds
from model_checks.conformance.verdict import ALLOWED, MALFORMED, NOT_ALLOWED, Malformed, Rejected, Verdict
from model_checks.designs.work_lane.trace.fast import FastEngine
from model_checks.designs.work_lane.trace.parse import Event, read
from model_checks.designs.work_lane.trace.rules import RULES

DESIGN = "work-lane"


class Engine(Protocol):
    name: str

    def step(self, ev: Event) -> None: ...

    def describe(self) -> list[dict[str, Any]]: ...

    def pending(self) -> dict[str, Any]: ...


def owes_problem(ev: Event, owed: int) -> str:
    what = ev["event"] + (f" of lane {ev['lane']}" if ev.get("lane") is not None else "")
    return (
        f"{ev['thread']} owes a submission of lane {owed} and must submit it before any other event of its "
        f"own, but logs {what}"
    )


def pending_phrases(pending: dict[str, Any]) -> list[str]:
    """An engine's ``pending()`` (what a prefix leaves owed) in words, one phrase a kind."""
    what = []
    if pending.get("items"):
        what.append(
            "items accepted and not yet invoked: "
            + "; ".join(
                f"lane {lane}: {', '.join(map(repr, items))}" for lane, items in pending["items"].items()
            )
        )
    if pending.get("submissions"):
        what.append(
            "owed submissions: "
            + ", ".join(f"{t} -> lane {lane}" for t, lane in pending["submissions"].items())
        )
    if pending.get("stop"):
        what.append(pending["stop"])
    return what


class WorkLaneFormat:
    """The Work Lane's trace format (the contract's first design, docs/trace-format.md)."""

    design = DESIGN
    rules = RULES
    # Its traces show that the run is over with stop_end (trace export asks the format before
    # passing `complete`, and passes none).
    takes_complete = False

    def validate(self, header: Any, it: Iterator[str], *, engine: str, complete: bool) -> Verdict:
        verdict = _work_lane(header, it, engine)
        if complete and verdict.prefix:
            # The contract judges a trace that ends before stop_end as a prefix (rule 8), whatever
            # the caller knows of its run: said, not refused (refused, a folder of several designs'
            # traces validated with --complete ended with every work-lane file "not validated")
            verdict = replace(
                verdict,
                message=f"{verdict.message}; --complete changes nothing here: a work-lane trace ends its"
                " run with stop_end, and one that ends before it is judged as a prefix (rule 8)",
            )
        return verdict


def _work_lane(header: Any, it: Iterator[str], engine: str) -> Verdict:
    try:
        trace = read(header, it)
    except Malformed as problem:
        return Verdict(False, MALFORMED, problem.message, line=problem.line, engine=engine, design=DESIGN)
    events: Iterator[Event] = trace.events
    late: Malformed | None = None
    eng: Engine
    if engine == "spec":  # imported here: the spec engine needs the spec, the fast one does not
        from model_checks.designs.work_lane.trace.spec_engine import SpecEngine

        eng = SpecEngine(trace.config)
    else:
        eng = FastEngine(trace.config)
    owes: dict[str, int] = {}
    count = 0
    stopped = False
    current: Event | None = None
    step = eng.step
    see = ItemIds().see
    try:
        for current in events:
            ev = current
            thread = ev["thread"]
            kind = ev["event"]
            if owes:
                owed = owes.get(thread)
                if owed is not None:
                    if kind != "submit" or ev["lane"] != owed:
                        raise Rejected(2, owes_problem(ev, owed))
                    del owes[thread]
            if kind in ITEM_EVENTS:
                see(ev)
            step(ev)
            count += 1
            if kind == "post":
                if ev["submit"]:
                    owes[thread] = ev["lane"]
            elif kind == "drain_end":
                if ev["outcome"] == "resubmit":
                    owes[thread] = ev["lane"]
            elif kind == "stop_end":
                stopped = True
    except Rejected as problem:
        assert current is not None
        ev = current
        return Verdict(
            False,
            NOT_ALLOWED,
            f"seq {ev['seq']}: {problem.message}",
            seq=ev["seq"],
            rule=problem.rule,
            events=count,
            last_states=eng.describe(),
            engine=engine,
            design=DESIGN,
        )
    except Malformed as problem:
        late = problem
    if late is not None:
        return Verdict(
            False, MALFORMED, late.message, line=late.line, events=count, engine=engine, design=DESIGN
        )
    if stopped:
        return Verdict(
            True,
            ALLOWED,
            f"allowed: {count} events, a complete behaviour (ends after stop_end)",
            events=count,
            engine=engine,
            design=DESIGN,
        )
    pending = eng.pending()
    what = pending_phrases(pending)
    tail = ("; pending — " + "; ".join(what)) if what else "; nothing pending"
    return Verdict(
        True,
        ALLOWED,
        f"allowed as a prefix: {count} events, the trace ends before stop_end (rule 8){tail}",
        prefix=True,
        rule=8,
        events=count,
        pending=pending,
        last_states=eng.describe(),
        engine=engine,
        design=DESIGN,
    )


FORMAT = WorkLaneFormat()
