"""Plain ``threading`` programs whose result depends on reading the clock before or after another
thread's timeout (patch mode reads the virtual clock; ``test_clock_dependency.py``)."""

from __future__ import annotations

import threading
import time

from tests.harness.program_threads import join_all, start_and_join


def read_against_a_timeout() -> None:
    """The reader's ``monotonic()`` and the waiter's timeout touch no common object: before
    session 39 DPOR ran them in one order and proved the assertion."""
    never_set = threading.Event()
    seen: list[float] = []
    start = time.monotonic()
    waiter = threading.Thread(target=never_set.wait, args=(1.0,))
    join_all([waiter, threading.Thread(target=lambda: seen.append(time.monotonic() - start))])
    assert seen[0] < 1.0, f"the reader ran {seen[0]} s after the start"


def deadline_against_a_timeout() -> None:
    """A deadline taken from the clock (``time.time() + 1``) before or after another thread's
    timeout moved it: the check after the join sees which."""
    never_set = threading.Event()
    deadlines: list[float] = []
    waiter = threading.Thread(target=never_set.wait, args=(2.0,))
    join_all([waiter, threading.Thread(target=lambda: deadlines.append(time.time() + 1.0))])
    assert deadlines[0] > time.time(), "the plan's deadline had passed when both were done"


def read_under_the_waiters_lock() -> None:
    """The same read, ordered after the timeout by a lock the waiter holds around its wait: one
    answer in every order (proved)."""
    lock = threading.Lock()
    never_set = threading.Event()
    seen: list[float] = []
    start = time.monotonic()
    lock.acquire()

    def wait_then_release() -> None:
        never_set.wait(1.0)
        lock.release()

    def read_after() -> None:
        with lock:
            seen.append(time.monotonic() - start)

    start_and_join(wait_then_release, read_after)
    assert seen[0] >= 1.0
