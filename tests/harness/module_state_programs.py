"""Plain ``threading`` programs on objects a module made at import that patch mode puts back before
each execution (``harness/patch_state.py``): an ``array.array``, a ``types.SimpleNamespace`` and an
in-memory stream were kept as the first execution left them before session 38 (a fifth outside
review), so a later execution started from a state no real run starts from: a path a real run
takes was never explored (a false proof), or a correct locked program failed (a false alarm)."""

from __future__ import annotations

import array
import io
import threading
import types
from collections.abc import Callable

from tests.harness.expected import Fails
from tests.harness.program_threads import start_and_join

lock = threading.Lock()
FLAGS = types.SimpleNamespace(first=True)
SLOTS = array.array("b", [1])
LOG = io.StringIO()
TOTALS = array.array("i", [0])
COUNTS = types.SimpleNamespace(n=0)
SHARED = io.StringIO()


def _first_claim(claimed: Callable[[], bool]) -> None:
    """Two threads each claim a first turn under the lock; the program assumes "a" wins."""
    winners: list[str] = []

    def claim(name: str) -> None:
        with lock:
            if claimed():
                winners.append(name)

    start_and_join(lambda: claim("a"), lambda: claim("b"))
    assert winners != ["b"], "b claimed the first turn"


def namespace_first_claim() -> None:
    def take() -> bool:
        first: bool = FLAGS.first
        FLAGS.first = False
        return first

    _first_claim(take)


def array_first_claim() -> None:
    def take() -> bool:
        first = SLOTS[0] == 1
        SLOTS[0] = 0
        return first

    _first_claim(take)


def stream_first_claim() -> None:
    def take() -> bool:
        first = not LOG.getvalue()
        LOG.write("x")
        return first

    _first_claim(take)


def locked_array_total() -> None:
    def add() -> None:
        with lock:
            TOTALS[0] += 1

    start_and_join(add, add)
    assert TOTALS[0] == 2, TOTALS


def locked_namespace_count() -> None:
    def add() -> None:
        with lock:
            COUNTS.n += 1

    start_and_join(add, add)
    assert COUNTS.n == 2, COUNTS


def locked_shared_stream() -> None:
    def put(i: int) -> None:
        with lock:
            SHARED.write(f"own{i}")

    start_and_join(lambda: put(0), lambda: put(1))
    text = SHARED.getvalue()
    assert sorted([text[:4], text[4:]]) == ["own0", "own1"], text


FOUND = [
    Fails(namespace_first_claim, "assertion", "b claimed the first turn"),
    Fails(array_first_claim, "assertion", "b claimed the first turn"),
    Fails(stream_first_claim, "assertion", "b claimed the first turn"),
]
PROVED = [locked_array_total, locked_namespace_count, locked_shared_stream]
