"""The thirteenth outside review's F8 and C2 (session 45):

* F8 (p05, p59): a check-then-insert cache in a ``WeakValueDictionary`` (``cache.get(k)``, then
  ``cache[k] = o``) and a counter kept in an ``mmap`` (``seek``, ``read_byte``, ``write_byte``),
  both with no lock, were proved "exhaustive ... no data race": the mappings' and the ``mmap``'s
  methods were no accesses. Now they are (``race_objects``): a data race; with a lock, proved.
* C2 (p176, p47): ``--time-limit`` was overrun by the length of a long step (8.7 s for one
  execution under a 5 s limit): the limit was looked at between executions only.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Result, step_deadline
from model_checks.harness.patch import patched
from model_checks.harness.stateful import check_states
from tests.harness import review13_f8_programs as prog
from tests.harness.patched_runs import assert_proved_returning, run_with_outcomes

pytestmark = pytest.mark.timeout(180)

STRATEGIES = ["dpor-ipb", "dfs", "states"]


def _explore(main: Callable[[], object], strategy: str) -> Result:
    if strategy != "states":
        return run_with_outcomes(prog, main, strategy=strategy)
    with patched(prog):
        return check_states(lambda rt: (lambda value: lambda: value)(main()))


def _assert_race_on(result: Result, *words: str) -> None:
    assert result.verdict == "failed" and result.failure is not None, result.report()
    assert result.failure.kind == "data_race", result.report()
    for word in words:
        assert word in result.failure.message, (word, result.failure.message)


# ------------------------------------------------------------------------------------------- F8


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", sorted(prog.WEAK_LOOKUPS))
def test_weak_value_cache_without_a_lock_races(how: str, strategy: str) -> None:
    _assert_race_on(_explore(prog.weak_cache(how, locked=False), strategy), "WeakValueDictionary")


@pytest.mark.parametrize("how", sorted(prog.WEAK_LOOKUPS))
def test_weak_value_cache_with_a_lock_is_proved(how: str) -> None:
    assert_proved_returning(run_with_outcomes(prog, prog.weak_cache(how, locked=True)), True, 2)


def test_weak_key_counter_without_a_lock_races() -> None:
    _assert_race_on(run_with_outcomes(prog, prog.weak_key_racy), "WeakKeyDictionary")


def test_weak_key_looked_up_is_not_kept_alive() -> None:
    """The detector locates a weakly held key by its id: it does not keep it (or its entry)."""
    assert_proved_returning(run_with_outcomes(prog, prog.weak_key_released), 0, 1)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("by_bytes", [True, False])
def test_mmap_counter_without_a_lock_races(by_bytes: bool, strategy: str) -> None:
    _assert_race_on(_explore(prog.mmap_counter(False, by_bytes), strategy), "mmap")


@pytest.mark.parametrize("by_bytes", [True, False])
def test_mmap_counter_with_a_lock_is_proved(by_bytes: bool) -> None:
    assert_proved_returning(run_with_outcomes(prog, prog.mmap_counter(True, by_bytes)), 2, 2)


# ------------------------------------------------------------------------------------------- C2


def test_a_long_step_stops_at_the_time_limit() -> None:
    """One step of a local loop far longer than the limit: the execution is stopped inside it, and
    the verdict is bounded by the limit (before: the loop ran on, to the livelock detector's count
    of opcodes, and the check failed with a "livelock" long past the limit)."""
    result = run_with_outcomes(prog, prog.long_step, time_limit=0.2)
    assert result.verdict == "bounded", result.report()
    assert any(step_deadline.STOPPED in reason for reason in result.bounded_by), result.bounded_by
    assert result.executions == 1 and result.outcomes == set(), result.report()
