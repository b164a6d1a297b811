"""Review 9's loops whose later turns raced (see ``test_review9_loops.py``): a worker's loop over a
shared list or dict signals after its first turn; another thread then changes the container."""

from __future__ import annotations

import threading
from typing import Any

from tests.harness.program_threads import run_copies


def list_loop_late() -> None:
    """s04: the sum sees 3 or 4 items."""
    xs = [1, 2, 3]
    started = threading.Event()
    out: list[int] = []

    def summer() -> None:
        total = 0
        for i, x in enumerate(xs):
            if i == 0:
                started.set()
            total += x
        out.append(total)

    t = threading.Thread(target=summer)
    t.start()
    started.wait()
    xs.append(4)
    t.join()
    assert out == [6], out


def dict_loop_late() -> None:
    """s49: ``RuntimeError: dictionary changed size during iteration`` in every real run."""
    d = {1: "a", 2: "b"}
    started = threading.Event()

    def walker() -> None:
        for _k in d:
            started.set()

    t = threading.Thread(target=walker)
    t.start()
    started.wait()
    d[99] = "z"
    t.join()


def list_loop_locked() -> None:
    """Its twin: the loop and the append under one lock."""
    xs = [1, 2, 3]
    lock = threading.Lock()
    out: list[int] = []

    def summer() -> None:
        with lock:
            total = 0
            for x in xs:
                total += x
            out.append(total)

    t = threading.Thread(target=summer)
    t.start()
    with lock:
        xs.append(4)
    t.join()
    assert out[0] in (6, 10), out


def local_loops() -> None:
    """Long loops over each thread's own list: nothing shared, proved."""

    def work() -> None:
        mine = list(range(2000))
        total = 0
        for _ in range(3):
            for x in mine:
                total += x
        assert total == 3 * sum(range(2000))

    run_copies(work, 2)


# ---------------------------------------------------------------- code with no file (s24)
_MADE: dict[str, object] = {}
exec("def add_one(box):\n    v = box.n\n    box.n = v + 1\n", _MADE)


class _Box:
    n = 0


def generated_code_race() -> None:
    """A function made by ``exec`` (no file of its own) read-modify-writes a shared field."""
    box = _Box()
    add: Any = _MADE["add_one"]

    def bump() -> None:
        add(box)  # the program's line a report names

    run_copies(bump, 2)


class _NoLock:
    """A lock that orders nothing (since session 42 a ``Value``'s own lock is a controlled one)."""

    def acquire(self) -> bool:
        return True

    def release(self) -> None:
        pass


def mp_value_race() -> None:
    """s24: an unlocked increment of a ``multiprocessing.Value`` (its property is generated code)."""
    from multiprocessing import sharedctypes

    no_lock: Any = _NoLock()
    v = sharedctypes.synchronized(sharedctypes.RawValue("i", 0), no_lock)

    def bump() -> None:
        v.value += 1

    run_copies(bump, 2)
