"""The twelfth outside review's false proofs on files and generators (session 44):

* r03: a look at a file's size or times (``os.stat``, ``os.path.getsize``, ``Path.stat``) while
  another thread writes the file was no access: "exhaustive", the empty file never seen. Now it
  reads the file (``race_stats``): a data race with the unordered write; a look at a name only
  (``exists``, ``listdir``) reads no contents and is still explored on both sides of the creation
  (the process watch).
* v39: a numpy generator made at import, or by ``main``, drawn by two threads: one order only.
  Now each draw takes the generator's controlled lock (``patch_numpy_random``).
* f02: ``flock`` through ``os.dup(fd)`` while ``fd`` holds the lock waited (a deadlock, or
  ``BlockingIOError``); Linux's lock is the open file description's (``patch_flock``).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

from model_checks.harness import Options, Result, patch_flock
from model_checks.harness.patch import patched
from model_checks.harness.stateful import check_states
from tests.harness import review12_files_programs as prog
from tests.harness.patched_runs import (
    assert_fails,
    assert_outcomes,
    assert_proved_returning,
    run_with_outcomes,
)

pytestmark = pytest.mark.timeout(180)

STRATEGIES = ["dpor-ipb", "states"]


def _explore(module: ModuleType, main: Callable[[], object], strategy: str) -> Result:
    """``main`` checked by DPOR (``strategy``) or by the state search, each execution's outcome
    what it returned."""
    if strategy != "states":
        return run_with_outcomes(module, main, strategy=strategy)
    with patched(module):
        return check_states(lambda rt: (lambda value: lambda: value)(main()), Options(minimize=False))


# ------------------------------------------------------------------------------------------ r03


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("look", sorted(prog.LOOKS))
def test_a_look_at_the_size_races_with_the_write(look: str, strategy: str) -> None:
    """r03: proved with the whole file's size (and "missing") only, before."""
    result = _explore(prog, prog._window(prog.LOOKS[look]), strategy)
    assert_fails(
        result, "data_race", f"data race on file {prog.P}", "(write()) by Thread-1 (a)", "by Thread-2 (b)"
    )


def test_each_size_is_seen_with_the_race_interleaved() -> None:
    result = run_with_outcomes(prog, prog.size_window, interleave_races=True)
    assert {-1, 0, len(prog.PAYLOAD)} <= result.outcomes, result.report()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_look_after_the_close_is_ordered(strategy: str) -> None:
    result = _explore(prog, prog.size_after_close, strategy)
    assert_outcomes(result, {len(prog.PAYLOAD)})  # (the state search proves no race freedom: no words)
    if strategy != "states":
        assert_proved_returning(result, len(prog.PAYLOAD), 2)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(
    ("main", "outcomes"),
    [
        (prog.exists_window, {False, True}),
        (prog.listdir_window, {(), ("data.bin",)}),
        (prog.scandir_window, {(), ("data.bin",)}),
    ],
)
def test_a_look_at_a_name_reads_no_contents(
    main: Callable[[], object], outcomes: set[object], strategy: str
) -> None:
    """No race with the write (the answer does not follow the contents); the creation is a change
    of the file system's names, ordered both ways with the look."""
    assert_outcomes(_explore(prog, main, strategy), outcomes)


# ------------------------------------------------------------------------------------------ f02


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(
    ("main", "outcome"),
    [
        (prog.duplicate_shares, "taken"),
        (prog.separate_open_excludes, "refused"),
        (prog.unlocked_through_duplicate, "taken"),
        (prog.one_duplicate_closed, "refused"),
        (prog.duplicate_blocking, "done"),
    ],
)
def test_flock_through_a_duplicate_is_the_descriptions(
    main: Callable[[], str], outcome: str, strategy: str
) -> None:
    """What real runs on Linux answer (``test_the_flock_programs_run_so_for_real``)."""
    assert_outcomes(_explore(prog, main, strategy), {outcome})


def test_descriptions_are_told_apart_by_their_offset_where_kcmp_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """(A container's seccomp filter may refuse ``kcmp``.)"""
    monkeypatch.setattr(patch_flock, "_KCMP", None)
    for main, outcome in [(prog.duplicate_shares, "taken"), (prog.one_duplicate_closed, "refused")]:
        assert_outcomes(_explore(prog, main, "dpor-ipb"), {outcome})
    assert_fails(_explore(prog, prog.separate_blocking, "dpor-ipb"), "deadlock")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_two_opens_waiting_for_each_other_still_deadlock(strategy: str) -> None:
    assert_fails(_explore(prog, prog.separate_blocking, strategy), "deadlock")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_try_against_an_unlock_through_a_duplicate(strategy: str) -> None:
    assert_outcomes(_explore(prog, prog.try_against_unlock_through_duplicate, strategy), {"taken", "refused"})


def test_the_flock_programs_run_so_for_real() -> None:
    """Unpatched, in real threads: the answers the model must give."""
    assert prog.duplicate_shares() == "taken"
    assert prog.separate_open_excludes() == "refused"
    assert prog.unlocked_through_duplicate() == "taken"
    assert prog.one_duplicate_closed() == "refused"
    assert prog.duplicate_blocking() == "done"


# ------------------------------------------------------------------------------------------ v39


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", ["imported_generator", "imported_random_state", "generator_of_main"])
def test_two_threads_drawing_from_one_generator_draw_in_both_orders(name: str, strategy: str) -> None:
    """v39: proved with ``a`` drawing first only, before."""
    np = pytest.importorskip("numpy")
    from tests.harness import review12_numpy_programs as gens

    assert_outcomes(_explore(gens, getattr(gens, name), strategy), {True, False})
    assert isinstance(gens.rng, np.random.Generator)


def test_a_generator_made_at_import_starts_each_execution_as_patching_found_it() -> None:
    pytest.importorskip("numpy")
    from tests.harness import review12_numpy_programs as gens

    before = gens.rng.bit_generator.state
    result = _explore(gens, gens.one_thread_draws_imported, "dfs")
    assert_outcomes(result, {(gens.FIRST, True)})
    assert gens.rng.bit_generator.state == before  # (the real one: each execution drew from its copy)
