"""Plain ``threading`` programs whose outcome follows the order of draws on a generator two
threads share (session 40's eighth review: r060, r067, r082, r005, r003), each with its real-run
evidence. CPython's ``random`` module functions share one hidden generator, and a
``random.Random`` is one object whichever thread draws from it."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def _two(work: object) -> None:
    ts = [threading.Thread(target=work, args=(name,)) for name in "ab"]  # type: ignore[arg-type]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def _draws_of_a_and_b(draw: Callable[[], T]) -> dict[str, T]:
    """What threads ``a`` and ``b`` (started in that order) each got from ``draw()``."""
    got: dict[str, T] = {}

    def w(name: str) -> None:
        got[name] = draw()

    _two(w)
    return got


def shared_instance() -> None:
    """r060/r067 (BUGGY; r067: 42 of 50 real runs fail): two threads draw from one seeded
    ``Random``; the assertion holds only when ``a`` draws first."""
    rng = random.Random(42)
    got = _draws_of_a_and_b(rng.random)
    assert got["a"] == random.Random(42).random(), got


def shared_unseeded_instance() -> None:
    """r061 (BUGGY): as ``shared_instance`` with a ``Random()`` made with no seed (its seed the
    main thread's entropy): ``a`` must draw its first value."""
    rng = random.Random()
    first = random.Random()
    first.setstate(rng.getstate())
    got = _draws_of_a_and_b(rng.random)
    assert got["a"] == first.random(), got


def shared_instance_choice() -> None:
    """BUGGY: as ``shared_instance``, through ``choice`` (a Python-level method on
    ``getrandbits``)."""
    rng = random.Random(7)
    got = _draws_of_a_and_b(lambda: rng.choice(range(1 << 30)))
    assert got["a"] == random.Random(7).choice(range(1 << 30)), got


def module_draws_in_two_threads() -> None:
    """BUGGY: the module's functions share CPython's one generator: after ``random.seed(5)`` the
    first draw of either thread is ``Random(5)``'s first value, so ``b`` gets it in some orders."""
    random.seed(5)
    got = _draws_of_a_and_b(lambda: random.random())
    assert got["a"] == random.Random(5).random(), got


def seed_each_thread() -> None:
    """r082 (BUGGY, 36 of 50 real runs fail): each thread seeds the module's generator with 5 and
    draws; another thread's seed or draw in between changes the value."""

    def seeded_draw() -> float:
        random.seed(5)
        return random.random()

    got = _draws_of_a_and_b(seeded_draw)
    assert got["a"] == got["b"], got


def seed_in_worker() -> None:
    """r005 (BUGGY, 200 of 200 real runs fail): the worker's ``random.seed(1)`` reaches main's
    draw after the join."""
    t = threading.Thread(target=lambda: random.seed(1))
    t.start()
    t.join()
    assert random.random() != random.Random(1).random(), "reseeded by the worker"


def seed_in_main(out: list[float]) -> None:
    """r003 (CORRECT, 200 of 200 real runs pass): main seeds, the worker's draw is that seed's."""
    random.seed(7)
    t = threading.Thread(target=lambda: out.append(random.random()))
    t.start()
    t.join()
    assert out[-1] == random.Random(7).random(), out


def own_generators(rounds: int = 20) -> None:
    """Correct: each worker draws from a generator of its own, then adds under a lock. Its
    draws are independent of the other thread's steps: DPOR runs as many executions as without
    them (``counter_only``)."""
    lock = threading.Lock()
    total = [0]

    def w(name: str) -> None:
        rng = random.Random(name)
        for _ in range(rounds):
            rng.random()
        with lock:
            total[0] += 1

    _two(w)
    assert total[0] == 2


def counter_only() -> None:
    """``own_generators`` with no draws."""
    own_generators(0)
