"""The harness rows judge each distinct trace of a search once (``scenarios.TraceJudge``).

What the memo must not change: every execution's trace is still checked, every distinct trace is
judged by the spec, the search explores what it explored before, and a refused trace is never
remembered as allowed."""

from __future__ import annotations

import pytest

from model_checks.designs.work_lane_lockfree.scenarios import (
    LockFreeScenario,
    TraceJudge,
    lockfree_program,
    trace_lines,
)
from model_checks.designs.work_lane_lockfree.trace.validate import validate_lines
from model_checks.harness import Options, check
from reference.tracing import RecordingTracer
from reference.work_lane_lockfree import trace_header

pytestmark = pytest.mark.usefixtures("quiet_reference")


class _Recording(TraceJudge):
    """A judge that also keeps every trace it was shown, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[tuple[str, ...]] = []

    def check(self, tracer: RecordingTracer) -> None:
        self.shown.append(tuple(trace_lines(tracer)))
        super().check(tracer)


@pytest.mark.timeout(120)
def test_every_execution_is_checked_and_each_distinct_trace_judged_once() -> None:
    judge = _Recording()
    program = lockfree_program(LockFreeScenario(producers=1), validate=True, judge=judge)
    result = check(program, Options(strategy="dpor"))
    plain = check(lockfree_program(LockFreeScenario(producers=1)), Options(strategy="dpor"))
    assert result.failure is None and result.verdict == "exhaustive", result.report()
    # the same search as without validation: the memo adds no step and prunes nothing
    assert (result.executions, result.steps) == (plain.executions, plain.steps)
    assert judge.seen == len(judge.shown) == result.executions
    distinct = set(judge.shown)
    assert judge.judged == len(distinct) < judge.seen  # executions do repeat traces
    for lines in distinct:  # each allowed by the spec, judged afresh
        verdict = validate_lines(list(lines))
        assert verdict.allowed and not verdict.prefix, verdict.message


def _tracer(events: list[tuple[str, str, dict[str, object]]]) -> RecordingTracer:
    tracer = RecordingTracer(make_header=trace_header)
    tracer.begin({"lanes": 1, "workers": 1, "lane_capacity": 2, "max_per_drain": 1, "ready_capacity": 1})
    for thread, event, fields in events:
        tracer.emit(thread, event, fields)
    return tracer


def test_a_refused_trace_is_refused_every_time_it_is_shown() -> None:
    judge = TraceJudge()
    # an invoke by a thread that never took the lane: no behaviour of the spec logs it
    bad = _tracer([("w0", "invoke", {"lane": 0, "item": "x"})])
    for _ in range(2):
        with pytest.raises(AssertionError, match="not allowed"):
            judge.check(bad)
    assert (judge.seen, judge.judged) == (2, 2)
