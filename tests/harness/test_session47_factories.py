"""Session 47, outside review 14 (A1, A2, C1): a ``threading`` factory captured at import stayed
real while patched: ``field(default_factory=threading.Lock)`` (the dataclass's ``__init__`` holds
it in a closure cell), ``defaultdict(threading.Lock)``, ``lock_factory=threading.Lock`` as a
default or a class attribute, ``thread_cls=threading.Thread``, ``partial(threading.Thread)``. Its
real lock was invisible (a false data race beside ``with lock:``) or blocked the check past its
time limit; its real thread, a false deadlock in ``start``. Now each is replaced where it is held,
and put back when patching ends."""

from __future__ import annotations

import pytest

from model_checks.harness import patched
from tests.harness import session47_factory_programs as prog
from tests.harness.patched_runs import (
    assert_fails,
    assert_proved_returning,
    assert_race,
    run_with_outcomes,
)

pytestmark = pytest.mark.timeout(60)

LOCK_IDIOMS = sorted(prog.LOCK_MAKERS)
THREAD_IDIOMS = ["default_argument", "partial"]


@pytest.mark.parametrize("idiom", LOCK_IDIOMS)
def test_a_lock_from_a_captured_factory_orders_and_is_proved(idiom: str) -> None:
    result = run_with_outcomes(prog, lambda: prog.bump(idiom, split=False), time_limit=30)
    assert_proved_returning(result, 2, executions=2)


@pytest.mark.parametrize("idiom", LOCK_IDIOMS)
def test_a_lock_from_a_captured_factory_is_scheduled_without_races(idiom: str) -> None:
    # a real lock held across the sleep blocked the greenlets' one OS thread: the check hung
    result = run_with_outcomes(prog, lambda: prog.bump(idiom, split=False), time_limit=30, races=False)
    assert result.verdict == "exhaustive" and result.outcomes == {2}, result.report()


@pytest.mark.parametrize("idiom", LOCK_IDIOMS)
def test_a_lost_update_between_two_holds_of_the_lock_is_found(idiom: str) -> None:
    result = run_with_outcomes(prog, lambda: prog.bump(idiom, split=True), time_limit=30)
    assert_fails(result, "assertion", "1")


@pytest.mark.parametrize("idiom", THREAD_IDIOMS)
def test_threads_from_a_captured_thread_class_are_proved(idiom: str) -> None:
    result = run_with_outcomes(prog, lambda: prog.count_in_threads(idiom, locked=True), time_limit=30)
    assert_proved_returning(result, 2, executions=2)
    result = run_with_outcomes(
        prog, lambda: prog.count_in_threads(idiom, locked=True), time_limit=30, races=False
    )
    assert result.verdict == "exhaustive" and result.outcomes == {2}, result.report()


@pytest.mark.parametrize("idiom", THREAD_IDIOMS)
def test_a_lost_update_in_threads_from_a_captured_thread_class_is_a_race(idiom: str) -> None:
    # (it was a false deadlock in ``Thread.start``: a real thread started by a controlled one)
    result = run_with_outcomes(prog, lambda: prog.count_in_threads(idiom, locked=False), time_limit=30)
    assert_race(result, prog, "list[0]", "counts[0] = v + 1", "v = counts[0]")


def _same(a: object, b: object) -> bool:
    """The same objects: identical, or containers holding identical ones."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(a[k] is b[k] for k in a)
    return a is b


def test_every_captured_factory_is_replaced_while_patched_and_put_back_after() -> None:
    before = prog.captured()
    with patched(prog):
        during = prog.captured()
        bound = prog.ClassAttribute().lock  # (outside a controlled thread: a real lock, no ``self``)
    assert type(bound).__name__ == "lock", bound
    for where, real in before.items():
        assert not _same(during[where], real), (where, during[where])
    run_with_outcomes(prog, lambda: prog.bump("defaultdict", split=False), time_limit=30)
    after = prog.captured()
    for where, real in before.items():
        assert _same(after[where], real), (where, after[where], real)


@pytest.mark.parametrize("idiom", ["dataclass_rlock", "class_attribute_rlock"])
def test_an_rlock_factory_is_the_programs_once_numpy_random_is_imported(idiom: str) -> None:
    # numpy's ``bit_generator.RLock`` is ``threading.RLock``: its draw lock (no exclusion) was
    # taken for the program's, so the correct program failed and the lost update was a race
    pytest.importorskip("numpy.random")
    result = run_with_outcomes(prog, lambda: prog.bump(idiom, split=False), time_limit=30)
    assert_proved_returning(result, 2, executions=2)
    result = run_with_outcomes(prog, lambda: prog.bump(idiom, split=True), time_limit=30)
    assert_fails(result, "assertion", "1")
