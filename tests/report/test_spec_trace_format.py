"""State coverage of real runs for designs whose trace format is a hand-written engine: read through
the ``spec_trace_format`` they name beside it (work-lane's adapter around its spec engine), and said
to be unavailable, with the reason, where they name none."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from model_checks.conformance.streamed import DesignFormat
from model_checks.design import Design, load
from model_checks.registry import design
from model_checks.report import real_runs as real_runs_module
from model_checks.report import write_site
from model_checks.report.counting import count_config
from model_checks.report.coverage import state_coverage, states_summary
from model_checks.report.real_runs import RealRuns, ScenarioRun, real_runs
from model_checks.report.state_coverage import StateCollector, StateRuns, judge_execution, state_format
from reference.tracing import RecordingTracer

pytestmark = pytest.mark.timeout(240)
HERE = "tests.report.test_spec_trace_format"


def _gate_format() -> DesignFormat:
    path = design("schedule-gate").trace_format
    assert path is not None
    fmt = load(path)
    assert isinstance(fmt, DesignFormat)
    return fmt


class HandWritten:
    """schedule-gate's format as a hand-written engine would present it: no streaming search to observe."""

    design = "schedule-gate"

    def __init__(self) -> None:
        self.fields = _gate_format().fields

    def validate(self, header: Any, it: Iterator[str], *, engine: str, complete: bool) -> object:
        return _gate_format().validate(header, it, engine=engine, complete=complete)


HAND_WRITTEN = HandWritten()


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three executions or one second per scenario."""
    monkeypatch.setattr(real_runs_module, "BUDGET_QUICK", (3, 1.0))


def _hand_written_gate(spec_trace_format: str | None) -> Design:
    gate = design("schedule-gate")
    return dataclasses.replace(gate, trace_format=f"{HERE}:HAND_WRITTEN", spec_trace_format=spec_trace_format)


def test_a_hand_written_format_is_measured_through_its_spec_trace_format(tiny: None) -> None:
    gate = _hand_written_gate(design("schedule-gate").trace_format)
    fmt, judged_by = state_format(gate)
    assert fmt is _gate_format() and "spec_trace_format" in judged_by
    runs = real_runs(gate, quick=True)
    assert runs is not None
    st = runs.states
    assert st.why_not is None and not st.unusable and st.rejected == 0
    assert st.traces == st.judged > 0 and st.collected.fingerprints
    html = state_coverage(None, runs)
    assert f"Spec states matched by real runs: <b>{len(st.collected.fingerprints):,}</b>;" in html
    assert "its spec_trace_format (" in html and "executions judged" in html
    # the same design naming none: not available, and why
    bare = _hand_written_gate(None)
    runs = real_runs(bare, quick=True)
    assert runs is not None and runs.states.why_not is not None
    assert "hand-written engine" in runs.states.why_not and "no spec_trace_format" in runs.states.why_not
    assert not runs.states.traces and all(r.executions for r in runs.runs)  # the actions are still counted


def test_a_spec_trace_format_that_cannot_be_used_is_named() -> None:
    fmt, why = state_format(_hand_written_gate(f"{HERE}:NO_SUCH_FORMAT"))
    assert fmt is None and "could not be loaded: AttributeError" in why
    fmt, why = state_format(_hand_written_gate(f"{HERE}:HAND_WRITTEN"))
    assert fmt is None and "names a HandWritten, not a DesignFormat" in why


def test_a_checker_nobody_can_observe_leaves_no_states() -> None:
    gate = _gate_format()

    class Blind:  # judges, but has neither a TraceSearch at ``search`` nor an ``observe``
        def __init__(self, config: dict[str, Any]) -> None:
            self.inner = gate.make(config)
            self.complete = False

    blind = dataclasses.replace(gate, make=cast(Any, Blind))  # no Checker: that is the point
    tracer = RecordingTracer()
    tracer.begin({"actors": 1, "workers": 1, "permits": 1, "mailbox_capacity": 1, "max_per_drain": 1})
    tracer.emit("t", "stop_end", {})
    out = StateRuns()
    judge_execution(blind, [lambda: tracer.events()], out, "s")
    assert out.why_not is not None and "Blind" in out.why_not and "observe()" in out.why_not
    assert not out.traces and not out.collected.fingerprints


@pytest.mark.parametrize("name", ["event-pool", "work-stealing"])
def test_a_hand_written_design_without_spec_trace_format_says_not_available(tiny: None, name: str) -> None:
    bare = dataclasses.replace(design(name), spec_trace_format=None)
    fmt, why = state_format(bare)
    assert fmt is None and "hand-written engine" in why and "no spec_trace_format" in why
    runs = real_runs(bare, quick=True)
    assert runs is not None and runs.states.why_not == why
    html = state_coverage(None, runs)
    assert "state coverage of the real runs is not available" in html and "no spec_trace_format" in html
    assert "Spec states matched" not in html
    assert states_summary(None, runs).startswith(
        "not available: its trace format is judged by a hand-written"
    )


def test_the_ratio_is_shown_only_under_the_explorer_constants() -> None:
    gate = design("schedule-gate")
    count = count_config(gate, gate.quick, 60.0)
    assert count.complete
    same = StateCollector({1, 2}, {id(count.constants): count.constants})
    states = StateRuns(
        same, traces=2, judged=2, unjudged=3, judge_seconds=2.0, judged_by="its spec_trace_format"
    )
    runs = RealRuns(3, 1.0, [ScenarioRun("s", executions=5, traced=True, judged=2)], states)
    html = state_coverage(count, runs)
    assert f"<b>2</b> (of {count.states:,} reachable at" in html
    assert "2 of 5 executions judged (judging at most 2 s per scenario: a sample)" in html
    assert states_summary(count, runs).startswith(f"2 of {count.states:,} states; 2 of 5 executions judged")
    other = dataclasses.replace(count.constants, permits=count.constants.permits + 1)
    states.collected.constants = {id(other): other}
    assert "reachable at" not in state_coverage(count, runs)
    assert "(own binding of the constants: no ratio)" in states_summary(count, runs)


def test_work_lane_states_on_its_page_and_the_landing_page(
    tiny: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # each scenario's first execution judged, the rest past the judging budget: a sample, said so
    monkeypatch.setattr(real_runs_module, "JUDGE_SECONDS_QUICK", 1e-9)
    index = write_site(tmp_path / "site", ["work-lane"], quick=True)
    page = (index.parent / "work-lane" / "index.html").read_text(encoding="utf-8")
    found = re.search(r"Spec states matched by real runs: <b>([\d,]+)</b>;", page)
    assert found is not None and int(found.group(1).replace(",", "")) > 0, page[-3000:]
    assert "not available" not in page
    assert "spec_trace_format (model_checks.designs.work_lane.trace.spec_format:FORMAT)" in page
    sample = re.search(r"([\d,]+) of ([\d,]+) executions judged \(judging at most 1e-09 s per scenario", page)
    assert sample is not None and 0 < int(sample.group(1)) < int(sample.group(2))
    # its engine's constants are its own (lanes join as the trace names them): N alone, and why
    assert "TraceConstants" in page and "no ratio is shown" in page
    landing = index.read_text(encoding="utf-8")
    row = landing.split('href="work-lane/index.html"', 1)[1].split("</tr>", 1)[0]
    assert f"{found.group(1)} states (own binding of the constants: no ratio)" in row
    assert "executions judged" in row and "at most 3 executions or 1 s per correct scenario" in row


def test_the_landing_page_says_why_a_design_has_no_state_figure(handoff_site: Path) -> None:
    landing = handoff_site.read_text(encoding="utf-8")
    assert "spec states matched by real runs" in landing
    row = landing.split('href="handoff/index.html"', 1)[1].split("</tr>", 1)[0]
    assert "no trace could be judged" in row  # (the plug-in example has a trace format since session 48)
