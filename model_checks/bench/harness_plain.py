"""Plain-``threading`` programs for the harness's benches (no lanecheck imports): two locked
deposits (against frontrun) and the issue's 3-thread producer/consumer (state proofs). Patch mode
runs them unmodified; the harness's tests run them too."""

from __future__ import annotations

import threading


class Account:
    """Two deposits under one lock: correct, so both tools must explore every interleaving."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.balance = 0

    def deposit(self, amount: int) -> None:
        with self.lock:
            current = self.balance
            self.balance = current + amount


def run_deposits(account: Account, threads: int = 2) -> None:
    workers = [threading.Thread(target=account.deposit, args=(1,)) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()


class Buffer:
    """A bounded buffer on one ``Lock`` and one ``Condition`` shared by both sides, so it must
    ``notify_all``; ``buggy`` notifies one waiter, who may be of the wrong side (a producer woken
    by a producer waits again, and the consumer sleeps on: a deadlock)."""

    def __init__(self, capacity: int, buggy: bool = False) -> None:
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.items: list[int] = []
        self.capacity = capacity
        self.buggy = buggy

    def _wake(self) -> None:
        if self.buggy:
            self.changed.notify()
        else:
            self.changed.notify_all()

    def put(self, item: int) -> None:
        with self.changed:
            while len(self.items) >= self.capacity:
                self.changed.wait()
            self.items.append(item)
            self._wake()

    def take(self) -> int:
        with self.changed:
            while not self.items:
                self.changed.wait()
            item = self.items.pop(0)
            self._wake()
            return item


def run_two_producers(items: int = 2, capacity: int = 1, buggy: bool = False) -> list[int]:
    """Two producers and a consumer around a ``Buffer`` (the issue's small 3-thread program)."""
    buf = Buffer(capacity, buggy)
    got: list[int] = []

    def produce(base: int) -> None:
        for i in range(items):
            buf.put(base + i)

    def consume() -> None:
        for _ in range(2 * items):
            got.append(buf.take())

    threads = [
        threading.Thread(target=produce, args=(0,), name="p0"),
        threading.Thread(target=produce, args=(100,), name="p1"),
        threading.Thread(target=consume, name="c"),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got
