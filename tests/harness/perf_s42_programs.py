"""Loops over a list only the looping frame holds (``test_perf_s42_loops.py``): their turns are no
accesses for the race detector (the C filter's ``frame_owned``), unless the list was handed to
another thread, which wrote it, or is held elsewhere too."""

from __future__ import annotations

import threading
import time
import weakref

from tests.harness.program_threads import join_all


def handed_between_turns() -> None:
    """The list is handed to a worker at the first turn; the worker appends and lets go of it
    while the loop sleeps, so at the next turn only the loop's frame holds it again: that turn
    still races with the append (the shadow memory has the worker's write)."""
    box: list[list[int]] = []
    seen: list[int] = []

    def add() -> None:
        box.pop().append(3)

    xs = [1, 2]
    worker = threading.Thread(target=add)
    for x in xs:
        if x == 1:
            box.append(xs)
            worker.start()
            time.sleep(0.01)  # (no synchronisation: the worker runs meanwhile)
        seen.append(x)
    worker.join()


class _Holder:
    items: list[int]


def held_in_a_field() -> None:
    """The list is a local of the loop's frame and an object's field too: a worker appends through
    the field after the loop's first turn, racing with the later turns (s04 without a closure)."""
    xs = [1, 2, 3]
    holder = _Holder()
    holder.items = xs
    started = threading.Event()

    def appender() -> None:
        started.wait()
        holder.items.append(4)

    worker = threading.Thread(target=appender)
    worker.start()
    total = 0
    for item in xs:
        started.set()
        total += item
    worker.join()


def own_loops() -> None:
    """Loops over lists, a dict and a set made by their frames and never handed to anyone, each
    turn after an operation: nothing shared, proved."""

    def work() -> None:
        lock = threading.Lock()
        names = {"a": 1, "b": 2}
        marks = {3, 4}
        seen = []
        for i, x in enumerate([5, 6]):
            with lock:
                seen.append(i + x)
        for k in names:
            with lock:
                seen.append(names[k])
        for m in marks:
            with lock:
                seen.append(m)
        assert sorted(seen) == [1, 2, 3, 4, 5, 7], seen

    join_all([threading.Thread(target=work) for _ in range(2)])


def weakly_handed_set() -> None:
    """At its second turn the loop hands a weak reference to its set to a worker, which adds to
    the set through it: a weak reference adds no count, so the set looks the frame's own at the
    loop's last turn, which still races with the add (real runs raise "Set changed size during
    iteration"; the code review of session 42)."""
    box: list[weakref.ref[set[int]]] = []
    lock = threading.Lock()
    done = threading.Event()

    def owner() -> None:
        s = {1, 2}
        n = 0
        for _ in s:  # (a plain loop: an ``enumerate`` around it is held apart)
            n += 1  # noqa: SIM113
            if n == 2:
                with lock:
                    box.append(weakref.ref(s))
        done.wait()

    def writer() -> None:
        with lock:
            r = box[0] if box else None
        s = None if r is None else r()
        if s is not None:
            s.add(4)
        done.set()

    join_all([threading.Thread(target=owner), threading.Thread(target=writer)])
