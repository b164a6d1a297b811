"""``multiprocessing``'s shared memory between threads (``test_review10_mp2.py``). Before session
42 a ``Value``/``Array`` made in a controlled thread kept a real ``RLock``, owned by the one OS
thread, so two controlled threads held it at once (a correct counter under ``get_lock()`` was a
data race); ``RawValue``/``RawArray``/``Value(lock=False)`` made at import kept one execution's
writes for the next."""

from __future__ import annotations

import ctypes
import multiprocessing
import threading
import time
from multiprocessing import sharedctypes
from typing import Any

from tests.harness.program_threads import run_copies, start_and_join


class Pair(ctypes.Structure):
    _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double)]


RAW = multiprocessing.RawValue("i", 0)
CELLS = multiprocessing.RawArray("i", 2)
PLAIN = multiprocessing.Value("i", 0, lock=False)
PAIR = Pair()
LOCK = threading.Lock()


# ------------------------------------------------------------------ made in a controlled thread
def value_under_its_lock() -> int:
    v = multiprocessing.Value("i", 0)

    def bump() -> None:
        for _ in range(2):
            with v.get_lock():
                v.value += 1  # (its property takes the lock again: an RLock)

    run_copies(bump)
    assert v.value == 4, v.value
    return int(v.value)


def array_under_its_lock() -> int:
    cells = multiprocessing.Array("i", 2)

    def bump() -> None:
        with cells.get_lock():
            seen = cells[0]
            time.sleep(0.001)  # (a switch while it is held)
            cells[0] = seen + 1
            cells[1] = len(cells)

    run_copies(bump)
    assert cells[:] == [2, 2], cells[:]
    return int(cells[0])


def given_locks() -> int:
    """``synchronized`` makes its own lock; ``Array`` is given one."""
    v: Any = sharedctypes.synchronized(multiprocessing.RawValue("i", 0))
    cells: Any = multiprocessing.Array("i", 1, lock=multiprocessing.RLock())

    def bump() -> None:
        with v.get_lock():
            seen = v.value
            time.sleep(0.001)
            v.value = seen + 1
        with cells.get_lock():
            seen = cells[0]
            time.sleep(0.001)
            cells[0] = seen + 1

    run_copies(bump)
    assert v.value == cells[0] == 2, (v.value, cells[:])
    return int(v.value)


def value_read_under_its_plain_lock() -> None:
    """BUGGY: ``v.value`` takes the lock ``with`` holds, a ``multiprocessing.Lock`` (not re-entrant):
    the real program hangs too."""
    v = multiprocessing.Value("i", 0, lock=multiprocessing.Lock())

    def bump() -> None:
        with v.get_lock():
            v.value += 1

    run_copies(bump)


def array_lost_update() -> int:
    """BUGGY: the increment takes the array's lock for the read and for the write apart."""
    cells = multiprocessing.Array("i", 1)

    def bump() -> None:
        cells[0] += 1

    run_copies(bump)
    assert cells[0] == 2, cells[0]
    return int(cells[0])


def _bumped_apart(cell: Any) -> int:
    """BUGGY: two threads read ``cell.value`` and write it back apart: a lost update."""

    def bump() -> None:
        seen = cell.value
        time.sleep(0.001)
        cell.value = seen + 1

    run_copies(bump)
    assert cell.value == 2, cell.value
    return int(cell.value)


def unlocked_value() -> int:
    """BUGGY: a ``Value`` without a lock."""
    return _bumped_apart(multiprocessing.Value("i", 0, lock=False))


def queue_in_a_thread() -> None:
    multiprocessing.Queue()


def joinable_queue_in_a_thread() -> None:
    multiprocessing.JoinableQueue()


def simple_queue_hand_off() -> int:
    q: Any = multiprocessing.SimpleQueue()
    got: list[int] = []
    start_and_join(lambda: got.append(q.get()), lambda: q.put(7))
    assert got == [7], got
    return got[0]


# ----------------------------------------------------------------------------- made at import
def counts_of_memory_made_at_import(start: int = 0) -> int:
    def bump() -> None:
        with LOCK:
            RAW.value += 1
            CELLS[1] += 1
            PLAIN.value += 1
            PAIR.b += 0.5

    run_copies(bump)
    counts = (RAW.value, CELLS[1], PLAIN.value, PAIR.b)
    assert counts == (start + 2, 2, 2, 1.0), counts
    return int(RAW.value)


def raw_value_lost_update() -> int:
    """BUGGY: ``RAW`` is one memory within an execution."""
    return _bumped_apart(RAW)
