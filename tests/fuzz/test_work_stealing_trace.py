"""Fuzz the work-stealing trace validator with traces of random sequential schedules.

Properties: every trace generated from a random sequential schedule of the model is
allowed as a complete behaviour; a random single-event corruption of one is judged — still
allowed, rejected at or after the corrupted event, or refused as malformed naming exactly
its line — never a crash; and a corruption that must break linearizability (another task
returned by a take or steal, a wrong push size) is rejected at exactly that event.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from model_checks.commands.validate import _json, render
from model_checks.conformance.verdict import Verdict
from model_checks.designs.work_stealing.trace import FORMAT
from model_checks.designs.work_stealing.trace.generate import events, header
from tests.fuzz import fast_traces
from tests.fuzz.conftest import PROFILE

EVENTS: tuple[str, ...] = ("submit", "push", "resize", "take", "steal", "park", "unpark", "run", "done")
EVENTS += ("join", "stop_begin", "discard", "stop_end", "spawn")
FIELDS: tuple[str, ...] = ("seq", "thread", "event", "worker", "victim", "task", "tasks", "result", "size")
FIELDS += ("capacity", "outcome", "mode")


@st.composite
def schedules(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    workers = draw(st.integers(1, 4))
    capacity = draw(st.sampled_from([1, 2, 4]))
    trace = list(
        events(
            draw(st.integers(0, 150)),
            workers=workers,
            capacity=capacity,
            seed=draw(st.integers(0, 2**32)),
            fork=draw(st.floats(0.0, 0.6)),
            stop=draw(st.sampled_from(["drain", "discard"])),
            backlog=draw(st.integers(1, 16)),
        )
    )
    return header(workers, capacity), trace


def judge(head: dict[str, Any], trace: list[dict[str, Any]], complete: bool = False) -> Verdict:
    return fast_traces.judge(FORMAT, head, trace, complete)


def check_generated(schedule: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    fast_traces.assert_allowed(FORMAT, *schedule)


@settings(parent=settings.get_profile(PROFILE))
@given(schedules())
def test_traces_of_random_schedules_are_allowed(
    schedule: tuple[dict[str, Any], list[dict[str, Any]]],
) -> None:
    check_generated(schedule)


def _values(trace: list[dict[str, Any]]) -> st.SearchStrategy[Any]:
    tasks = sorted({str(e["task"]) for e in trace if e.get("task") is not None}) or ["t1"]
    words = ["ok", "empty", "lost", "abort", "injector", "drain", "discard", "raised", "failed", "w0", "main"]
    return st.one_of(
        st.sampled_from(tasks),
        st.sampled_from(words),
        st.integers(-2, 6),
        st.none(),
        st.booleans(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.lists(st.sampled_from(tasks), max_size=3),
    )


def check_corrupted(data: st.DataObject) -> None:
    head, trace = data.draw(schedules())
    k = data.draw(st.integers(0, len(trace) - 1))
    bad = dict(trace[k])
    how = data.draw(st.sampled_from(["set", "delete", "rename"]))
    if how == "set":
        bad[data.draw(st.sampled_from(FIELDS))] = data.draw(_values(trace))
    elif how == "delete":
        bad.pop(data.draw(st.sampled_from(sorted(bad))))
    else:
        bad["event"] = data.draw(st.sampled_from(EVENTS))
    corrupted = [*trace[:k], bad, *trace[k + 1 :]]
    complete = data.draw(st.booleans())
    verdict = judge(head, corrupted, complete=complete)
    assert verdict.code in (0, 1, 2)
    if verdict.code == 1:
        # Everything before the corrupted event is a valid prefix: nothing earlier is blamed.
        assert verdict.seq is None or verdict.seq >= k + 1, verdict.message
        assert verdict.rule is not None and verdict.message.startswith(
            f"seq {verdict.seq}: " if verdict.seq else "at the end of the trace: "
        )
    elif verdict.code == 2:
        assert verdict.line == k + 2 and verdict.message.startswith(f"line {k + 2}: "), verdict.message
    else:
        assert verdict.allowed
    render(verdict, Console(file=open("/dev/null", "w"), width=200))  # noqa: SIM115
    json.loads(_json(verdict))


@settings(parent=settings.get_profile(PROFILE))
@given(st.data())
def test_a_single_corrupted_event_is_judged_never_a_crash(data: st.DataObject) -> None:
    check_corrupted(data)


def check_must_reject(data: st.DataObject) -> None:
    head, trace = data.draw(schedules())
    taken = [i for i, e in enumerate(trace) if e["event"] in ("take", "steal") and e["result"] == "ok"]
    pushes = [i for i, e in enumerate(trace) if e["event"] == "push"]
    if not taken and not pushes:
        return
    k = data.draw(st.sampled_from(taken + pushes))
    bad = dict(trace[k])
    if bad["event"] == "push":
        bad["size"] += data.draw(st.sampled_from([-1, 1])) if bad["size"] > 1 else 1
        rules = {6}
    else:
        others = sorted({str(e["task"]) for e in trace if e.get("task") not in (None, bad["task"])})
        bad["task"] = data.draw(st.sampled_from([*others, "never-seen"]))
        rules = {2, 3}
    verdict = judge(head, [*trace[:k], bad, *trace[k + 1 :]])
    assert verdict.code == 1 and verdict.seq == k + 1 and verdict.rule in rules, verdict.message


@settings(parent=settings.get_profile(PROFILE))
@given(st.data())
def test_a_wrong_element_or_size_is_rejected_at_its_event(data: st.DataObject) -> None:
    check_must_reject(data)


@pytest.mark.soak
@settings(parent=settings.get_profile(PROFILE), max_examples=3_000)
@given(st.data())
def test_soak_work_stealing_traces(data: st.DataObject) -> None:
    check_generated(data.draw(schedules()))
    check_corrupted(data)
    check_must_reject(data)
