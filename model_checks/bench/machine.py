"""What a benchmark figure needs beside it: the machine's load, whether the process was pinned, and
how fast this machine runs Python at the moment.

Threads that fight over the GIL behave differently on an idle machine with every core, on a loaded
one, and pinned to one core (``taskset``), so every figure is reported with these facts. The same
virtual machine also runs the same code at different speeds on different days (a neighbour on the
host, another CPU model): a fixed interpreter-bound loop timed beside a figure lets two sessions'
absolute figures be compared, where the load alone cannot explain a difference.
"""

from __future__ import annotations

import os
import time
from typing import Any

LOOP_ROUNDS = 5


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or None where the platform has none."""
    if not hasattr(os, "getloadavg"):
        return None
    return [round(x, 2) for x in os.getloadavg()]


def cores() -> tuple[int, int]:
    """(cores on the machine, cores this process may run on)."""
    total = os.cpu_count() or 1
    allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else total
    return total, allowed


def _reference_loop() -> int:
    # Dict, tuple, int and call work in the proportions of the explorer's and the harness's own
    # Python: what "this machine runs our code slower today" should move.
    seen: dict[tuple[int, int], int] = {}
    total = 0
    for i in range(100_000):
        key = (i & 1023, i >> 10)
        seen[key] = seen.get(key, 0) + 1
        total += len(key)
    return total + len(seen)


def reference_loop_ms() -> float:
    """Milliseconds of one fixed interpreter-bound loop, the best of a few rounds (less noisy than
    the mean, since a neighbour only ever slows a round down)."""
    best = float("inf")
    for _ in range(LOOP_ROUNDS):
        started = time.perf_counter()
        _reference_loop()
        best = min(best, time.perf_counter() - started)
    return round(best * 1000, 2)


def context() -> dict[str, Any]:
    """The facts to print beside a figure: load, cores, whether the process is pinned, and the
    reference loop's time (the machine's speed of the moment)."""
    total, allowed = cores()
    return {
        "load": load_average(),
        "cores": total,
        "usable_cores": allowed,
        "pinned": allowed < total,
        "reference_loop_ms": reference_loop_ms(),
    }


__all__ = ["context", "cores", "load_average", "reference_loop_ms"]
