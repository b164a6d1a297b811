"""`validate_lines`: read a trace, run an engine over it, and word the verdict."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import Any, Protocol

from model_checks.conformance.designs import DESIGN_FORMATS
from model_checks.conformance.fast import FastEngine
from model_checks.conformance.parse import Event, read
from model_checks.conformance.spec_engine import SpecEngine
from model_checks.conformance.streamed import validate_design
from model_checks.conformance.verdict import ALLOWED, MALFORMED, NOT_ALLOWED, Malformed, Rejected, Verdict

ENGINES = ("fast", "spec")


class Engine(Protocol):
    name: str

    def step(self, ev: Event) -> None: ...

    def describe(self) -> list[dict[str, Any]]: ...

    def pending(self) -> dict[str, Any]: ...


def _owes_problem(ev: Event, owed: int) -> str:
    what = ev["event"] + (f" of lane {ev['lane']}" if ev.get("lane") is not None else "")
    return (
        f"{ev['thread']} owes a submission of lane {owed} and must submit it before any other event of its "
        f"own, but logs {what}"
    )


def _other_design(first: str) -> dict[str, Any] | None:
    """The header, when line 1 names a design other than work-lane that has a validator."""
    try:
        obj = json.loads(first)
    except ValueError:
        return None
    if type(obj) is dict and obj.get("design") in DESIGN_FORMATS:
        return obj
    return None


def validate_lines(lines: Iterable[str], engine: str = "fast", *, complete: bool = False) -> Verdict:
    """Validate a trace given as lines of text (with or without their newlines).

    The header's ``design`` picks the validator. ``complete`` says the run that wrote the
    trace is over (a design whose traces have no end event of their own, or a run that
    deadlocked): it is then judged as a complete behaviour, not as a prefix. Work-lane
    traces show their end with ``stop_end`` and take no ``complete``.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    it = iter(lines)
    first = next(it, None)
    if first is not None:
        header = _other_design(first.rstrip("\r\n"))
        if header is not None:
            return validate_design(DESIGN_FORMATS[header["design"]], header, it, complete=complete)
        it = chain([first], it)
    if complete:
        raise ValueError(
            "a work-lane trace shows that its run is over with stop_end; `complete` is for other designs"
        )
    try:
        trace = read(it)
    except Malformed as problem:
        return Verdict(False, MALFORMED, problem.message, line=problem.line, engine=engine)
    events: Iterator[Event] = trace.events
    late: Malformed | None = None
    eng: Engine
    eng = SpecEngine(trace.config) if engine == "spec" else FastEngine(trace.config)
    owes: dict[str, int] = {}
    count = 0
    stopped = False
    current: Event | None = None
    step = eng.step
    try:
        for current in events:
            ev = current
            thread = ev["thread"]
            kind = ev["event"]
            if owes:
                owed = owes.get(thread)
                if owed is not None:
                    if kind != "submit" or ev["lane"] != owed:
                        raise Rejected(2, _owes_problem(ev, owed))
                    del owes[thread]
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
        )
    except Malformed as problem:
        late = problem
    if late is not None:
        return Verdict(False, MALFORMED, late.message, line=late.line, events=count, engine=engine)
    if stopped:
        return Verdict(
            True,
            ALLOWED,
            f"allowed: {count} events, a complete behaviour (ends after stop_end)",
            events=count,
            engine=engine,
        )
    pending = eng.pending()
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
    )


def validate_file(path: str | Path, engine: str = "fast", *, complete: bool = False) -> Verdict:
    """Validate the JSON Lines trace at ``path`` (streamed: memory does not grow with its length)."""
    try:
        with open(path, encoding="utf-8", newline="") as stream:
            return validate_lines(_lines(stream), engine=engine, complete=complete)
    except UnicodeDecodeError as problem:
        return Verdict(False, MALFORMED, f"not UTF-8 text: {problem}", line=None, engine=engine)


def _lines(stream: Iterable[str]) -> Iterator[str]:
    for line in stream:
        if line.endswith("\n"):
            line = line[:-1]
            if line.endswith("\r"):
                line = line[:-1]
        yield line
