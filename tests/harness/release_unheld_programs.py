"""Programs for ``test_release_unheld.py``: objects the race detector must hold strongly (a list
takes no weak reference) let go at a thread's end, once nothing else holds them, whichever
thread dropped them and however their reference count got there (``race_shadow.Held``)."""

from __future__ import annotations

import threading

from tests.harness.program_threads import start_and_join

CLOSED: list[int] = []


class _Conn:
    def __del__(self) -> None:
        CLOSED.append(1)


def list_dropped_after_a_read_is_let_go() -> None:
    """The worker's list gains a read's site (one more reference the detector holds) and loses
    its last other holder (the worker's variable) between two threads' ends: its reference count
    is what it was at the first, yet nothing but the detector holds it at the second."""
    CLOSED.clear()

    def work() -> None:
        held = [_Conn(), 0]
        held[1] = 0  # (its one location: held strongly from now on, with its write's site)
        start_and_join(lambda: None)  # (a thread's end: the list is looked at, held here)
        assert held[1] == 0  # (a read's site: one more reference the detector holds)
        del held  # (one fewer: the count is as it was)

    start_and_join(work)
    assert CLOSED == [1], "the list was not let go when its thread ended"


def list_dropped_by_one_thread_is_let_go_when_another_ends() -> None:
    """A list made by one thread, handed to a second that drops it without an access and then
    waits: it is let go at the next thread's end (a third's), before the second ends."""
    CLOSED.clear()
    handed: list[list[object] | None] = [None]
    dropped = threading.Event()
    go_on = threading.Event()

    def make() -> None:
        made: list[object] = [_Conn()]
        made.append(0)
        handed[0] = made

    def drop() -> None:
        got = handed[0]  # (the list itself is not accessed here: only its count moves)
        handed[0] = None
        del got
        dropped.set()
        go_on.wait()

    start_and_join(make)
    second = threading.Thread(target=drop)
    second.start()
    dropped.wait()
    start_and_join(lambda: None)
    assert CLOSED == [1], "the dropped list was not let go at the third thread's end"
    go_on.set()
    second.join()


PROVED = (list_dropped_after_a_read_is_let_go, list_dropped_by_one_thread_is_let_go_when_another_ends)
