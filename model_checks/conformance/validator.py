"""`validate_lines`: read a trace, run an engine over it, and word the verdict."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from model_checks.conformance.designs import (
    ENGINES,
    TraceFormat,
    cross_check_format,
    design_format,
    engines_of,
)
from model_checks.conformance.reader import clip, parse_line, stream_lines, text_lines
from model_checks.conformance.verdict import MALFORMED, Malformed, Verdict
from model_checks.registry import designs


def default_design() -> str:
    """The design of a header that names none: the first registered design with a trace format
    (the trace contract's first design; version 1 of the contract had no ``design`` field)."""
    for name, d in designs().items():
        if d.trace_format is not None:
            return name
    raise LookupError("no registered design has a trace format")


def _engine_used(fmt: TraceFormat | None, engine: str) -> str:
    """The engine that judged a trace: the one asked for, unless the format does not have it."""
    if fmt is None:
        return engine
    engines = engines_of(fmt)
    return engine if engine in engines else engines[0]


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
    design = default_design()
    fmt = design_format(design)
    try:
        first = next(it, None)
        if first is None:
            raise Malformed(1, "line 1: empty file: the header is missing")
        if not first.strip():
            raise Malformed(1, "line 1: the header is missing (blank line)")
        header = parse_line(first, 1)
        named = header.get("design") if type(header) is dict else None
        # A header without `design` is a trace of the default design (version 1 of the contract).
        name = named if type(named) is str else design  # an unhashable `design` is no name
        found = design_format(name)
        if found is None:
            known = "designs with one: " + ", ".join(n for n in designs() if design_format(n) is not None)
            shown = clip(repr(name), 80)
            raise Malformed(1, f"line 1: no design {shown} with a trace format is registered ({known})")
        fmt = found
        if engine not in engines_of(fmt):
            # A design whose own format has only a hand-written engine may name the spec-driven
            # cross-check (`Design.spec_trace_format`): `--engine spec` is that.
            fmt = (cross_check_format(name) if engine == "spec" else None) or fmt
        design = fmt.design
        return fmt.validate(header, it, engine=engine, complete=complete)
    except Malformed as problem:  # line 1, or a line the design's reader did not reach
        used = _engine_used(fmt, engine)
        return Verdict(False, MALFORMED, problem.message, line=problem.line, engine=used, design=design)


def validate_file(path: str | Path, engine: str = "fast", *, complete: bool = False) -> Verdict:
    """Validate the JSON Lines trace at ``path`` (streamed: memory does not grow with its length)."""
    with open(path, "rb") as stream:
        return validate_stream(stream, engine=engine, complete=complete)


def validate_stream(stream: IO[bytes], engine: str = "fast", *, complete: bool = False) -> Verdict:
    """Validate a JSON Lines trace read from a binary stream (a file, stdin), one line at a time."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    return _validate(stream_lines(stream), engine, complete)
