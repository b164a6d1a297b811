"""Verdicts, bounds, randomised strategies, Hypothesis, and DPOR against plain DFS."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings

from model_checks.harness import Options, check, schedules
from model_checks.harness.examples import (
    bounded_buffer,
    cas_counter,
    counter,
    handoff,
    independent,
    lock_order,
    timed_wait,
)
from model_checks.harness.rt.scheduler import UsageError
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.stateful import check_states


@pytest.mark.timeout(60)
def test_exhaustive_only_when_nothing_cut_the_search() -> None:
    full = check(counter(2, locked=True), strategy="dfs")
    assert full.verdict == "exhaustive" and not full.bounded_by
    capped = check(counter(2, locked=True), strategy="dfs", max_executions=5)
    assert capped.verdict == "bounded" and capped.bounded_by == ["max_executions=5"]
    assert capped.ok  # bounded is "no failure found", never a pass
    pb = check(counter(3, locked=True), strategy="dfs", preemption_bound=0)
    assert pb.verdict == "bounded" and "preemption_bound=0" in pb.bounded_by
    assert pb.max_preemptions == 0
    timed = check(bounded_buffer(1, 2, 2, 2), time_limit=0.2)
    assert timed.verdict == "bounded" and timed.bounded_by == ["time_limit=0.2s"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("strategy", ["random", "pct"])
def test_a_sampled_failure_does_not_read_as_bounded(strategy: str) -> None:
    """Review 8: "failed (random): ...; bounded by random sampling (seed=3)" read as a doubt about
    a definite failure; the sampling it was found under is still named."""
    found = check(counter(2), strategy=strategy, seed=3, max_executions=200)
    assert found.failure is not None
    assert "bounded" not in found.summary()
    assert f"found under {strategy} sampling (seed=3)" in found.summary()
    clean = check(counter(2, locked=True), strategy=strategy, seed=3, max_executions=20)
    assert f"bounded by {strategy} sampling (seed=3)" in clean.summary()


@pytest.mark.timeout(60)
def test_preemption_bound_not_reached_is_still_exhaustive() -> None:
    result = check(counter(2, locked=True), preemption_bound=10)
    assert result.verdict == "exhaustive"
    assert any("unsound under a preemption bound" in n for n in result.notes)


@pytest.mark.timeout(60)
def test_preemption_bounded_search_finds_shallow_bugs() -> None:
    result = check(counter(2, locked=False), preemption_bound=1)
    assert result.failure is not None and result.failure.preemptions == 1


@pytest.mark.timeout(60)
@pytest.mark.parametrize("strategy", ["random", "pct"])
def test_randomised_strategies_reproduce_by_seed(strategy: str) -> None:
    a = check(counter(2), strategy=strategy, seed=7, max_executions=200, minimize=False)
    b = check(counter(2), strategy=strategy, seed=7, max_executions=200, minimize=False)
    assert a.failure is not None and b.failure is not None
    assert a.failure.schedule == b.failure.schedule
    assert a.executions == b.executions
    clean = check(counter(2, locked=True), strategy=strategy, seed=1, max_executions=50)
    assert clean.verdict == "bounded" and clean.executions == 50


@pytest.mark.timeout(60)
def test_pct_finds_lock_order_inversion() -> None:
    result = check(lock_order(True), strategy="pct", pct_depth=2, seed=3, max_executions=500)
    assert result.failure is not None and result.failure.kind == "deadlock"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("strategy", ["dpor", "dfs", "states"])
def test_a_test_that_is_not_deterministic_is_refused(strategy: str) -> None:
    # (the state search replays its prefix in the execution itself: ``Chooser.replay_prefix``)
    runs = [0]

    def program(rt: ControlledRuntime) -> None:
        runs[0] += 1  # state the harness does not control, kept from one execution to the next
        lock = rt.lock("L")

        def body() -> None:
            with lock:
                pass

        for i in range(2 if runs[0] == 1 else 3):
            rt.start_thread(body, f"t{i}")

    with pytest.raises(UsageError, match="not deterministic: at step"):
        if strategy == "states":
            check_states(program)
        else:
            check(program, strategy=strategy)


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(choices=schedules(max_steps=40, max_choice=3))
def _hypothesis_finds(choices: list[int]) -> None:
    result = check(counter(2), choices=choices)
    assert result.ok, result.report()


@pytest.mark.timeout(120)
def test_hypothesis_strategy_shrinks_failing_schedule() -> None:
    with pytest.raises(AssertionError) as info:
        _hypothesis_finds()
    text = str(info.value)
    assert "lost update" in text
    assert "1 preemptions" in text  # shrunk to the one essential preemption


def _outcome_program(rt: ControlledRuntime) -> object:
    """A writer and a reader on an atomic, a lock-protected list: many distinct outcomes."""
    x = rt.atomic_int(0, "x")
    lock = rt.lock("L")
    log: list[str] = []

    def w(v: int) -> None:
        x.store(v)
        with lock:
            log.append(f"w{v}")

    def r() -> None:
        seen = x.load()
        with lock:
            log.append(f"r{seen}")

    ts = [rt.start_thread(lambda: w(1), "w1"), rt.start_thread(r, "r")]
    for t in ts:
        t.join()
    return lambda: (tuple(log), x.load())


DIFFERENTIAL: dict[str, Callable[[], Callable[[ControlledRuntime], object]]] = {
    "outcomes": lambda: _outcome_program,
    "counter": lambda: counter(2),
    "counter-locked": lambda: counter(2, locked=True),
    "cas": lambda: cas_counter(2, 1),
    "lock-order": lambda: lock_order(True),
    "handoff-if": lambda: handoff(use_while=False),
    "missing-notify": lambda: handoff(use_while=True, notify=False),
    "timed": lambda: timed_wait(),
    "buffer": lambda: bounded_buffer(1, 2, 1, 1),
    "independent": lambda: independent(2, 2),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(DIFFERENTIAL))
@pytest.mark.parametrize("spurious", [False, True])
def test_dpor_agrees_with_dfs(name: str, spurious: bool) -> None:
    """Same set of final outcomes, same failure kinds: DPOR prunes only redundant executions."""

    def kinds(strategy: str) -> tuple[set[object], set[str]]:
        outcomes: set[object] = set()
        failures: set[str] = set()
        result = check(
            DIFFERENTIAL[name](),
            Options(strategy=strategy, spurious_wakeups=spurious, minimize=False, keep_going=True),  # type: ignore[arg-type]
        )
        assert result.verdict != "bounded" or result.bounded_by == ["spurious_limit=1"], result.summary()
        outcomes |= result.outcomes
        failures |= result.failure_kinds
        return outcomes, failures

    dfs_out, dfs_fail = kinds("dfs")
    dpor_out, dpor_fail = kinds("dpor")
    assert dpor_fail == dfs_fail
    assert dpor_out == dfs_out
