"""``multiprocessing``'s shared memory between threads in patch mode (``review10_mp2_programs.py``;
docs/harness.md, "Refused, not hung on"): a ``Value``/``Array`` made in a controlled thread is
synchronised by a controlled lock (``patch_mp_sync``), ``multiprocessing.Queue`` made there is
refused by name, and ``RawValue``/``RawArray``/``Value(lock=False)`` made at import start each
execution as the check's first found them (``patch_mp_memory``)."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from functools import partial
from multiprocessing import sharedctypes

import pytest

from model_checks.harness import patch_mp_memory
from model_checks.harness.rt.scheduler import UsageError
from tests.harness import review9_children_programs as children
from tests.harness import review10_mp2_programs as prog
from tests.harness.patched_runs import (
    assert_fails,
    assert_outcomes,
    assert_proved_returning,
    assert_race,
    run_with_outcomes,
)

pytestmark = pytest.mark.timeout(90)

run = partial(run_with_outcomes, prog, time_limit=30)


@pytest.mark.parametrize(
    ("program", "outcome"),
    [
        (prog.value_under_its_lock, 4),
        (prog.array_under_its_lock, 2),
        (prog.given_locks, 2),
        (prog.simple_queue_hand_off, 7),
        (prog.counts_of_memory_made_at_import, 2),
    ],
)
def test_a_correct_program_is_proved(program: Callable[[], int], outcome: int) -> None:
    assert_proved_returning(run(program), outcome, 3)


def _zero() -> None:
    """Each check starts from the memory made at import as a fresh interpreter has it (a check
    ends with its last execution's writes, as a module's list does)."""
    prog.RAW.value = prog.CELLS[1] = prog.PLAIN.value = 0
    prog.PAIR.b = 0.0


_memory_at_zero = pytest.fixture(autouse=True)(_zero)


@pytest.mark.parametrize("races", [True, False])
def test_a_values_lost_update_between_its_locked_read_and_write_is_run(races: bool) -> None:
    """s24's ``v.value += 1``: the read and the write each take the controlled lock, so no data
    race, but the schedule that loses an update is explored."""
    result = run_with_outcomes(children, children.mp_value_lost_update, time_limit=30, races=races)
    assert_fails(result, "assertion", "AssertionError: ")


@pytest.mark.parametrize(
    ("program", "what", "site"),
    [
        (prog.array_lost_update, "SynchronizedArray[0]", "cells[0] += 1"),  # (the program's subscript)
        (prog.unlocked_value, "c_int.value", "seen = cell.value"),
        (prog.raw_value_lost_update, "c_int.value", "seen = cell.value"),
    ],
)
def test_unlocked_memory_is_a_data_race_and_a_lost_update(
    program: Callable[[], int], what: str, site: str
) -> None:
    assert_race(run(program), prog, what, site)
    _zero()
    assert_fails(run(program, races=False), "assertion", "AssertionError: 1")


def test_a_plain_lock_taken_again_by_the_value_is_a_deadlock() -> None:
    """Its own lock is the one given, a controlled one (refused by name before session 42)."""
    assert_fails(run(prog.value_read_under_its_plain_lock), "deadlock")


@pytest.mark.parametrize(
    ("program", "kind"),
    [(prog.queue_in_a_thread, "Queue"), (prog.joinable_queue_in_a_thread, "JoinableQueue")],
)
def test_a_queue_with_a_feeder_thread_is_refused_by_name(program: Callable[[], None], kind: str) -> None:
    with pytest.raises(
        UsageError, match=rf"a multiprocessing {kind} made in a controlled thread: .*queue\.Queue"
    ):
        run(program)


def test_memory_made_at_import_is_put_back_and_stays_real() -> None:
    prog.RAW.value = 5
    result = run(lambda: prog.counts_of_memory_made_at_import(start=5), races=False)
    assert_outcomes(result, {7})
    assert result.executions >= 3, result.report()
    # every execution started from 5 (the contents the first found), not the test's 0
    assert prog.RAW.value == 7, prog.RAW.value


class _WithPointer(ctypes.Structure):
    _fields_ = [("n", ctypes.c_int), ("p", ctypes.c_void_p)]


@pytest.mark.parametrize(
    "value",
    [
        ctypes.c_char_p(b"x"),  # (its bytes are kept alive by the object: a pointer put back dangles)
        ctypes.py_object([]),
        _WithPointer(),
        ctypes.c_int.from_buffer(bytearray(4)),  # (memory it does not own)
    ],
)
def test_pointers_and_borrowed_memory_are_not_put_back(value: object) -> None:
    assert patch_mp_memory.saved(value) is None


def test_plain_memory_is_put_back_in_place() -> None:
    cells = sharedctypes.RawArray("d", [1.0, 2.0])
    saved = patch_mp_memory.saved(cells)
    assert saved is not None
    cells[0] = 9.0
    saved.put_back(cells)
    assert cells[:] == [1.0, 2.0]
