"""DPOR's finer co-enabledness (``dependency.coenabled``): fewer executions, the same answers.

A step a thread runs while holding a lock (a release, a condition's wait / notify / notify_all)
can never be reordered with another thread's blocking acquire (or woken waiter's reacquire) of
that lock: in the state before the step the acquire was disabled. DPOR no longer treats such
pairs as races, and no longer analyses a parked wait that can never run as it is."""

from __future__ import annotations

import pytest

from model_checks.bench import harness_plain
from model_checks.bench.state_proofs import producer_consumer
from model_checks.harness import Options, check, patched
from model_checks.harness.examples import bounded_buffer
from model_checks.harness.rt.objects import ConditionState, LockState, Op
from model_checks.harness.strategies.dependency import coenabled


def _objects() -> tuple[LockState, LockState, ConditionState]:
    lock, other = LockState(0, "L"), LockState(1, "M")
    return lock, other, ConditionState(2, "C", lock)


def test_steps_under_a_lock_are_not_coenabled_with_its_acquires() -> None:
    lock, _other, cond = _objects()
    acquire = Op("acquire", lock, (True,))
    reacquire = Op("reacquire", cond, (1, True))
    for kind in ("wait", "notify", "notify_all"):
        assert not coenabled(Op(kind, cond), acquire, False)
        assert not coenabled(Op(kind, cond), reacquire, False)
    assert not coenabled(Op("release", lock), acquire, False)
    assert not coenabled(Op("release", lock), reacquire, False)


def test_the_refinement_stays_where_it_must() -> None:
    lock, other, cond = _objects()
    acquire = Op("acquire", lock, (True,))
    # a notify that raised ran without the lock: the lock may have been free
    assert coenabled(Op("notify", cond), acquire, True)
    # another lock, a timed or non-blocking acquire (its timeout / failure is always possible),
    # an acquire against an acquire (the race that decides who enters first)
    assert coenabled(Op("release", other), acquire, False)
    assert coenabled(Op("release", lock), Op("acquire", lock, (True,), timeout=1.0), False)
    assert coenabled(Op("release", lock), Op("acquire", lock, (False,)), False)
    assert coenabled(Op("acquire", lock, (True,)), acquire, False)
    assert coenabled(Op("notify", cond), Op("notify", cond), False)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("capacity", [1, 2])
def test_dpor_agrees_with_dfs_on_a_bounded_buffer(capacity: int) -> None:
    # two conditions over one mutex: waits, notifies, reacquires and releases under the lock
    # (plain DFS cannot finish three threads: 173,389 executions in 60 s on one item each)
    dfs = check(bounded_buffer(capacity, 2, 1, 1), Options(strategy="dfs"))
    dpor = check(bounded_buffer(capacity, 2, 1, 1), Options(strategy="dpor"))
    assert dfs.verdict == dpor.verdict == "exhaustive", (dfs.summary(), dpor.summary())
    assert dpor.outcomes == dfs.outcomes
    assert dpor.executions < dfs.executions


def _merges(a: tuple[int, ...], b: tuple[int, ...]) -> set[tuple[int, ...]]:
    if not a or not b:
        return {a + b}
    return {(a[0], *m) for m in _merges(a[1:], b)} | {(b[0], *m) for m in _merges(a, b[1:])}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("capacity", [1, 2])
def test_dpor_sees_every_order_of_the_three_thread_producer_consumer(capacity: int) -> None:
    # the consumer may take the two producers' items in any merge of their orders: DPOR must
    # reach each of the 6 (a lost one would be a reduction that pruned a real execution)
    with patched(harness_plain):
        result = check(producer_consumer(2, capacity), Options(strategy="dpor", races=False))
    assert result.verdict == "exhaustive", result.summary()
    assert result.outcomes == _merges((0, 1), (100, 101))


@pytest.mark.timeout(120)
def test_the_wrong_waiter_woken_is_still_found() -> None:
    # notify instead of notify_all: a producer wakes the other producer, and the consumer sleeps
    with patched(harness_plain):
        bug = check(
            producer_consumer(2, 1, buggy=True), Options(strategy="dpor", races=False, minimize=False)
        )
        ok = check(producer_consumer(2, 1), Options(strategy="dpor", races=False))
    assert bug.failure is not None and bug.failure.kind == "deadlock", bug.summary()
    assert ok.verdict == "exhaustive" and len(ok.outcomes) == 6, ok.summary()
