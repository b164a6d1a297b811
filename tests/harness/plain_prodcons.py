"""A producer/consumer written against plain ``threading`` and ``queue``, knowing nothing of the
harness: patch mode must run it unmodified."""

from __future__ import annotations

import queue
import threading
from threading import Condition, Lock

from tests.harness.program_threads import start_and_join


def run_queue(items: int = 2) -> list[int]:
    q: queue.Queue[int | None] = queue.Queue(maxsize=1)
    out: list[int] = []

    def producer() -> None:
        for i in range(items):
            q.put(i)
        q.put(None)

    def consumer() -> None:
        while True:
            item = q.get()
            if item is None:
                return
            out.append(item)

    start_and_join(producer, consumer)
    return out


class Mailbox:
    """One slot guarded by a condition; ``buggy`` waits with ``if`` instead of ``while``."""

    def __init__(self, buggy: bool) -> None:
        self.lock = Lock()
        self.cond = Condition(self.lock)
        self.items: list[int] = []
        self.buggy = buggy

    def put(self, item: int) -> None:
        with self.cond:
            self.items.append(item)
            self.cond.notify()

    def take(self) -> int:
        with self.cond:
            if self.buggy:
                if not self.items:
                    self.cond.wait()
            else:
                while not self.items:
                    self.cond.wait()
            return self.items.pop(0)


def run_mailbox(buggy: bool) -> list[int]:
    box = Mailbox(buggy)
    got: list[int] = []
    consumers = [threading.Thread(target=lambda: got.append(box.take()), name=f"c{i}") for i in range(2)]

    def produce() -> None:
        for i in range(2):
            box.put(i)

    producer = threading.Thread(target=produce, name="p")
    for t in [*consumers, producer]:
        t.start()
    for t in [*consumers, producer]:
        t.join()
    return got
