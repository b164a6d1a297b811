"""The eleventh outside review's programs on numpy's global generator (row 15, u01: session 43):
two threads seed it and draw, a thread draws from it unseeded, and the CORRECT form, a
``RandomState`` of each thread's own. ``test_review11_numpy.py`` checks them (numpy installed)."""

from __future__ import annotations

import threading

import numpy as np

from tests.harness.program_threads import run_copies, start_then_release

_GATE = threading.Lock()


def _first() -> float:
    return float(np.random.RandomState(7).rand())


def global_seeded() -> bool:
    """u01 (BUGGY): A seeds the global generator with 7, then draws after a gate main releases
    after starting both; B seeds 7 and draws: in some orders A's draw is not seed 7's first. Did
    both threads draw seed 7's first value?"""
    out: dict[str, float] = {}

    def a() -> None:
        np.random.seed(7)
        with _GATE:
            pass
        out["a"] = float(np.random.rand())

    def b() -> None:
        np.random.seed(7)
        out["b"] = float(np.random.rand())

    _GATE.acquire()
    start_then_release(_GATE, a, b)
    return out["a"] == out["b"] == _first()


def private_seeded() -> bool:
    """CORRECT: each thread seeds a ``RandomState(7)`` of its own and draws: seed 7's first."""
    out: list[float] = []
    lock = threading.Lock()

    def draw() -> None:
        value = float(np.random.RandomState(7).rand())
        with lock:
            out.append(value)

    run_copies(draw, 2)
    return out == [_first()] * 2


def drawn_unseeded() -> float:
    """One thread draws from the global generator without seeding it: the value follows the state
    the execution started from (as the check's start found it: one value in every execution)."""
    out: list[float] = []
    run_copies(lambda: out.append(float(np.random.rand())), 1)
    return out[0]
