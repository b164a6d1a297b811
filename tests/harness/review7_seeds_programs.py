"""Plain ``threading`` programs whose behaviour follows a value the explorer did not choose
(session 40's review of session 39's seventh review programs, p154 and p155): a lock order
picked by a random draw, by the OS's entropy, or by the iteration order of a set of strings (the
str hash seed). Each buggy one deadlocks in real runs for some draws or some ``PYTHONHASHSEED``
(p154: 46 of 100 real runs hung; p155: every run under seeds 1 and 3, none under 0 and 2)."""

from __future__ import annotations

import os
import random
import secrets
import threading
import time
import uuid
from collections.abc import Callable

from tests.harness.program_threads import run_copies

A = threading.Lock()
B = threading.Lock()
LOCKS = {"alpha": threading.Lock(), "beta": threading.Lock()}


def _against_main(pick_first_a: Callable[[], bool]) -> None:
    """A worker takes A and B in the order ``pick_first_a`` draws; main takes A then B."""

    def worker() -> None:
        first, second = (A, B) if pick_first_a() else (B, A)
        with first:
            time.sleep(0.001)
            with second:
                pass

    t = threading.Thread(target=worker)
    t.start()
    with A:
        time.sleep(0.001)
        with B:
            pass
    t.join()


def random_lock_order() -> None:
    """p154 (BUGGY): the order follows ``random.random()``; the (B, A) order deadlocks."""
    _against_main(lambda: random.random() < 0.5)


def urandom_lock_order() -> None:
    """BUGGY: the order follows a byte of ``os.urandom``."""
    _against_main(lambda: os.urandom(1)[0] % 2 == 0)


def unseeded_instance_lock_order() -> None:
    """BUGGY: the order follows a draw of a ``random.Random()`` made with no seed."""
    _against_main(lambda: random.Random().random() < 0.5)


def uuid4_lock_order() -> None:
    """BUGGY: the order follows a bit of ``uuid.uuid4()`` (the OS's entropy)."""
    _against_main(lambda: uuid.uuid4().int % 2 == 0)


def secrets_lock_order() -> None:
    """BUGGY: the order follows ``secrets.randbelow(2)`` (``SystemRandom``: the OS's entropy)."""
    _against_main(lambda: secrets.randbelow(2) == 0)


def jitter_counter(total: list[int]) -> None:
    """Correct: two threads sleep a random jitter, then add under a lock."""
    counter = [0]
    lock = threading.Lock()

    def work() -> None:
        time.sleep(random.random() / 100)
        with lock:
            counter[0] += 1

    run_copies(work)
    total.append(counter[0])
    assert counter[0] == 2


def seeded_draws(seen: list[float]) -> None:
    """A program that seeds the module's generator itself: its draws are the seed's."""
    random.seed(123)
    seen.append(random.random())


def _take(names: object) -> None:
    held = []
    for name in names:  # type: ignore[attr-defined]
        LOCKS[name].acquire()
        held.append(LOCKS[name])
        time.sleep(0.001)
    for lock in reversed(held):
        lock.release()


def set_order_locks() -> None:
    """p155 (BUGGY): one thread takes the locks in a set's order (the str hash seed's), the
    other sorted: under the seeds where the set order is not the sorted one, they deadlock."""
    t1 = threading.Thread(target=_take, args=(set(LOCKS),))
    t2 = threading.Thread(target=_take, args=(sorted(LOCKS),))
    t1.start()
    t2.start()
    t1.join()
    t2.join()
