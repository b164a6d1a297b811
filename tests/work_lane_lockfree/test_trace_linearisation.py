"""Real-thread traces of the lock-free lane were refused by rule 6 (capacity): the reference logged
each atomic step after it, so a thread could be preempted between the two. A drainer's pop freed
a slot, a producer's push filled it and was logged, and the pop was logged after the push: the
trace showed a push ok on a full queue, although the queue never held more than lane_capacity
items. The reference was right and its log order wrong; each step and its event are now made
under a trace lock of the object the step touches (``reference/work_lane_lockfree_lane.py``).

The fixtures are cut down from the refused real trace (lane 3, seq 24918, seed 1): the same items
and threads, on one lane with the real capacity and budget. The harness reaches the interleaving
with the race detector on, which makes the tracer's append a scheduling point of its own, as a
real thread's preemption is."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import pytest

from model_checks.designs.work_lane_lockfree.scenarios import LockFreeScenario, lockfree_program, trace_lines
from model_checks.designs.work_lane_lockfree.trace.validate import validate_lines
from model_checks.harness import Options, Result, check
from reference.tracing import RecordingTracer
from reference.work_lane_lockfree import LockFreeScheduler, StopMode
from reference.work_lane_lockfree_lane import LockFreeLane

pytestmark = pytest.mark.usefixtures("quiet_reference")

FIXTURES = Path(__file__).parent / "fixtures"


def _read(name: str) -> list[str]:
    return (FIXTURES / name).read_text().splitlines()


def test_the_pop_logged_after_the_push_it_made_room_for_is_refused_by_rule_6() -> None:
    v = validate_lines(_read("capacity_logged_late.jsonl"))
    assert not v.allowed and v.rule == 6 and v.seq == 20, v.message
    assert "p3 push" in v.message and "'result': 'ok'" in v.message


def test_the_pop_logged_at_its_step_is_allowed_and_complete() -> None:
    v = validate_lines(_read("capacity_linearised.jsonl"), complete=True)
    assert v.allowed and not v.prefix, v.message


def test_the_two_fixtures_differ_only_in_where_the_pop_is_logged() -> None:
    """So the refusal is the log order's, not a capacity the queue exceeded."""

    def body(name: str) -> list[tuple[Any, ...]]:
        return [tuple((k, v) for k, v in json.loads(line).items() if k != "seq") for line in _read(name)[1:]]

    late, linearised = body("capacity_logged_late.jsonl"), body("capacity_linearised.jsonl")
    pop = (("thread", "w1"), ("event", "pop"), ("lane", 0), ("item", "p1.1346"))
    assert late.index(pop) == linearised.index(pop) + 2  # after p3's push and CAS
    late.remove(pop)
    linearised.remove(pop)
    assert late == linearised


class _LoggedAfterTheStep(LockFreeLane[Any]):
    """The reference before the fix: each step's event logged after it, with no trace lock."""

    def _word_step(self) -> AbstractContextManager[object]:
        return nullcontext()

    def _queue_step(self) -> AbstractContextManager[object]:
        return nullcontext()


class _NoSettle(LockFreeLane[Any]):
    """Stop(discard) setting its flag without waiting for a drain_begin logged late."""

    def settle_drain_begin(self) -> None:
        return None


def _recording(lane: type[LockFreeLane[Any]], tracers: list[RecordingTracer]) -> Callable[..., Any]:
    def build(*args: Any, **kwargs: Any) -> LockFreeScheduler[Any]:
        tracers.append(kwargs["tracer"])
        return LockFreeScheduler(*args, lane_factory=lane, **kwargs)

    return build


def _pop_makes_room_for_a_push(tracer: RecordingTracer, capacity: int) -> bool:
    """A pop from a full lane, then another thread's push ok on it before the popper's next event."""
    size: dict[Any, int] = {}
    events = tracer.events()
    for i, e in enumerate(events):
        lane = e.get("lane")
        if e["event"] == "pop" and e["item"] is not None and size.get(lane, 0) == capacity:
            for f in events[i + 1 :]:
                if f["thread"] == e["thread"]:
                    break
                if f["event"] == "push" and f["lane"] == lane and f["result"] == "ok":
                    return True
        if e["event"] == "push" and e["result"] == "ok":
            size[lane] = size.get(lane, 0) + 1
        elif e["event"] == "pop" and e["item"] is not None:
            size[lane] -= 1
    return False


# One producer posting twice to a lane of capacity 1: its second push can fill the slot the
# drainer's pop of the first freed.
FULL_LANE = LockFreeScenario(producers=1, items=2, capacity=1, budget=1, workers=1)
SAMPLE = Options(strategy="pct", seed=1, max_executions=60, races=True)


def _sample(lane: type[LockFreeLane[Any]]) -> tuple[Result, list[RecordingTracer]]:
    tracers: list[RecordingTracer] = []
    result = check(lockfree_program(FULL_LANE, build=_recording(lane, tracers)), SAMPLE)
    assert result.failure is None, result.report()
    return result, tracers


@pytest.mark.timeout(120)
def test_the_harness_reaches_the_interleaving_and_each_trace_is_allowed() -> None:
    _, tracers = _sample(LockFreeLane)
    reached = [t for t in tracers if _pop_makes_room_for_a_push(t, FULL_LANE.capacity)]
    assert reached, "no sampled execution pushed into the slot a pop had just freed"
    for tracer in tracers:
        v = validate_lines(trace_lines(tracer), complete=True)
        assert v.allowed and not v.prefix, v.message


@pytest.mark.timeout(120)
def test_without_the_trace_locks_the_same_sample_has_a_rule_6_refusal() -> None:
    """The bad case: events logged after their steps give the real-thread refusal."""
    _, tracers = _sample(_LoggedAfterTheStep)
    verdicts = [validate_lines(trace_lines(t)) for t in tracers]
    capacity = [v for v in verdicts if not v.allowed and v.rule == 6 and "'result': 'ok'" in v.message]
    assert capacity, [v.message for v in verdicts if not v.allowed]


# One post, then Stop(discard): the worker's drain begins while Stop sets its flag.
DISCARD = LockFreeScenario(producers=1, items=1, workers=1, stop=StopMode.DISCARD)
ONE_PREEMPTION = Options(strategy="dpor", preemption_bound=1, races=True, max_executions=400)


@pytest.mark.timeout(120)
def test_a_drain_begin_logged_after_stop_discard_set_its_flag_is_refused() -> None:
    """The bad case of ``settle_drain_begin``: the drain saw the flag unset, Stop went on to
    ``stop_begin``, and only then was ``drain_begin`` logged."""
    result = check(lockfree_program(DISCARD, build=_recording(_NoSettle, []), validate=True), ONE_PREEMPTION)
    assert result.failure is not None and "drain_begin" in result.failure.message, result.report()


@pytest.mark.timeout(120)
def test_with_stop_settling_drain_begin_every_trace_within_one_preemption_is_allowed() -> None:
    result = check(
        lockfree_program(DISCARD, build=_recording(LockFreeLane, []), validate=True), ONE_PREEMPTION
    )
    assert result.failure is None and result.executions < 400, result.report()
