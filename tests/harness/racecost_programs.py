"""Plain ``threading`` programs for session 47's race-detector costs (test_session47_racecost.py):
a main thread that works alone before it makes its first thread, as the Work Lane scenarios build
their scheduler."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass


class Box:
    def __init__(self) -> None:
        self.value = 0
        self.stop = False


def alone_then_joined() -> int:
    """Main writes and reads the box alone, then a thread writes it and main reads it after the
    join: race free."""
    box = Box()
    box.value = 1  # alone: before any thread is made
    box.value += box.value  # alone, again
    t = threading.Thread(target=lambda: setattr(box, "value", 5))
    t.start()
    t.join()
    return box.value  # after the join: ordered with the thread's write


def alone_then_racing() -> int:
    """The box's first write is main's, alone; after the start main writes it again while the
    thread reads it, unordered: a race."""
    box = Box()
    box.value = 1  # alone
    seen: list[int] = []
    t = threading.Thread(target=lambda: seen.append(box.value))  # the thread's read
    t.start()
    box.value = 2  # main's write, racing with the read
    t.join()
    return box.value


def flag_after_start() -> int:
    """A declared flag (``Box.stop``) stored by main and loaded twice by each of two threads, each
    noting what it saw under a lock: every order of the stores and loads."""
    box = Box()
    ran: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(2):
            if not box.stop:
                with lock:
                    ran.append(1)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    box.stop = True
    for t in threads:
        t.join()
    return len(ran)


def _plain(x: int) -> int:
    return x


def _other(x: int) -> int:
    return -x


@dataclass(eq=False)
class Env:
    """A field whose default is a function (Work Lane's ``LaneEnv.label``): the class holds the
    function, and the dataclass ``__init__`` stores each object's own over it."""

    label: Callable[[int], int] = _plain


def label_set_alone() -> int:
    """Main makes the object alone (its ``__init__`` stores ``label``), then two threads call it."""
    env = Env(label=_plain)
    seen: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        value = env.label(1)
        with lock:
            seen.append(value)

    first, second = threading.Thread(target=worker), threading.Thread(target=worker)
    first.start()
    second.start()
    first.join()
    second.join()
    return sum(seen)


def label_set_racing() -> int:
    """The same object, its ``label`` stored again by main after the start while the thread calls
    it: a race."""
    env = Env(label=_plain)
    seen: list[int] = []
    t = threading.Thread(target=lambda: seen.append(env.label(1)))  # the thread's look-up
    t.start()
    env.label = _other  # main's store, racing with the look-up
    t.join()
    return len(seen)
