"""``--time-limit`` overrun that grew with the executions (review 14, C3; session 48): the race
detector's ``CHECKED`` kept each execution's dict keys, here its ``Future`` objects, and through
them that execution's scheduler, threads and objects. A search kept every execution it ran; the
collector's full passes walked them, and the process's exit collected them all after the verdict
(p102: 17 s of wall time after a 30 s limit). What a search leaves behind must not grow with its
executions."""

from __future__ import annotations

import gc

import pytest

from model_checks.harness import check, patched
from model_checks.harness.strategies.observed import CHECKED
from model_checks.harness.strategies.search_tree import Frame
from tests.harness import review14_futures_dict as prog
from tests.harness.patched_runs import run_patched

pytestmark = pytest.mark.timeout(120)

EXECUTIONS = 40


def _executions() -> set[int]:
    return {id(o) for o in gc.get_objects() if type(o).__name__ == "Execution"}


def test_a_search_keeps_none_of_its_ended_executions() -> None:
    """Before: 39 of the 40 executions were still alive after the check (one per execution)."""
    gc.collect()
    before = _executions()  # (an earlier test's last execution may still be held)
    result = run_patched(prog, prog.main, max_executions=EXECUTIONS, races=True)
    assert result.executions == EXECUTIONS and result.failure is None, result.report()
    gc.collect()
    left = _executions() - before
    assert len(left) <= 1, (len(left), result.report())


def test_the_lifetime_looks_keep_ids_and_names_only() -> None:
    """``CHECKED`` holds ids, ``str`` keys and None: no object of the program (before: the
    futures keying the program's dict)."""
    run_patched(prog, prog.main, max_executions=3, races=True)
    for seen in CHECKED:
        parts = seen if isinstance(seen, tuple) else (seen,)
        assert all(part is None or type(part) in (int, str) for part in parts), seen


def test_a_finished_search_lets_its_tree_go_at_once() -> None:
    """``dpor-ipb``'s tree (every pending node) hung from the last execution, a reference cycle,
    until the full collection ``patched`` makes at its end: walked after the verdict, it grew
    with the executions (1.3 s after a 20 s limit on p102). Before: about 3,000 nodes of this
    search were still there when ``check`` returned."""
    with patched(prog):
        result = check(lambda rt: prog.main(), max_executions=EXECUTIONS * 5)
        nodes = sum(type(o) is Frame for o in gc.get_objects())
    assert result.executions == EXECUTIONS * 5 and result.failure is None, result.report()
    assert nodes == 0, nodes
