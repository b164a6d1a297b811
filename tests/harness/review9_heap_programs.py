"""Review 9's s20 (see ``test_review9_heap.py``): two threads' ``heapreplace`` and ``heappushpop``
on one list, each GIL-atomic in CPython."""

from __future__ import annotations

import heapq
import threading

START = list(range(0, 8, 2))


def _check(popped: list[int], heap: list[int]) -> None:
    assert sorted(popped + heap) == sorted([*START, 100, 101, 500, 501]), (popped, heap)


def heap_in_a_local() -> None:
    h = list(START)
    heapq.heapify(h)
    popped: list[int] = []

    def a() -> None:
        for i in range(2):
            popped.append(heapq.heapreplace(h, 100 + i))

    def b() -> None:
        for i in range(2):
            popped.append(heapq.heappushpop(h, 500 + i))

    ts = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    _check(popped, h)


class Jobs:
    """The heap kept in a field, which a test declares atomic."""

    def __init__(self) -> None:
        self.heap = list(START)
        heapq.heapify(self.heap)


def heap_in_a_declared_field() -> None:
    jobs = Jobs()
    popped = [0, 0, 0, 0]

    def a() -> None:
        for i in range(2):
            popped[i] = heapq.heapreplace(jobs.heap, 100 + i)

    def b() -> None:
        for i in range(2):
            popped[2 + i] = heapq.heappushpop(jobs.heap, 500 + i)

    ts = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    _check(popped, jobs.heap)
