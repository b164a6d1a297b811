"""Coverage from the real code: a design's correct scenarios run under PCT, their traces mapped to
the spec's observable actions; and the mapping failing where it must."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from model_checks.conformance.streamed import DesignFormat
from model_checks.design import load
from model_checks.registry import design
from model_checks.report.counting import count_config
from model_checks.report.coverage import STATES_NOT_COMPARABLE, action_coverage, no_real_runs, state_coverage
from model_checks.report.real_runs import (
    BUDGET_QUICK,
    RealRuns,
    ScenarioRun,
    event_name,
    event_names,
    real_runs,
)
from model_checks.report.state_coverage import (
    StateCollector,
    StateRuns,
    judge_execution,
    observable_format,
    trace_config,
)
from reference.tracing import RecordingTracer

pytestmark = pytest.mark.timeout(240)
NAMES = frozenset({"post", "take", "drain_end"})


def test_an_event_is_named_by_its_field_or_its_token() -> None:
    assert event_name({"seq": 1, "event": "take"}, NAMES) == "take"
    assert event_name("  3    p0 post lane=0 item=(0, 0)", NAMES) == "post"
    # what names none of the design's events counts for no action
    assert event_name({"event": "teleport"}, NAMES) is None
    assert event_name("  3    p0 postal lane=0", NAMES) is None
    assert event_name(42, NAMES) is None


def test_event_names_are_the_spec_labels_and_the_format_events() -> None:
    gate = design("schedule-gate")
    names = event_names(gate)
    assert {a.event for a in gate.spec.actions if a.event} <= names
    assert "stop_end" in names  # the format's, logged by no spec action


def test_the_real_reference_reaches_the_gate_actions() -> None:
    gate = design("schedule-gate")
    runs = real_runs(gate, quick=True)
    assert runs is not None
    assert {r.name for r in runs.runs} == {n for n, s in gate.harness().items() if not s.must_fail}
    assert all(r.traced and r.problem is None for r in runs.runs)
    assert all(0 < r.executions <= BUDGET_QUICK[0] for r in runs.runs)
    seen = runs.seen()
    assert {"permit_acquire", "admit_begin", "take", "process"} <= set(seen)
    html = action_coverage(None, gate.spec.actions, runs)
    assert str(BUDGET_QUICK[0]) in html and "PCT" in html  # the bound that produced it
    # the spec states its allowed traces matched: the gate's binding names processes by thread,
    # so the count stands alone, with no share of the explorer's states
    st = runs.states
    assert st.why_not is None and not st.unusable, (st.why_not, st.unusable)
    executions = sum(r.executions for r in runs.runs)
    # every execution judged while the judging budget lasted (all of them, unless the machine crawls)
    assert st.traces == st.judged > 0 and st.judged + st.unjudged == executions and st.rejected == 0
    n = len(st.collected.fingerprints)
    assert n > 1
    assert f"Spec states matched by real runs: <b>{n:,}</b>;" in html
    assert STATES_NOT_COMPARABLE in html and "GateTraceConstants" in html and "reachable at" not in html


def test_the_state_figure_is_a_ratio_only_under_the_explorer_constants() -> None:
    gate = design("schedule-gate")
    count = count_config(gate, gate.quick, 60.0)
    assert count.complete and count.states > 0
    same = StateCollector({1, 2, 3}, {id(count.constants): count.constants})
    runs = RealRuns(1, 1.0, [ScenarioRun("s", executions=1, traced=True)], StateRuns(same, traces=1))
    html = state_coverage(count, runs)
    assert f"<b>3</b> (of {count.states:,} reachable at <code>{count.config}</code>" in html
    # the same states under other constants (a larger configuration, or the binding's own class)
    other = dataclasses.replace(count.constants, permits=count.constants.permits + 1)
    runs.states.collected.constants = {id(other): other}
    html = state_coverage(count, runs)
    assert "reachable at" not in html and "no ratio" in html and "<b>3</b>;" in html
    # rejected traces and scenarios whose runs gave nothing are named
    runs.states.rejected = 1
    runs.states.unusable["quiet"] = "its trace source gives formatted lines, not event records"
    html = state_coverage(count, runs)
    assert "1 not allowed" in html and "<code>quiet</code>: its trace source gives formatted lines" in html


def test_hand_written_engines_have_no_state_coverage() -> None:
    def format_of(name: str) -> object:
        path = design(name).trace_format
        assert path is not None
        return load(path)

    assert observable_format(format_of("schedule-gate")) is not None
    for name in ("work-lane", "event-pool", "work-stealing"):
        assert observable_format(format_of(name)) is None, name
    runs = RealRuns(1, 1.0, [ScenarioRun("s", executions=1, traced=True)])
    runs.states.why_not = "its trace format is judged by a hand-written engine"
    html = state_coverage(None, runs)
    assert "state coverage of the real runs is not available" in html and "Spec states matched" not in html


def test_no_runs_without_a_trace_format_or_scenarios() -> None:
    assert real_runs(design("job-pool"), quick=True) is None
    assert "no harness scenarios and no trace format" in no_real_runs(False, False)
    assert "no trace format" in no_real_runs(True, False)


def test_an_action_nobody_reached_is_flagged_never_seen() -> None:
    gate = design("schedule-gate")
    taker = next(a for a in gate.spec.actions if a.event == "take")
    # runs that saw everything but ``take``, and an explorer count where it never fired
    count = count_config(gate, gate.quick, 60.0)
    assert count.complete
    count.coverage[taker.name] = 0
    seen = Counter({a.event: 1 for a in gate.spec.actions if a.event and a.event != "take"})
    runs = RealRuns(1, 1.0, [ScenarioRun("s", executions=1, traced=True, events=seen)])
    html = action_coverage(count, gate.spec.actions, runs)
    row = html.split(f"<code>{taker.name}</code></a>", 1)[1].split("</tr>", 1)[0]
    assert "never seen" in row
    # and seen in the runs alone, it is "real runs only"
    seen["take"] = 3
    html = action_coverage(count, gate.spec.actions, runs)
    row = html.split(f"<code>{taker.name}</code></a>", 1)[1].split("</tr>", 1)[0]
    assert "real runs only" in row and "never seen" not in row
    other = next(a for a in gate.spec.actions if a.event == "process")
    row = html.split(f"<code>{other.name}</code></a>", 1)[1].split("</tr>", 1)[0]
    assert "explorer and real runs" in row


def test_a_scenario_without_a_trace_hook_says_so() -> None:
    gate = design("schedule-gate")
    runs = RealRuns(1, 1.0, [ScenarioRun("quiet", executions=1, traced=False)])
    assert "records no trace" in action_coverage(None, gate.spec.actions, runs)


def test_an_event_several_actions_log_is_marked_shared() -> None:
    gate = design("schedule-gate")
    runs = RealRuns(
        1, 1.0, [ScenarioRun("s", executions=1, traced=True, events=Counter({"permit_acquire": 2}))]
    )
    html = action_coverage(None, gate.spec.actions, runs)
    sharers = [a.name for a in gate.spec.actions if a.event == "permit_acquire"]
    assert len(sharers) > 1
    row = html.split(f"<code>{sharers[0]}</code></a>", 1)[1].split("</tr>", 1)[0]
    assert f"event shared by {len(sharers)} actions" in row
    solo = next(a.name for a in gate.spec.actions if a.event == "publish")
    assert "shared" not in html.split(f"<code>{solo}</code></a>", 1)[1].split("</tr>", 1)[0]


def _gate_trace() -> tuple[DesignFormat, RecordingTracer]:
    """The Schedule Gate's observable trace format, and a tracer that recorded one gate run."""
    path = design("schedule-gate").trace_format
    assert path is not None
    fmt = observable_format(load(path))
    assert fmt is not None
    tracer = RecordingTracer()
    tracer.begin({"actors": 1, "workers": 1, "permits": 1, "mailbox_capacity": 1, "max_per_drain": 1})
    tracer.emit("t", "stop_end", {})
    return fmt, tracer


def test_a_trace_source_without_records_or_config_gives_no_states() -> None:
    fmt, tracer = _gate_trace()
    assert trace_config(lambda: tracer.events()) == tracer.config
    out = StateRuns()
    lines = [f"{e}" for e in tracer.events()]
    judge_execution(fmt, [lambda: list(lines)], out, "lines")
    events = tracer.events()
    judge_execution(fmt, [lambda: list(events)], out, "no-config")
    assert out.traces == 0 and not out.collected.fingerprints
    assert out.unusable == {
        "lines": "its trace source gives formatted lines, and no tracer with event records is reachable "
        "from it",
        "no-config": "the trace config is not reachable from its trace source",
    }
    # with the tracer's config the same events are judged, and their states kept
    judge_execution(fmt, [lambda: tracer.events()], out, "ok")
    assert out.traces == 1 and out.rejected == 0 and out.collected.fingerprints


def test_a_source_of_formatted_lines_is_read_through_its_tracer() -> None:
    """A scenario that formats its trace for a failure report (work-lane's) still has its records judged."""
    fmt, tracer = _gate_trace()
    out = StateRuns()
    judge_execution(fmt, [lambda: [f"{e}" for e in tracer.events()]], out, "lines")
    assert out.traces == 1 and not out.unusable and out.collected.fingerprints
