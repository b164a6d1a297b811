"""The pool's parking under the harness: a worker sleeps on its own semaphore, and the re-check stays.

``PoolBase._park`` registers, re-checks and marks the worker parked under the park lock, then
sleeps on the worker's semaphore, which the waker that unregisters it (``_unpark``, under the
lock) releases once: a wake takes no second park-lock round trip. These tests show DPOR proves
the pool with it (the race detector on too) and still catches a park that looks again before
registering, or not at all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from model_checks.designs.work_stealing.harness import SCENARIOS, program
from model_checks.designs.work_stealing.reference_mutants import ParkWithoutRecheckPool
from model_checks.harness.api import check
from model_checks.harness.design_rows import quiet_reference
from model_checks.harness.options import Options, Result
from reference.work_stealing import TaskHandle, WorkStealingPool
from reference.work_stealing_task import TaskFailed


def _explore(name: str, build: Callable[..., WorkStealingPool] | None = None, races: bool = False) -> Result:
    with quiet_reference():  # a hung pool logs each execution's fault
        return check(program(name, build), Options(strategy="dpor", time_limit=120, races=races))


class _RecheckBeforeRegistering(WorkStealingPool):
    """BUG: looks again, then registers: a submit between the two sees nobody to wake."""

    def _recheck(self, w: int) -> bool:
        return False  # the look is made below, before the registration

    def _park(self, w: int, joining: TaskHandle | None) -> bool:
        if WorkStealingPool._recheck(self, w):
            return True
        return super()._park(w, joining)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("name", ["pool/park-wake", "pool/fork-join", "pool/stop-discard"])
def test_the_pool_with_semaphore_sleep_is_exhaustive(name: str) -> None:
    result = _explore(name)
    assert result.failure is None, result.report()
    assert result.verdict == "exhaustive", (result.verdict, result.executions)


@pytest.mark.timeout(240)
def test_the_semaphore_sleep_is_exhaustive_with_the_race_detector() -> None:
    result = _explore("pool/park-wake", races=True)
    assert result.failure is None, result.report()
    assert result.verdict == "exhaustive" and result.races


@pytest.mark.timeout(240)
@pytest.mark.parametrize("bug", [ParkWithoutRecheckPool, _RecheckBeforeRegistering], ids=lambda c: c.__name__)
def test_the_recheck_after_registering_is_needed(bug: type[WorkStealingPool]) -> None:
    result = _explore("pool/park-wake", bug)  # a submit races the worker's park
    assert result.failure is not None, f"{bug.__name__} missed: {result.verdict}"
    assert result.failure.kind in ("lost_wakeup", "deadlock"), result.failure.message


def test_a_stopped_pool_leaves_no_worker_registered_or_parked() -> None:
    pool = WorkStealingPool(workers=3)
    pool.stop()
    assert pool._sleepers.load() == 0 and not any(pool._sleeping) and not any(pool._parked)


@pytest.mark.timeout(240)
def test_the_two_worker_park_wake_proof_is_a_verify_row_and_a_park_without_recheck_is_caught() -> None:
    # The proof (27,045 executions, about 9 CPU s) is the `verify --quick` row "work-stealing
    # scenario pool/park-wake-2w", whose verdict tests/architecture/test_verify_rows.py requires to
    # be "exhaustive (synchronisation points only)": the same program and options as ``_explore``
    # (held here), run once.
    proof = SCENARIOS["pool/park-wake-2w"]
    assert (proof.verify, proof.expect, proof.quick_expect) == (True, "exhaustive", None)
    assert proof.quick_options == {"strategy": "dpor", "time_limit": 120, "races": False}
    assert proof.build.func is program and proof.build.args == ("pool/park-wake-2w",)  # type: ignore[attr-defined]
    caught = _explore("pool/park-wake-2w", ParkWithoutRecheckPool)
    assert caught.failure is not None and caught.failure.kind == "lost_wakeup", caught.verdict


class _RecheckRaisesOnce(WorkStealingPool):
    """A re-check that raises once when armed (a broken deque or tracer): the park must be undone."""

    armed = False
    raised = False

    def _recheck(self, w: int) -> bool:
        if self.armed and not self.raised:
            self.raised = True
            raise RuntimeError("re-check failed")
        return super()._recheck(w)


@pytest.mark.timeout(60)
def test_a_join_whose_park_raises_leaves_no_registration_behind() -> None:
    # Real threads, two workers: the other worker steals the child and holds it, so the root's
    # join finds nothing and parks, and that park's re-check raises. The root fails with it (its
    # worker goes on); the registration must be undone: the join's count, the joiner, the sleeper.
    pool = _RecheckRaisesOnce(workers=2)
    started, release = threading.Event(), threading.Event()

    def child() -> int:
        started.set()
        release.wait(10)
        return 1

    def root() -> int:
        c = pool.spawn(child)
        assert started.wait(10)
        pool.armed = True
        return int(pool.join(c))

    with quiet_reference():  # the root's failure is logged; the test asserts it instead
        _, task = pool.submit(root)
        assert task is not None
        with pytest.raises(TaskFailed):
            pool.join(task)
        assert pool.raised
        release.set()
        _, after = pool.submit(lambda: 2)
        assert after is not None and pool.join(after) == 2  # the worker went on
        assert pool.stop().name == "SUCCESS"
    assert pool._joiners.load() == 0
    assert pool._sleepers.load() == 0
    assert not any(pool._sleeping) and not any(pool._parked)


def test_a_pool_that_forgets_the_recheck_cannot_be_built() -> None:
    # Parking's re-check is abstract: a pool without one would park every worker without looking.
    from reference.work_stealing_base import PoolBase

    assert "_recheck" in PoolBase.__abstractmethods__
    namespace = {k: v for k, v in vars(WorkStealingPool).items() if k != "_recheck"}
    forgetful = type("Forgetful", WorkStealingPool.__bases__, namespace)
    with pytest.raises(TypeError, match="_recheck"):
        forgetful(workers=2)
