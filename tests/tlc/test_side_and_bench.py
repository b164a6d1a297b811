"""`lanecheck check --tlc`'s side-by-side comparison and the explorer-vs-TLC benchmark."""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console

from model_checks.bench.explorer import bench
from model_checks.commands.check import run_check
from model_checks.commands.tlc_side import print_tlc_side_by_side
from model_checks.explorer.search import Options
from model_checks.tlc import jar
from model_checks.tlc.run import parse

NO_TLC = jar.unavailable()
needs_tlc = pytest.mark.skipif(NO_TLC is not None, reason=NO_TLC or "")

VIOLATION = """@!@!@STARTMSG 2110:1 @!@!@
Invariant NoLostWakeup is violated.
@!@!@ENDMSG 2110 @!@!@
@!@!@STARTMSG 2121:1 @!@!@
The behavior up to this point is:
@!@!@ENDMSG 2121 @!@!@
@!@!@STARTMSG 2217:4 @!@!@
1: <Initial predicate>
@!@!@ENDMSG 2217 @!@!@
@!@!@STARTMSG 2217:4 @!@!@
2: <Admit line 1>
@!@!@ENDMSG 2217 @!@!@
@!@!@STARTMSG 2199:0 @!@!@
1,234 states generated, 567 distinct states found, 8 states left on queue.
@!@!@ENDMSG 2199 @!@!@
@!@!@STARTMSG 2194:0 @!@!@
The depth of the complete state graph search is 2.
@!@!@ENDMSG 2194 @!@!@
"""


def test_parse_reads_a_violation() -> None:
    facts = parse(VIOLATION)
    assert (facts.verdict, facts.violated, facts.trace_states) == ("violated", "NoLostWakeup", 2)
    assert (facts.generated, facts.distinct, facts.depth, facts.errors) == (1234, 567, 2, [])


def test_parse_reports_tlc_errors() -> None:
    facts = parse("@!@!@STARTMSG 2231:1 @!@!@\nno initial predicate\n@!@!@ENDMSG 2231 @!@!@\n")
    assert facts.errors == ["TLC error 2231: no initial predicate"]


@needs_tlc
@pytest.mark.java
def test_side_by_side_agrees_on_a_mutant() -> None:
    result = run_check("work-lane", "small", "double-reserve", Options())
    console = Console(record=True, width=120)
    out: dict[str, Any] = print_tlc_side_by_side(
        "work-lane", "small", "double-reserve", result, False, console=console
    )
    assert out["agree"] == {"verdict": True, "violated": True, "counterexample_length": True}
    assert out["tlc"]["counterexample_length"] == 5
    assert "OneReservationPerLane" in console.export_text()


@needs_tlc
@pytest.mark.java
def test_side_by_side_agrees_on_the_reduced_state_space() -> None:
    result = run_check("work-lane", "small", None, Options(symmetry=True))
    out = print_tlc_side_by_side("work-lane", "small", None, result, True)
    assert all(out["agree"].values()), out
    assert out["tlc"]["distinct_states"] == 6_732


@needs_tlc
@pytest.mark.java
def test_quick_bench_measures_both_checkers() -> None:
    report = bench(quick=True, config="small")
    rows = report["rows"]
    assert isinstance(rows, list)
    assert {(r["checker"], r["workers"]) for r in rows} == {("explorer", 1), ("tlc", 1)}
    assert {r["distinct_states"] for r in rows} == {11_996}
    assert all(r["peak_rss_mb"] > 0 and r["wall_seconds"] > 0 for r in rows)
