"""Programs for tests/harness/test_session47_linecache.py: four that fail and never touch
``linecache`` (a data race, an assertion, an exception in a thread, an exit status), whose reports
the harness formats from this file's lines as a step ends, and one whose threads do change
``linecache.cache``."""

from __future__ import annotations

import linecache
import sys
import threading

from tests.harness.program_threads import run_copies, start_and_join


class Box:
    value = 0


def racy() -> None:
    box = Box()

    def bump() -> None:
        box.value = box.value + 1  # (no lock: a data race)

    run_copies(bump)


def asserting() -> None:
    seen: list[int] = []
    lock = threading.Lock()

    def add(n: int) -> None:
        with lock:
            seen.append(n)

    start_and_join(lambda: add(1), lambda: add(2))
    assert seen == [1, 2], seen  # (fails when the second thread takes the lock first)


def raising() -> None:
    stock = {"item": 1}
    lock = threading.Lock()

    def take() -> None:
        with lock:
            stock.pop("item")  # (the second thread's raises KeyError)

    run_copies(take)


def exiting() -> None:
    """The main thread ends the program with a status once its thread is done."""
    start_and_join(Box)
    sys.exit(3)


def reading_lines() -> None:
    """Each thread drops this file's lines from ``linecache`` and reads them again: a real change
    of process-wide state."""
    lock = threading.Lock()

    def read() -> None:
        with lock:
            linecache.cache.pop(__file__, None)
            linecache.getline(__file__, 1)

    run_copies(read)
