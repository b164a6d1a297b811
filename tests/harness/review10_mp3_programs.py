"""A ``Value``/``Array`` made at import and views of its memory taken at import
(``test_review10_mp3.py``). Earlier in session 42 each execution's ``V`` was a fresh copy of the
memory while ``RAW = V.get_obj()`` stayed the real one: a locked increment of ``V`` and an
unlocked one of ``RAW`` were proved race-free, and ``V.value`` never saw ``RAW``'s write."""

from __future__ import annotations

import ctypes
import multiprocessing
import time

from tests.harness.program_threads import start_and_join

V = multiprocessing.Value("i", 0)
RAW = V.get_obj()  # (the same memory, as in CPython)
CELLS = multiprocessing.Array("i", 2)
VIEW = memoryview(CELLS.get_obj()).cast("B").cast("i")
POINTER = ctypes.pointer(V.get_obj())
HELD = [multiprocessing.Value("i", 0)]  # (inside a list and a dict only: no snapshot reaches them)
TABLE = {"cells": multiprocessing.Array("i", 1)}


def two_views() -> int:
    """BUGGY: one thread takes the lock, the other writes the same memory through its view."""

    def locked() -> None:
        with V.get_lock():
            V.value += 1

    def unlocked() -> None:
        RAW.value += 1

    start_and_join(locked, unlocked)
    assert V.value == 2, (V.value, RAW.value)
    return int(V.value)


def two_views_under_the_lock() -> int:
    """Both under ``V``'s lock, one through ``V``, one through the view: always 2."""

    def through_value() -> None:
        with V.get_lock():
            seen = V.value
            time.sleep(0.001)  # (a switch while it is held)
            V.value = seen + 1

    def through_view() -> None:
        with V.get_lock():
            seen = RAW.value
            time.sleep(0.001)
            RAW.value = seen + 1

    start_and_join(through_value, through_view)
    assert V.value == RAW.value == 2, (V.value, RAW.value)
    return int(V.value)


def array_and_its_views() -> int:
    """Under the array's lock, the array, its ``memoryview`` and a pointer to ``V`` taken at
    import: every write reaches the one memory the others read."""

    def through_array() -> None:
        with CELLS.get_lock():
            CELLS[0] += 1
            CELLS[1] += 1
            POINTER.contents.value += 10

    def through_view() -> None:
        with CELLS.get_lock():
            VIEW[0] += 1
            VIEW[1] += 1

    start_and_join(through_array, through_view)
    assert CELLS[:] == [2, 2] and V.value == 10, (CELLS[:], V.value)
    return int(CELLS[0]) + int(V.value)


def values_inside_containers() -> int:
    """Under their locks: every execution starts from 0 (each kept the last one's writes)."""
    count, cells = HELD[0], TABLE["cells"]

    def bump() -> None:
        with count.get_lock():
            count.value += 1
        with cells.get_lock():
            cells[0] += 1

    start_and_join(bump, bump)
    assert count.value == cells[0] == 2, (count.value, cells[:])
    return int(count.value)
