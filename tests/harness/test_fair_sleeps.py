"""Fairness at sleeps (``Options.fair_sleeps``, docs/harness.md "Fairness at sleeps"): a thread
that sleeps gives way to the threads able to run then, so a correct spin-wait ends instead of
being reported a livelock, a buggy one is still caught, and the verdict says it covers the fair
schedules."""

from __future__ import annotations

import sys
import threading
import time
from functools import partial

import pytest

from model_checks.harness import patched
from tests.harness.patched_runs import assert_fails, run_patched


def spin_until_set() -> None:
    """A worker polls an event with a sleep between polls: correct, it ends once main sets it."""
    ready = threading.Event()
    seen: list[int] = []

    def worker() -> None:
        while not ready.is_set():
            time.sleep(0.01)
        seen.append(1)

    t = threading.Thread(target=worker)
    t.start()
    ready.set()
    t.join()
    assert seen == [1]


def spin_flag_set_too_early() -> None:
    """The same spin-wait, but main publishes the flag before the data: the worker may read the
    data unset (a real bug, found under fairness)."""
    ready = threading.Event()
    lock = threading.Lock()
    box: dict[str, int] = {}

    def worker() -> None:
        while not ready.is_set():
            time.sleep(0)
        with lock:
            assert box.get("v") == 1, "read before written"

    t = threading.Thread(target=worker)
    t.start()
    ready.set()
    with lock:
        box["v"] = 1
    t.join()


def sleep_taken_for_synchronisation() -> None:
    """Buggy: the reader sleeps and assumes main has written by then. A thread's first sleep holds
    nothing back, so the schedule where the reader goes first is run (an outside review found it
    hidden when every sleep gave way)."""
    lock = threading.Lock()
    data = [0]

    def reader() -> None:
        time.sleep(0.01)
        with lock:
            assert data[0] == 1, "the sleep was not long enough"

    t = threading.Thread(target=reader)
    t.start()
    with lock:
        data[0] = 1
    t.join()


def busy_wait_without_sleep() -> None:
    """A busy-wait with no sleep: CHESS's rule holds back only a thread that sleeps, so the
    schedule that never switches away is still a livelock."""
    lock = threading.Lock()
    box = {"go": False}

    def worker() -> None:
        while True:
            with lock:
                if box["go"]:
                    return

    t = threading.Thread(target=worker)
    t.start()
    with lock:
        box["go"] = True
    t.join()


run = partial(run_patched, sys.modules[__name__])


@pytest.mark.timeout(120)
@pytest.mark.parametrize("strategy", ["dpor-ipb", "dpor", "dfs"])
def test_a_correct_spin_wait_with_a_sleep_is_proved(strategy: str) -> None:
    result = run(spin_until_set, strategy=strategy)
    assert result.verdict == "exhaustive", result.report()
    assert result.fair
    assert "fair at sleeps" in result.summary()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("strategy", ["random", "pct"])
def test_sampling_strategies_run_fair_schedules_too(strategy: str) -> None:
    result = run(spin_until_set, strategy=strategy, max_executions=200, seed=3)
    assert result.failure is None, result.report()


@pytest.mark.timeout(120)
def test_without_fairness_the_spin_wait_is_a_livelock() -> None:
    result = run(spin_until_set, fair_sleeps=False)
    assert result.failure is not None and result.failure.kind == "livelock", result.report()
    assert not result.fair


@pytest.mark.timeout(120)
def test_a_bug_behind_a_spin_wait_is_still_found() -> None:
    result = run(spin_flag_set_too_early)
    assert_fails(result, "assertion", "read before written")


@pytest.mark.timeout(120)
def test_a_sleep_taken_for_synchronisation_is_caught() -> None:
    result = run(sleep_taken_for_synchronisation)
    assert_fails(result, "assertion", "not long enough")


@pytest.mark.timeout(120)
def test_a_busy_wait_without_a_sleep_is_still_a_livelock() -> None:
    result = run(busy_wait_without_sleep)
    # the words say what the schedule is and how to make the loop give way
    assert_fails(result, "livelock", "ran its last", "steps alone (also live: main)", "time.sleep(0)")


@pytest.mark.timeout(120)
def test_a_program_without_sleeps_is_not_marked_fair() -> None:
    def program() -> None:
        lock = threading.Lock()

        def hold() -> None:
            with lock:
                pass

        threads = [threading.Thread(target=hold) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    result = run(program)
    assert result.verdict == "exhaustive" and not result.fair, result.report()
    assert "fair" not in result.summary()


@pytest.mark.timeout(120)
def test_state_pruning_keeps_fairness_in_the_state() -> None:
    import sys

    from model_checks.harness import check_states

    with patched(sys.modules[__name__]):
        result = check_states(lambda rt: spin_until_set())
    assert result.verdict == "exhaustive", result.report()


def sleeps_holding_the_lock() -> None:
    """A livelock that sleeps: main polls with a sleep while holding the lock the worker needs
    to set the flag. The report must not advise a sleep (the loop has one)."""
    lock = threading.Lock()
    box = {"go": False}

    def worker() -> None:
        with lock:
            box["go"] = True

    t = threading.Thread(target=worker)
    t.start()
    with lock:
        while not box["go"]:
            time.sleep(0.01)
    t.join()


@pytest.mark.timeout(120)
def test_a_livelock_that_sleeps_is_told_from_a_busy_wait() -> None:
    result = run(sleeps_holding_the_lock)
    failure = assert_fails(result, "livelock", "sleeping in them")
    assert "time.sleep(0)" not in failure.message, failure.message
