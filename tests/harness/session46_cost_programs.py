"""Programs of ``test_session46_costs.py`` (a module of its own: patched as a program's)."""

from __future__ import annotations

import threading
import weakref


class Counter:
    def __init__(self) -> None:
        self.value = 0


def racy_counter(rt: object) -> None:
    """Two unlocked read-modify-writes of one attribute: a data race."""
    counter = Counter()

    def bump() -> None:
        counter.value = counter.value + 1

    workers = [threading.Thread(target=bump) for _ in range(2)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()


def locked_counter(rt: object) -> None:
    """Two locked increments: correct, several executions."""
    counter = Counter()
    lock = threading.Lock()

    def bump() -> None:
        with lock:
            counter.value += 1

    workers = [threading.Thread(target=bump) for _ in range(2)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()


FINALIZERS: list[weakref.finalize] = []  # type: ignore[type-arg]


def finalizer_made(rt: object) -> None:
    """A finalizer registered for the interpreter's exit (``atexit`` true, the default), of an
    object that outlives the check (a class)."""
    FINALIZERS.append(weakref.finalize(Counter, int))
