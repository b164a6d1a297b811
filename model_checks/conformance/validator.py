"""`validate_lines`: read a trace, run an engine over it, and word the verdict."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from model_checks.conformance.designs import design_format
from model_checks.conformance.fast import FastEngine
from model_checks.conformance.parse import Event, read
from model_checks.conformance.reader import parse_line, stream_lines, text_lines
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


def validate_lines(lines: Iterable[str], engine: str = "fast", *, complete: bool = False) -> Verdict:
    """Validate a trace given as lines of text (with or without their newlines).

    The header's ``design`` picks the validator. ``complete`` says the run that wrote the
    trace is over (a design whose traces have no end event of their own, or a run that
    deadlocked): it is then judged as a complete behaviour, not as a prefix. Work-lane
    traces show their end with ``stop_end`` and take no ``complete``.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    return _validate(text_lines(lines), engine, complete)


def _validate(it: Iterator[str], engine: str, complete: bool) -> Verdict:
    design = "work-lane"
    try:
        first = next(it, None)
        if first is None:
            raise Malformed(1, "line 1: empty file: the header is missing")
        if not first.strip():
            raise Malformed(1, "line 1: the header is missing (blank line)")
        header = parse_line(first, 1)
        named = header.get("design") if type(header) is dict else None
        fmt = design_format(named) if type(named) is str else None  # an unhashable `design` is no key
        if fmt is not None:
            design = fmt.design
            return validate_design(fmt, header, it, complete=complete)
        if complete:
            raise ValueError(
                "a work-lane trace shows that its run is over with stop_end; `complete` is for other designs"
            )
        return _work_lane(header, it, engine)
    except Malformed as problem:  # line 1, or a line the design's reader did not reach
        used = engine if design == "work-lane" else "spec"
        return Verdict(False, MALFORMED, problem.message, line=problem.line, engine=used, design=design)


def _work_lane(header: Any, it: Iterator[str], engine: str) -> Verdict:
    try:
        trace = read(header, it)
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
    with open(path, "rb") as stream:
        return validate_stream(stream, engine=engine, complete=complete)


def validate_stream(stream: IO[bytes], engine: str = "fast", *, complete: bool = False) -> Verdict:
    """Validate a JSON Lines trace read from a binary stream (a file, stdin), one line at a time."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    return _validate(stream_lines(stream), engine, complete)
