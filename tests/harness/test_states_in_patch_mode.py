"""The state search in patch mode fingerprints the states of ordinary programs (session 44: since
session 41 it fingerprinted none, and ran as plain DFS with sleep sets)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from model_checks.harness.options import Options
from model_checks.harness.patch import patched
from model_checks.harness.stateful import StatefulResult, check_states
from tests.harness import states_in_patch_mode_programs as prog
from tests.harness.explore_runs import explore_command
from tests.harness.patched_runs import run_with_outcomes

pytestmark = pytest.mark.timeout(240)


def _states(main: Callable[[], object]) -> StatefulResult:
    with patched(prog):
        result = check_states(lambda rt: (lambda value: lambda: value)(main()), Options(minimize=False))
    assert isinstance(result, StatefulResult)
    assert result.verdict == "exhaustive", result.report()
    return result


def test_a_plain_programs_states_are_all_fingerprinted() -> None:
    """Patch mode swaps ``sys``'s class (``patch_streams._SysWatch``, to see a rebinding of its
    streams); the fingerprint took a module of another class for an object it cannot read and
    refused every state that reached ``sys``: every state, as the threads' frames do."""
    result = _states(prog.plain_counters)
    assert set(result.outcomes) == {4}
    assert result.unhashed == 0 and result.states > 0 and result.states_pruned > 0, result.notes


def test_a_thread_pools_states_are_fingerprinted() -> None:
    """A pool's workers hold a weak reference to it; a weak reference was an object the
    fingerprint could not read. (The states where the main thread iterates the pool's set of
    threads, at its shutdown, stay unread: a set iterator's state includes the size its set had.)"""
    result = _states(prog.thread_pool)
    assert set(result.outcomes) == {(3, (1, 2))}
    assert result.states > 0, result.notes


def test_explore_reads_real_locks_when_it_imports_the_search_inside_patch_mode() -> None:
    """``lanecheck explore --strategy states`` imported the state search after patching began, when
    ``_thread.LockType`` is the controlled lock type: the fingerprint then took every real lock
    for an object it cannot read (a pool's states reach one)."""
    done = explore_command(
        f"{prog.__file__}:thread_pool", "--strategy", "states", "--max-executions", "5000", "--json"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "exhaustive", report
    found = [re.match(r"state pruning: (\d+) abstract states", note) for note in report["notes"]]
    states = [int(m.group(1)) for m in found if m is not None]
    assert states and states[0] > 0, report["notes"]


def _dpor_outcomes(main: Callable[[], object]) -> set[object]:
    result = run_with_outcomes(prog, main, strategy="dpor", races=False)
    assert result.verdict == "exhaustive", result.report()
    return set(result.outcomes)


def test_a_dicts_and_a_sets_iterators_are_read_with_their_position() -> None:
    """A thread iterating a dict or a set holds its iterator across steps; an iterator of either
    was an object the fingerprint could not read (a pool's shutdown iterates its set of threads).
    Read now as its container, what is left and its count: every outcome DPOR reaches, and
    every state fingerprinted."""
    with patched(prog):
        result = check_states(
            lambda rt: (lambda value: lambda: value)(prog.iterators_at_each_step()),
            Options(minimize=False, races=False),
        )
    assert isinstance(result, StatefulResult)
    assert result.verdict == "exhaustive", result.report()
    assert set(result.outcomes) == _dpor_outcomes(prog.iterators_at_each_step)
    assert result.unhashed == 0 and result.states > 0, result.notes


def test_a_set_changed_during_its_iteration_is_still_found() -> None:
    """The state whose iterator's set changed size is refused (its next step raises, which its
    reduction cannot show), not taken for another: the reader's ``RuntimeError`` is found."""
    with patched(prog):
        result = check_states(
            lambda rt: (lambda value: lambda: value)(prog.iterate_while_another_adds()),
            Options(minimize=False, races=False),
        )
    assert result.verdict == "failed", result.report()
    assert "changed size during iteration" in result.report()
