"""The traced deque with real threads: the log order stays a linearisation.

The trace lock spans one atomic step and its event, not a whole operation (so the races the
CAS settles stay open when traced, reference/work_stealing_deque.py). These runs check the
other half of that bargain: with real threads preempted often, every trace is still allowed
by the validator, and every pushed element is obtained exactly once.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from model_checks.designs.work_stealing.rows import deque_lines
from model_checks.designs.work_stealing.trace import judge
from reference.runtime import ThreadingRuntime
from reference.tracing import RecordingTracer
from reference.work_stealing_deque import ABORT, OK, ChaseLevDeque

THIEVES = 2


@pytest.fixture
def often_preempted() -> Iterator[None]:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as CPython allows
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


class LooseStealLog(ChaseLevDeque[str]):
    """Correct, but logs a won steal after leaving the trace lock: the log order can disagree."""

    def _steal_commit(self, thief: int, t: int, item: Any) -> tuple[str, str | None]:
        with self.logged_step():
            won = self._top.compare_and_swap(t, t + 1)
        time.sleep(0)  # let another thread's step in between, as a preemption would
        self._trace_steal(thief, OK if won else ABORT, item if won else None)
        return (OK, item) if won else (ABORT, None)


def _race(
    seed: int, pushes: int, build: type[ChaseLevDeque[str]] = ChaseLevDeque
) -> tuple[list[str], list[str], RecordingTracer]:
    tracer = RecordingTracer()
    dq = build(ThreadingRuntime(), 2, owner=0, tracer=tracer)
    got: list[list[str]] = [[] for _ in range(THIEVES + 1)]
    done = threading.Event()
    pushed = [f"x{seed}.{i}" for i in range(pushes)]

    def owner() -> None:
        # push two, take one: the deque grows and shrinks, and its last element is raced for
        for i, item in enumerate(pushed):
            dq.push(item)
            if i % 2:
                status, taken = dq.take()
                if status == OK and taken is not None:
                    got[0].append(taken)
        done.set()

    def thief(i: int) -> None:
        while True:
            finished = done.is_set()
            status, item = dq.steal(i)
            while status == ABORT:
                status, item = dq.steal(i)
            if status == OK and item is not None:
                got[i].append(item)
            elif finished:
                return

    # named as the harness names them: deque_lines maps owner/t<i> to the workers' w<i>
    threads = [threading.Thread(target=owner, name="owner")] + [
        threading.Thread(target=thief, args=(i,), name=f"t{i}") for i in range(1, THIEVES + 1)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    left = dq.drain()
    return pushed, [x for g in got for x in g] + left, tracer


def _verdict(tracer: RecordingTracer) -> Any:
    lines = deque_lines(THIEVES + 1, tracer.events())
    return judge(json.loads(lines[0]), iter(lines[1:]))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", range(4))
def test_real_thread_traces_of_the_deque_are_allowed(seed: int, often_preempted: None) -> None:
    pushed, obtained, tracer = _race(seed, 400)
    assert sorted(obtained) == sorted(pushed)  # exactly once
    verdict = _verdict(tracer)
    assert verdict.code == 0, verdict.message
    steals = [e for e in tracer.events() if e["event"] == "steal" and e["result"] == "ok"]
    assert steals, "no steal succeeded: the run raced nothing"


@pytest.mark.timeout(120)
def test_an_event_logged_outside_its_step_is_caught_by_the_same_check(often_preempted: None) -> None:
    # The bad case of the test above: the deque still works, only its log order is wrong.
    verdicts = []
    for seed in range(6):
        pushed, obtained, tracer = _race(seed, 400, LooseStealLog)
        assert sorted(obtained) == sorted(pushed)
        verdicts.append(_verdict(tracer))
    assert any(v.code == 1 for v in verdicts), [v.message for v in verdicts]


def test_a_trace_whose_events_are_out_of_linearisation_order_is_refused() -> None:
    # The check above can fail: the same kind of trace with a steal logged before the push
    # that made its element visible is refused.
    events = [
        {"seq": 1, "thread": "w1", "event": "steal", "worker": 1, "victim": 0, "task": "a", "result": "ok"},
        {"seq": 2, "thread": "w0", "event": "push", "worker": 0, "task": "a", "size": 1},
    ]
    lines = deque_lines(THIEVES + 1, events)
    assert judge(json.loads(lines[0]), iter(lines[1:])).code == 1
