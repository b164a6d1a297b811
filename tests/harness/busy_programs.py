"""Plain ``threading`` programs whose threads spin on plain data (tests/harness/test_busy_wait.py).
Before session 36 the explorer hung on each spin: it switches threads only at operations."""

from __future__ import annotations

import threading

from tests.harness.program_threads import start_and_join


class Flag:
    def __init__(self) -> None:
        self.done = False


def spin_on_a_flag() -> None:
    """BUG: the spinner reads the flag with no synchronisation (a data race with its setter)."""
    flag = Flag()

    def spinner() -> None:
        while not flag.done:
            pass

    def setter() -> None:
        flag.done = True

    start_and_join(spinner, setter)


def spin_after_a_race() -> None:
    """BUG: a race found in the spinner's own thread, which then spins on a flag never set."""
    seen, never = Flag(), Flag()

    def writer() -> None:
        seen.done = True

    def spinner() -> None:
        if seen.done:
            while not never.done:
                pass

    start_and_join(writer, spinner)


def spin_for_ever() -> None:
    """BUG: nothing ever sets the flag."""
    flag = Flag()
    start_and_join(lambda: _spin(flag))


def _spin(flag: Flag) -> None:
    while not flag.done:
        pass


def long_loop_then_publish() -> None:
    """Correct: each worker sums 30,000 items of its own list (a new location each), then adds
    its total under a lock: work, not a spin."""
    lock = threading.Lock()
    totals: list[int] = []

    def worker() -> None:
        items = list(range(30_000))
        total = 0
        for i in range(len(items)):
            total += items[i]
        with lock:
            totals.append(total)

    start_and_join(worker, worker)
    assert totals == [449_985_000, 449_985_000]
