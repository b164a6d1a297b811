"""A real lock in the state the search fingerprints: one the harness does not control, reached
through the explored function's globals (a test module's, which imports programs that made
locks at import). It made every state unreadable (``Opaque``): the state search ran as plain DFS
and said so only in its counts ("0 abstract states"). Whether it is held is its whole state."""

from __future__ import annotations

import threading

import pytest

from model_checks.harness import patched
from model_checks.harness.rt.heap_walk import _Canon
from model_checks.harness.stateful import StatefulResult, check_states
from tests.harness import draw_spin_program

pytestmark = pytest.mark.timeout(120)

OUTSIDE = threading.Lock()  # made at import, by no module the check patches


def test_a_real_lock_reached_from_the_explored_functions_globals_leaves_states_readable() -> None:
    with patched(draw_spin_program):
        # (the explored function is this module's: the state reads its globals, OUTSIDE among them)
        result = check_states(lambda rt: draw_spin_program.main(), seed=0)
    assert isinstance(result, StatefulResult)
    assert result.states > 0, result.summary()
    assert result.unhashed == 0, result.summary()


def test_a_real_lock_reads_as_held_or_not() -> None:
    held, free = threading.Lock(), threading.Lock()
    held.acquire()
    try:
        assert _Canon().value(held) != _Canon().value(free)
        assert _Canon().value(free) == _Canon().value(threading.Lock())
    finally:
        held.release()
