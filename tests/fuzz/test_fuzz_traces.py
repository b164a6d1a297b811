"""Fuzz the trace reader and validators of every design with adversarial traces.

Traces are random mutations of valid ones — the work-lane corpus (tests/conformance/corpus)
and short schedule-gate and akka-mailbox behaviours — plus deep nesting, huge declared sizes,
duplicate keys, wrong types, odd Unicode (lone surrogates, NUL, U+2028, a BOM) and odd line
breaks. The property: a verdict with exit code 0, 1 or 2 (2 naming the line), never an
exception; the text and JSON renderings print; each trace within a wall-clock safety cap and
a traced-memory cap.
"""

from __future__ import annotations

import io
import json
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from model_checks.commands.validate import _json, render
from model_checks.conformance import ENGINES, validate_stream
from tests.fuzz.conftest import PROFILE
from tests.gate.traces import one_post

CORPUS = Path(__file__).resolve().parents[1] / "conformance" / "corpus"
WORK_LANE = [p.read_text(encoding="utf-8").splitlines() for p in sorted(CORPUS.glob("valid_*.jsonl"))]


def _numbered(header: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(header)] + [json.dumps({"seq": n, **e}) for n, e in enumerate(events, start=1)]


GATE = _numbered(
    {
        "trace": "lanecheck",
        "version": 1,
        "design": "schedule-gate",
        "config": {"actors": 2, "workers": 1, "permits": 1, "mailbox_capacity": 1, "max_per_drain": 2},
    },
    one_post(1),
)
AKKA = _numbered(
    {"trace": "lanecheck", "version": 1, "design": "akka-mailbox", "config": {"workers": 1, "throughput": 1}},
    [
        e
        for k in range(2)
        for e in (
            {"thread": "p0", "event": "send", "mailbox": k, "item": f"m{k}", "result": "ok"},
            {"thread": "p0", "event": "schedule", "mailbox": k},
            {"thread": "p0", "event": "execute", "mailbox": k},
            {"thread": "w0", "event": "run_begin", "mailbox": k},
            {"thread": "w0", "event": "process", "mailbox": k, "item": f"m{k}"},
            {"thread": "w0", "event": "run_end", "mailbox": k, "processed": 1, "status": 0},
        )
    ],
)
VALID = [*WORK_LANE, GATE, AKKA]

ODD_TEXT = [
    "\ud800",
    "\udfff",
    "\x00",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\r",
    "\x85",
    "[/x]",
    "\\",
    '"',
    "é",
    "😀",
]
ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2.0,
    1e9,
    1e308,
    2**31,
    2**70,
    10**60,
    65_536,
    65_537,
    "",
    "1",
    [],
    {},
    [[[]]],
    "x" * 5000,
]
FIELDS = [
    "seq", "thread", "event", "lane", "item", "result", "submit", "outcome", "invoked", "mode", "reason",
    "items", "actor", "mailbox", "processed", "directive", "granted", "permit", "deferred", "status",
    "version", "design", "trace",
]  # fmt: skip
CONFIG_FIELDS = [
    "lanes", "workers", "lane_capacity", "max_per_drain", "ready_capacity", "actors", "permits",
    "mailbox_capacity", "throughput", "mailboxes",
]  # fmt: skip

odd_value = st.one_of(
    st.sampled_from(ODD_VALUES),
    st.sampled_from(ODD_TEXT),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)


@st.composite
def mutated_trace(draw: st.DrawFn) -> bytes:
    lines: list[str] = list(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        kind = draw(
            st.sampled_from(
                ["field", "config", "raw", "deep", "dup", "drop", "swap", "repeat", "line", "constant", "cut"]
            )
        )
        if kind in ("field", "config"):
            i = 0 if kind == "config" else i
            try:
                obj = json.loads(lines[i])
            except (ValueError, RecursionError):  # a line an earlier mutation broke or deepened
                continue
            if type(obj) is not dict:
                continue
            if kind == "config":
                config = obj.get("config")
                target: dict[str, Any] = config if type(config) is dict else obj
                target[draw(st.sampled_from(CONFIG_FIELDS))] = draw(odd_value)
            else:
                obj[draw(st.sampled_from(FIELDS))] = draw(odd_value)
            lines[i] = json.dumps(obj, ensure_ascii=draw(st.booleans()))
        elif kind == "raw":  # odd characters anywhere, line breaks included
            pos = draw(st.integers(0, len(lines[i])))
            lines[i] = (
                lines[i][:pos] + draw(st.sampled_from([*ODD_TEXT, "\n", "\r\n", "{", "]"])) + lines[i][pos:]
            )
        elif kind == "deep":
            n = draw(st.sampled_from([31, 32, 33, 1000, 100_000]))
            lines[i] = draw(st.sampled_from(["[" * n, "[" * n + "]" * n, '{"a":' * n + "1" + "}" * n]))
        elif kind == "dup":
            lines[i] = lines[i].replace("{", '{"seq": 0, ', 1)
        elif kind == "drop" and len(lines) > 1:
            del lines[i]
        elif kind == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "repeat":
            lines.insert(i, lines[i])
        elif kind == "line":
            lines[i] = draw(st.sampled_from(["", " ", "null", "1", '"x"', "[]", "{}", "\ufeff{}", "\x00"]))
        elif kind == "constant":
            lines[i] = lines[i].replace(
                '"seq": ', '"seq": ' + draw(st.sampled_from(["NaN", "-Infinity", "1e999"])) + ', "s": ', 1
            )
        else:
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    end = draw(st.sampled_from(["\n", "\r\n", ""]))
    text = end.join(lines) + end
    # surrogatepass: a raw lone surrogate becomes bytes that are not UTF-8, as a broken writer would emit
    return text.encode("utf-8", "surrogatepass")


TIME_CAP_S = 10.0  # a safety cap for a hang, not a speed target
MEMORY_CAP = 256 * 1024 * 1024


def check_trace(data: bytes, engine: str, complete: bool) -> None:
    tracemalloc.start()
    started = time.monotonic()
    try:
        try:
            verdict = validate_stream(io.BytesIO(data), engine=engine, complete=complete)
        except ValueError as problem:  # the documented refusal: --complete on a work-lane trace
            assert complete and "complete" in str(problem)
            return
        elapsed = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert elapsed < TIME_CAP_S, elapsed
    assert peak < MEMORY_CAP, peak
    assert verdict.code in (0, 1, 2)
    if verdict.code == 2:
        assert verdict.line is not None and verdict.message.startswith(f"line {verdict.line}: "), (
            verdict.message
        )
    if verdict.code == 1:
        assert verdict.rule is not None
    out = io.StringIO()
    render(verdict, Console(file=out, width=200))
    out.getvalue().encode("utf-8")  # nothing unprintable (lone surrogates are escaped)
    assert json.loads(_json(verdict))["code"] == verdict.code


@settings(parent=settings.get_profile(PROFILE))
@given(mutated_trace(), st.sampled_from(ENGINES), st.booleans())
def test_adversarial_traces_get_a_verdict(data: bytes, engine: str, complete: bool) -> None:
    check_trace(data, engine, complete)


@settings(parent=settings.get_profile(PROFILE))
@given(st.binary(max_size=400), st.sampled_from(ENGINES))
def test_arbitrary_bytes_get_a_verdict(data: bytes, engine: str) -> None:
    check_trace(data, engine, False)


@pytest.mark.soak
@settings(parent=settings.get_profile(PROFILE), max_examples=3_000)
@given(mutated_trace(), st.sampled_from(ENGINES), st.booleans())
def test_adversarial_traces_soak(data: bytes, engine: str, complete: bool) -> None:
    check_trace(data, engine, complete)


def test_the_valid_seeds_are_valid() -> None:
    """The mutations start from traces every design allows (else the fuzz would test only refusals)."""
    for lines in VALID:
        data = ("\n".join(lines) + "\n").encode()
        verdict = validate_stream(io.BytesIO(data))
        assert verdict.code == 0, verdict.message
