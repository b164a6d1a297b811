"""DPOR takes a read of the virtual clock and another thread's timeout, which moves it, as
dependent (session 39; docs/harness.md, "The DPOR algorithm", *the virtual clock*). Each
program below was proved by ``dpor`` and ``dpor-ipb`` after one order before; plain DFS found
the other. The generated programs of ``test_harness_differential.py`` (``generate_with_clock``)
hold the search to DFS's outcomes."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Options, Result, check, patched
from model_checks.harness.options import Strategy
from model_checks.harness.rt.clock import MONOTONIC_ORIGIN
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.stateful import check_states
from tests.harness import clock_programs

STRATEGIES: list[Strategy] = ["dpor", "dpor-ipb", "dfs"]


def _read_beside_a_timeout(rt: ControlledRuntime) -> object:
    never_set = rt.event("e")
    seen: list[float] = []

    def wait() -> None:
        never_set.wait(1.0)

    waiter = rt.start_thread(wait, "waiter")
    reader = rt.start_thread(lambda: seen.append(rt.monotonic()), "reader")
    waiter.join()
    reader.join()
    return lambda: seen[0] - MONOTONIC_ORIGIN  # (the clock starts there: a real one's uptime)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_clock_read_and_another_threads_timeout_are_explored_in_both_orders(strategy: Strategy) -> None:
    result = check(_read_beside_a_timeout, Options(strategy=strategy))
    assert result.verdict == "exhaustive"
    assert result.outcomes == {0.0, 1.0}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sleep_sets", [True, False])
def test_the_state_search_explores_both_orders(sleep_sets: bool) -> None:
    result = check_states(_read_beside_a_timeout, Options(minimize=False), sleep_sets=sleep_sets)
    assert result.verdict == "exhaustive"
    assert result.outcomes == {0.0, 1.0}


def _patched(program: Callable[[], None], strategy: Strategy) -> Result:
    with patched(clock_programs):
        return check(lambda rt: program(), Options(strategy=strategy, time_limit=60))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(
    ("program", "words"),
    [
        (clock_programs.read_against_a_timeout, "the reader ran 1.0 s after the start"),
        (clock_programs.deadline_against_a_timeout, "the plan's deadline had passed"),
    ],
)
def test_a_plain_threading_program_reading_the_clock_fails_in_the_other_order(
    program: Callable[[], None], words: str, strategy: Strategy
) -> None:
    result = _patched(program, strategy)
    assert result.verdict == "failed", result.report()
    assert result.failure is not None and result.failure.kind == "assertion"
    assert words in result.report()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_read_ordered_by_a_lock_is_proved(strategy: Strategy) -> None:
    result = _patched(clock_programs.read_under_the_waiters_lock, strategy)
    assert result.verdict == "exhaustive", result.report()
