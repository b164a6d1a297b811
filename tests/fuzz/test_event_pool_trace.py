"""Fuzz the event-pool trace validator with traces of random sequential schedules of the pool.

Properties: every generated trace is allowed as a complete behaviour; a random single-event
corruption of one is judged — still allowed, rejected at or after the corrupted event, or
refused as malformed naming exactly its line — never a crash; and corruptions that must break a
rule (a take of another work, a post numbered out of order, a duplicated event of a pool
thread) are rejected at exactly that event.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model_checks.conformance.verdict import Verdict
from model_checks.designs.event_pool.trace import FORMAT
from model_checks.designs.event_pool.trace.generate import events, header
from tests.fuzz import fast_traces
from tests.fuzz.conftest import PROFILE

Event = dict[str, Any]
EVENTS: tuple[str, ...] = ("post", "signal", "wait", "wake", "take", "run", "done", "cancel", "stop_begin")
EVENTS += ("discard", "stop_end", "nap")
FIELDS = ("seq", "thread", "event", "item", "items", "to", "result", "raised", "work", "mode")
VALUES: list[Any] = [None, 0, 1, 7, -1, 2.0, True, "", "t0", "t1", "main", "ok", "event", [], [0], {}]


@st.composite
def schedules(draw: st.DrawFn) -> tuple[Event, list[Event]]:
    threads = draw(st.integers(1, 4))
    trace = list(
        events(
            draw(st.integers(0, 200)),
            threads=threads,
            seed=draw(st.integers(0, 2**32)),
            stop=draw(st.sampled_from(["drain", "discard"])),
            backlog=draw(st.integers(1, 8)),
            timeouts=draw(st.floats(0.0, 0.2)),
            cancels=draw(st.floats(0.0, 0.1)),
        )
    )
    return header(threads), trace


def judge(head: Event, trace: list[Event], complete: bool = False) -> Verdict:
    return fast_traces.judge(FORMAT, head, trace, complete)


def check_generated(schedule: tuple[Event, list[Event]]) -> None:
    fast_traces.assert_allowed(FORMAT, *schedule)


@settings(parent=settings.get_profile(PROFILE))
@given(schedules())
def test_generated_traces_are_allowed(schedule: tuple[Event, list[Event]]) -> None:
    check_generated(schedule)


@st.composite
def corrupted(draw: st.DrawFn) -> tuple[Event, list[Event], int]:
    head, trace = draw(schedules())
    k = draw(st.integers(0, len(trace) - 1))
    ev = dict(trace[k])
    how = draw(st.sampled_from(["field", "drop", "event", "delete", "swap"]))
    if how == "field":
        ev[draw(st.sampled_from(FIELDS))] = draw(st.sampled_from(VALUES))
    elif how == "drop":
        ev.pop(draw(st.sampled_from(sorted(ev))))
    elif how == "event":
        ev["event"] = draw(st.sampled_from(EVENTS))
    elif how == "delete":
        rest = [dict(e, seq=e["seq"] - 1) for e in trace[k + 1 :]]
        return head, trace[:k] + rest, k
    else:  # two neighbours swap places (seq renumbered): an order the run did not have
        if k + 1 >= len(trace):
            return head, trace, k
        a, b = dict(trace[k + 1], seq=k + 1), dict(trace[k], seq=k + 2)
        return head, [*trace[:k], a, b, *trace[k + 2 :]], k
    return head, [*trace[:k], ev, *trace[k + 1 :]], k


def check_corrupted(case: tuple[Event, list[Event], int]) -> None:
    head, trace, k = case
    verdict = judge(head, trace)
    if verdict.code == 2:
        assert verdict.line is not None and verdict.line >= k + 2, verdict.message
        assert verdict.line == k + 2 or "seq" in verdict.message, verdict.message
    elif verdict.code == 1:
        assert verdict.rule in FORMAT.rules, verdict.message
        assert verdict.seq is None or verdict.seq >= k + 1, (k, verdict.message)
    else:
        assert verdict.code == 0, verdict.message


@settings(parent=settings.get_profile(PROFILE))
@given(corrupted())
def test_a_corrupted_trace_is_judged_never_a_crash(case: tuple[Event, list[Event], int]) -> None:
    check_corrupted(case)


@st.composite
def broken(draw: st.DrawFn) -> tuple[Event, list[Event], int]:
    """A corruption that breaks a rule at exactly its event."""
    head, trace = draw(schedules())
    takes = [i for i, e in enumerate(trace) if e["event"] == "take" and e["item"] is not None]
    posts = [i for i, e in enumerate(trace) if e["event"] == "post" and e["result"] == "ok"]
    waits = [i for i, e in enumerate(trace) if e["event"] == "wait"]
    kinds = [k for k, found in (("take", takes), ("post", posts), ("wait", waits)) if found]
    if not kinds:
        return head, trace, -1
    kind = draw(st.sampled_from(kinds))
    if kind == "take":
        k = draw(st.sampled_from(takes))
        ev = dict(trace[k], item=trace[k]["item"] + draw(st.sampled_from([1, 2, -1])))
        if ev["item"] < 0:
            ev["item"] = trace[k]["item"] + 1
    elif kind == "post":
        k = draw(st.sampled_from(posts))
        ev = dict(trace[k], item=trace[k]["item"] + 1)
    else:  # a pool thread logs its wait twice
        k = draw(st.sampled_from(waits))
        rest = [dict(e, seq=e["seq"] + 1) for e in trace[k:]]
        return head, [*trace[: k + 1], *rest], k + 1
    return head, [*trace[:k], ev, *trace[k + 1 :]], k


def check_broken(case: tuple[Event, list[Event], int]) -> None:
    head, trace, k = case
    verdict = judge(head, trace)
    if k < 0:
        assert verdict.code == 0, verdict.message
        return
    assert verdict.code == 1 and verdict.seq == k + 1, (k, verdict.message)


@settings(parent=settings.get_profile(PROFILE))
@given(broken())
def test_a_rule_breaking_corruption_is_rejected_at_its_event(case: tuple[Event, list[Event], int]) -> None:
    check_broken(case)


@pytest.mark.soak
@pytest.mark.timeout(3600)
@settings(parent=settings.get_profile(PROFILE), max_examples=20_000)
@given(corrupted(), broken())
def test_soak_the_same_properties_with_many_more_examples(
    case: tuple[Event, list[Event], int], rule_case: tuple[Event, list[Event], int]
) -> None:
    check_corrupted(case)
    check_broken(rule_case)
