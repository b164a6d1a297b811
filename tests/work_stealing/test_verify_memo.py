"""The work-stealing conformance rows judge each distinct trace of a search once (``link.JudgedOnce``).

What the memo must not change: every execution's trace is still checked, every distinct trace is
judged by the fast validator, the search explores what it explored before, and a refused trace
is never remembered as allowed."""

from __future__ import annotations

import json

import pytest

from model_checks.designs.work_stealing.harness import POOLS
from model_checks.designs.work_stealing.link import JudgedOnce, traced_program
from model_checks.designs.work_stealing.trace import judge
from model_checks.harness import Options, check
from reference.work_stealing import header


@pytest.mark.timeout(120)
def test_every_execution_is_checked_and_each_distinct_trace_judged_once() -> None:
    cls, sc, _, _ = POOLS["pool/park-wake"]
    once = JudgedOnce(complete=True)
    result = check(traced_program(sc, build=cls, collect=True, judged_once=once), Options(strategy="dpor"))
    plain = check(traced_program(sc, build=cls, validate=False), Options(strategy="dpor"))
    assert result.failure is None and result.verdict == "exhaustive", result.report()
    # the same search as without validation: the memo adds no step and prunes nothing
    assert (result.executions, result.steps) == (plain.executions, plain.steps)
    assert once.seen == result.executions
    distinct: set[tuple[str, ...]] = set()
    for outcome in result.outcomes:  # (final's value, the event lines)
        assert isinstance(outcome, tuple) and isinstance(outcome[1], tuple)
        distinct.add(outcome[1])
    assert once.judged == len(distinct) < once.seen  # executions do repeat traces
    head = header({"workers": sc.workers, "capacity": sc.capacity, "pool": cls.POOL})
    for lines in distinct:  # each allowed, judged afresh
        assert judge(head, iter(lines), complete=True).code == 0


def test_a_refused_trace_is_refused_every_time_it_is_shown() -> None:
    once = JudgedOnce(complete=True)
    head = json.dumps(header({"workers": 1, "capacity": 2, "pool": "stealing"}))
    # a task done that was never submitted: no run of the pool logs it
    bad = [head, json.dumps({"seq": 1, "thread": "w0", "event": "done", "worker": 0, "task": "x"})]
    for _ in range(2):
        with pytest.raises(AssertionError, match="not allowed"):
            once(bad)
    assert (once.seen, once.judged) == (2, 2)
