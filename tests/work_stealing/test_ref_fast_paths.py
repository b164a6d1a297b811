"""The work-stealing reference's cheap paths: what each skips, and that skipping it stays correct.

* The owner's take returns empty without an atomic access while its lower bound of ``top``
  says the deque is empty, and still sees every element thieves left it.
* The completion that brings the pool's ``pending`` count to 0 takes the park lock only when a
  waiter is registered; Stop registers before it waits: the harness checks that Stop still
  waits for every task and is still woken, and catches a Stop that waits unregistered.
* Below three workers there is no victim order to draw (no generator in the pool).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

import pytest

from model_checks.designs.work_stealing.harness import program
from model_checks.harness.api import check
from model_checks.harness.options import Options, Result
from reference.runtime import AtomicInt, ThreadingRuntime
from reference.work_stealing import TaskHandle, WorkStealingPool
from reference.work_stealing_deque import EMPTY, OK, ChaseLevDeque

pytestmark = pytest.mark.timeout(120)


class _CountedInt:
    """An atomic int that counts every access (the production cell does the work)."""

    def __init__(self, cell: AtomicInt, counts: dict[str, int], name: str) -> None:
        self._cell, self._counts, self._name = cell, counts, name

    def _count(self) -> None:
        self._counts[self._name] = self._counts.get(self._name, 0) + 1

    def load(self) -> int:
        self._count()
        return self._cell.load()

    def store(self, value: int) -> None:
        self._count()
        self._cell.store(value)

    def compare_and_swap(self, expected: int, new: int) -> bool:
        self._count()
        return self._cell.compare_and_swap(expected, new)

    def fetch_add(self, delta: int) -> int:
        self._count()
        return self._cell.fetch_add(delta)


class CountingRuntime(ThreadingRuntime):
    """The production runtime whose atomic ints count their accesses, by name."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def atomic_int(self, value: int = 0, name: str = "") -> AtomicInt:
        return _CountedInt(super().atomic_int(value, name), self.counts, name)

    def accesses(self) -> int:
        return sum(n for name, n in self.counts.items() if name.endswith((".top", ".bottom")))


def test_a_take_known_empty_makes_no_access_and_a_stale_bound_still_sees_the_thefts() -> None:
    rt = CountingRuntime()
    dq: ChaseLevDeque[str] = ChaseLevDeque(rt, 2)
    assert dq.take() == (EMPTY, None) and rt.accesses() == 0  # never pushed: bottom <= bound
    dq.push("a")
    dq.push("b")
    before = rt.accesses()
    assert dq.take() == (OK, "b")  # reserve (bottom store) then look (top load): two accesses
    assert rt.accesses() - before == 2
    assert dq.steal(1) == (OK, "a")  # the thief empties it: the owner's bound (0) is now stale
    before = rt.accesses()
    assert dq.take() == (EMPTY, None)  # the bound cannot tell: reserve, look, undo
    assert rt.accesses() - before == 3
    before = rt.accesses()
    assert dq.take() == (EMPTY, None)  # the look refreshed the bound: no access now
    assert rt.accesses() == before
    dq.push("c")  # and the deque is still usable from where top is
    assert dq.steal(1) == (OK, "c") and dq.take() == (EMPTY, None) and len(dq) == 0


class _StopWaitsUnregistered(WorkStealingPool):
    """BUG: Stop waits for the pool to go quiet without registering as a waiter first: the last
    completion sees no waiter and skips the notify."""

    def _wait_quiet(self) -> None:
        with self._park_lock:
            while self._pending.load() > 0 and self._failure is None:
                self._idle.wait()


def _quiet(fn: Callable[[], Result]) -> Result:
    log = logging.getLogger("reference")  # a hung Stop makes the pool log each execution's fault
    previous = log.level
    log.setLevel(logging.CRITICAL)
    try:
        return fn()
    finally:
        log.setLevel(previous)


# pool/fork-join: main joins the root, then Stops; pool/stop-discard: Stop(discard) while the root
# and its child may still run, so Stop waits for the last completion.
@pytest.mark.parametrize("name", ["pool/fork-join", "pool/stop-discard"])
def test_stop_waits_for_the_last_completion_and_is_woken(name: str) -> None:
    result = check(program(name), Options(strategy="dpor", time_limit=100))
    assert result.failure is None, result.report()
    assert result.verdict == "exhaustive"


def test_a_stop_that_waits_unregistered_is_caught() -> None:
    buggy = program("pool/stop-discard", _StopWaitsUnregistered)
    result = _quiet(partial(check, buggy, Options(strategy="dpor", time_limit=100)))
    assert result.failure is not None, f"missed: {result.verdict}"
    assert result.failure.kind in ("deadlock", "lost_wakeup"), result.failure.message


@pytest.mark.parametrize("workers", [1, 2])
def test_below_three_workers_the_victims_need_no_generator(workers: int) -> None:
    pool = WorkStealingPool(workers=workers)
    try:
        assert pool._rngs == []
        assert [list(pool._victims(w)) for w in range(workers)] == ([[]] if workers == 1 else [[1], [0]])
    finally:
        pool.stop()


def test_from_three_workers_each_round_visits_every_other_worker_once() -> None:
    pool = WorkStealingPool(workers=4, seed=7)
    try:
        for w in range(4):
            for _ in range(5):
                assert sorted(pool._victims(w)) == [v for v in range(4) if v != w]
    finally:
        pool.stop()


@pytest.mark.timeout(60)
def test_a_subclass_that_finds_work_its_own_way_is_asked_by_the_worker_loop_and_the_join() -> None:
    # ``_find_work`` is a seam (the mutants use it): the loop's direct take must not bypass it
    asked: list[int] = []

    class Counting(WorkStealingPool):
        def _find_work(self, w: int) -> TaskHandle | None:
            asked.append(w)
            return super()._find_work(w)

    plain = WorkStealingPool(workers=1)
    assert plain._takes is not None
    plain.stop()
    pool = Counting(workers=2)
    assert pool._takes is None
    try:

        def parent() -> int:
            child = pool.spawn(lambda: 20)
            return int(pool.join(child)) + 1

        _, handle = pool.submit(parent)
        assert handle is not None and pool.join(handle) == 21
    finally:
        pool.stop()
    assert asked, "the worker loop never asked the subclass's _find_work"
