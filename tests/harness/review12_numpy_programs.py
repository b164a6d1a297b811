"""The twelfth outside review's v39 (``test_review12_files.py``): a numpy generator made at import
(``rng = default_rng(seed)`` at module level), or by ``main``, drawn by two threads. Its state is
shared: which thread draws its first value follows the order of the draws. Each program returns
whether ``b`` drew the generator's first value (``a`` draws after a gate main releases after
starting both: the first schedule has ``a`` draw first)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from tests.harness.program_threads import start_then_release

GATE = threading.Lock()
rng = np.random.default_rng(7)
legacy = np.random.RandomState(7)


def _first(make: Callable[[], object], draw: Callable[[object], object]) -> object:
    return draw(make())


def _integer(g: object) -> int:
    return int(g.integers(0, 1 << 30))  # type: ignore[attr-defined]


def _uniform(g: object) -> float:
    return float(g.rand())  # type: ignore[attr-defined]


FIRST = _first(lambda: np.random.default_rng(7), _integer)
LEGACY_FIRST = _first(lambda: np.random.RandomState(7), _uniform)


def _two_draws(draw: Callable[[], object], first: object) -> bool:
    out: dict[str, object] = {}

    def a() -> None:
        with GATE:
            pass
        out["a"] = draw()

    def b() -> None:
        out["b"] = draw()

    GATE.acquire()
    start_then_release(GATE, a, b)
    return out["b"] == first


def imported_generator() -> bool:
    """v39 (BUGGY for a program that wants ``b`` to draw first)."""
    return _two_draws(lambda: _integer(rng), FIRST)


def imported_random_state() -> bool:
    """The same with a ``RandomState`` made at import."""
    return _two_draws(lambda: _uniform(legacy), LEGACY_FIRST)


def generator_of_main() -> bool:
    """A generator ``main`` makes and both threads draw from."""
    mine = np.random.default_rng(7)
    return _two_draws(lambda: _integer(mine), FIRST)


def one_thread_draws_imported() -> tuple[int, bool]:
    """One thread draws from the generator made at import: its first value in every execution
    (each starts from the state patching found), and it is still a ``Generator``."""
    return _integer(rng), isinstance(rng, np.random.Generator)
