"""Plain ``threading`` programs whose threads run long with no operation (tests/harness/test_long_runs.py):
review 13's A7 (p176), a long local computation reported as a livelock, and the endless loops and
spins that are livelocks."""

from __future__ import annotations

import threading
from collections.abc import Callable

from tests.harness.program_threads import run_copies, start_and_join


class Flag:
    def __init__(self) -> None:
        self.done = False


def _local_sum(turns: int) -> int:
    s = 0
    for i in range(turns):
        s += i & 7
    return s


def local_sums(turns: int) -> Callable[[], int]:
    """CORRECT (p176): two threads each sum ``turns`` numbers in local variables, then add the sum
    under a lock."""

    def main() -> int:
        lock = threading.Lock()
        total = [0]

        def w() -> None:
            s = _local_sum(turns)
            with lock:
                total[0] += s

        run_copies(w, 2)
        return total[0]

    return main


def long_count() -> None:
    """CORRECT but long: a local count to 10**9 that exits (``while n < limit``: no endless loop
    to prove), far longer than the tests' time limits."""

    def w() -> None:
        n = 0
        while n < 10**9:
            n += 1

    start_and_join(w)


def endless_count() -> None:
    """BUG: ``while True: n += 1`` in a thread main joins: it never ends."""

    def w() -> None:
        n = 0
        while True:
            n += 1

    start_and_join(w)


def endless_mixed() -> None:
    """BUG: an endless loop with a branch inside and bitwise arithmetic (still no way out)."""

    def w() -> None:
        s, i = 0, 0
        while True:
            i = 0 if i > 5 else i + 1  # (a conditional jump inside the loop)
            s ^= i

    start_and_join(w)


def spin_nobody_ends() -> None:
    """BUG: a thread spins on a flag nothing sets."""
    flag = Flag()

    def w() -> None:
        while not flag.done:
            pass

    start_and_join(w)


def split_update(turns: int) -> Callable[[], int]:
    """BUG: each thread computes ``turns`` turns locally, then reads and writes a counter in two
    critical sections (a lost update needs one preemption)."""

    def main() -> int:
        lock = threading.Lock()
        c = [0]

        def w() -> None:
            _local_sum(turns)
            with lock:
                v = c[0]
            with lock:
                c[0] = v + 1

        run_copies(w, 2)
        assert c[0] == 2, c[0]
        return c[0]

    return main


def long_c_call() -> int:
    """CORRECT: one call of C code that runs no Python for seconds."""
    out: list[int] = []
    start_and_join(lambda: out.append(sum(range(3 * 10**8))))
    return out[0]
