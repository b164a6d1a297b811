"""What the work-stealing spec-trace tests share (test_spec_trace.py, test_spec_trace_threads.py,
test_spec_trace_harness.py, test_done_before_settled.py, test_spec_deferred.py): a trace's lines
from its events, the verdicts of both engines (the hand-written ``FORMAT`` and the spec search
``SPEC_FORMAT``), a valid trace to edit, and the generated corpus."""

from __future__ import annotations

import json
from typing import Any

from model_checks.conformance.lines import validate_with
from model_checks.conformance.verdict import ALLOWED, NOT_ALLOWED, Verdict
from model_checks.designs.work_stealing.trace import FORMAT
from model_checks.designs.work_stealing.trace.generate import events, header
from model_checks.designs.work_stealing.trace.spec_search import SPEC_FORMAT
from tests.work_stealing.test_trace import (
    E,
    done,
    finds_nothing,
    owner_runs,
    park,
    push,
    run,
    steal,
    stop_begin,
    stop_end,
    submit,
    take,
    thief_runs,
)

Ev = dict[str, Any]


def lines_of(events_: list[Ev], workers: int = 2, capacity: int = 2, pool: str = "stealing") -> list[str]:
    numbered = [{"seq": n, **e} for n, e in enumerate(events_, start=1)]
    return [json.dumps(header(workers, capacity, pool))] + [json.dumps(e) for e in numbered]


def both(lines: list[str], complete: bool = False) -> tuple[Verdict, Verdict]:
    fast = validate_with(FORMAT, lines, engine="fast", complete=complete)
    spec = validate_with(SPEC_FORMAT, lines, engine="spec", complete=complete)
    return fast, spec


def assert_allowed(lines: list[str], complete: bool = False) -> None:
    fast, spec = both(lines, complete)
    assert fast.code == ALLOWED, fast.message
    assert spec.code == ALLOWED, spec.message
    assert fast.prefix == spec.prefix, (fast.message, spec.message)


def assert_refused(lines: list[str], rule: int, complete: bool = False) -> tuple[Verdict, Verdict]:
    """Both refuse the trace, by the same rule."""
    fast, spec = both(lines, complete)
    assert fast.code == NOT_ALLOWED and fast.rule == rule, fast.message
    assert spec.code == NOT_ALLOWED and spec.rule == rule, spec.message
    return fast, spec


# A root forks two children; a thief steals the oldest, the owner joins the newest (helping: it
# takes and runs it), then both; both workers park; Stop(drain) wakes them and returns.
GOOD: list[Ev] = [
    submit("a"),
    take(0, None, "empty"),
    steal(0, "injector", "a"),
    run(0, "a"),
    push(0, "b", 1),
    push(0, "c", 2),
    take(1, None, "empty"),
    steal(1, "injector", None, "empty"),
    *thief_runs(1, 0, "b"),
    *owner_runs(0, "c"),
    E("w0", "join", task="c"),
    E("w0", "join", task="b"),
    done(0, "a"),
    *finds_nothing(0, 1),
    park(0),
    *finds_nothing(1, 0),
    park(1),
    stop_begin(),
    E("main", "unpark", worker=0),
    E("main", "unpark", worker=1),
    stop_end(),
]


def generated(seed: int) -> tuple[int, int, list[Ev]]:
    """Corpus trace ``seed``: 1-3 workers, capacity 1-2, drain or discard (from 12 on: three
    workers and shallow trees, where a thief loses its CAS now and then)."""
    if seed >= 12:
        return 3, 2, list(events(70, workers=3, capacity=2, seed=seed, backlog=4, depth=3))
    workers, capacity, stop = 1 + seed % 3, 1 + seed % 2, ("drain", "discard")[seed % 2]
    trace = events(60 + 10 * seed, workers=workers, capacity=capacity, seed=seed, stop=stop, backlog=6)
    return workers, capacity, list(trace)
