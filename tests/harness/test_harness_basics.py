"""The classic programs: what the harness must find, and what it must prove absent."""

from __future__ import annotations

import pytest

from model_checks.harness import Options, check, examples
from model_checks.harness.rt.clock import MONOTONIC_ORIGIN
from model_checks.harness.runtime import ControlledRuntime


@pytest.mark.timeout(60)
@pytest.mark.parametrize("strategy", ["dpor", "dfs"])
@pytest.mark.parametrize("backend", ["greenlet", "threads"])
def test_racy_counter_found_locked_counter_proved(strategy: str, backend: str) -> None:
    opts = Options(strategy=strategy, backend=backend)  # type: ignore[arg-type]
    racy = check(examples.counter(2, locked=False), opts)
    assert racy.verdict == "failed"
    assert racy.failure is not None and racy.failure.kind == "assertion"
    assert "lost update" in racy.failure.message
    assert racy.failure.preemptions == 1  # minimised: one preemption suffices
    safe = check(examples.counter(2, locked=True), opts)
    assert safe.verdict == "exhaustive", safe.report()
    assert safe.outcomes == {2}


@pytest.mark.timeout(60)
def test_lock_order_inversion_reports_both_blocked_threads() -> None:
    result = check(examples.lock_order(inverted=True))
    assert result.failure is not None and result.failure.kind == "deadlock"
    details = result.failure.details
    assert "thread t0 blocked in acquire on B (held by t1)" in details
    assert "thread t1 blocked in acquire on A (held by t0)" in details
    assert "examples.py" in details  # each thread's stack
    assert check(examples.lock_order(inverted=False)).verdict == "exhaustive"


@pytest.mark.timeout(60)
def test_if_instead_of_while_found_only_with_spurious_wakeups() -> None:
    assert check(examples.handoff(use_while=False)).ok
    result = check(examples.handoff(use_while=False), spurious_wakeups=True)
    assert result.failure is not None and result.failure.kind == "exception"
    assert "IndexError" in result.failure.message
    assert "spurious wakeup" in result.failure.table
    fixed = check(examples.handoff(use_while=True), spurious_wakeups=True)
    assert fixed.ok
    assert fixed.verdict == "bounded" and "spurious_limit=1" in fixed.bounded_by


@pytest.mark.timeout(60)
def test_missing_notify_is_a_lost_wakeup() -> None:
    result = check(examples.handoff(use_while=True, notify=False))
    assert result.failure is not None and result.failure.kind == "lost_wakeup"
    assert "t0" in result.failure.message
    assert "waiting for a notify" in result.failure.details


@pytest.mark.timeout(60)
def test_missing_notify_without_pending_predicate_is_a_deadlock() -> None:
    def program(rt: ControlledRuntime) -> None:
        cond = rt.condition(name="c")

        def waiter() -> None:
            with cond:
                cond.wait()

        rt.start_thread(waiter, "w").join()

    result = check(program)
    assert result.failure is not None and result.failure.kind == "deadlock"


@pytest.mark.timeout(60)
def test_cas_counter_is_correct() -> None:
    result = check(examples.cas_counter(2, 2))
    assert result.verdict == "exhaustive" and result.outcomes == {4}


@pytest.mark.timeout(60)
def test_virtual_timeouts_explore_both_outcomes_without_waiting() -> None:
    result = check(examples.timed_wait(timeout=3600.0))
    assert result.elapsed < 5
    got = {outcome[0] for outcome in result.outcomes if isinstance(outcome, tuple)}
    assert got == {True, False}
    idle = check(examples.timed_wait(timeout=3600.0), virtual_timeouts=False)
    assert {o[0] for o in idle.outcomes if isinstance(o, tuple)} == {True}


@pytest.mark.timeout(60)
def test_virtual_clock_advances_by_the_timeout() -> None:
    def program(rt: ControlledRuntime) -> object:
        ev = rt.event()
        out: list[float] = []

        def waiter() -> None:
            ev.wait(5.0)
            out.append(rt.monotonic() - MONOTONIC_ORIGIN)  # (where the clock starts)

        rt.start_thread(waiter, "w").join()
        return lambda: out[0]

    assert check(program).outcomes == {5.0}


@pytest.mark.timeout(60)
def test_invariant_checked_after_every_step() -> None:
    def program(rt: ControlledRuntime) -> None:
        lock = rt.lock("L")
        state = {"x": 0}
        rt.invariant(lambda: state["x"] <= 1, "x at most 1")

        def bump() -> None:
            with lock:
                state["x"] += 1
            rt.yield_point()

        rt.start_thread(bump, "a")
        rt.start_thread(bump, "b")

    result = check(program)
    assert result.failure is not None and result.failure.kind == "invariant"
    assert "x at most 1" in result.failure.message


@pytest.mark.timeout(60)
def test_step_bound_reports_livelock() -> None:
    def program(rt: ControlledRuntime) -> None:
        flag = rt.atomic_int(0)

        def spin() -> None:
            while flag.load() == 0:
                rt.yield_point("spin")

        rt.start_thread(spin, "spinner").join()

    result = check(program, max_steps=50)
    assert result.failure is not None and result.failure.kind == "livelock"


@pytest.mark.timeout(60)
def test_semaphore_queue_rlock_and_atomic_ref() -> None:
    def program(rt: ControlledRuntime) -> object:
        sem = rt.semaphore(1, "sem")
        q = rt.queue(1, "q")
        r = rt.rlock("r")
        ref = rt.atomic_ref(None, "ref")
        token = object()
        got: list[object] = []

        def a() -> None:
            with sem, r, r:
                q.put(1)
            ref.compare_and_swap(None, token)

        def b() -> None:
            got.append(q.get())
            with sem:
                pass

        ts = [rt.start_thread(a, "a"), rt.start_thread(b, "b")]
        for t in ts:
            t.join()
        return lambda: (tuple(got), ref.load() is token, q.empty())

    result = check(program)
    assert result.verdict == "exhaustive"
    assert result.outcomes == {((1,), True, True)}


@pytest.mark.timeout(60)
def test_exception_in_thread_is_reported_with_traceback() -> None:
    def program(rt: ControlledRuntime) -> None:
        def boom() -> None:
            raise ValueError("boom")

        rt.start_thread(boom, "b")

    result = check(program)
    assert result.failure is not None and result.failure.kind == "exception"
    assert "ValueError: boom" in result.failure.message
    assert "raise ValueError" in result.failure.details


@pytest.mark.timeout(60)
def test_bounded_buffer_is_correct() -> None:
    result = check(examples.bounded_buffer(1, 2, 1, 1))
    assert result.verdict == "exhaustive" and len(result.outcomes) == 1


@pytest.mark.timeout(120)
def test_dpor_needs_far_fewer_executions_than_dfs() -> None:
    dpor = check(examples.independent(3, 2))
    dfs = check(examples.independent(3, 2), strategy="dfs", max_executions=3000)
    assert dpor.verdict == "exhaustive" and dpor.executions <= 10
    assert dfs.executions >= 100 * dpor.executions
    assert dpor.pruned > 0
