"""What a benchmark figure needs beside it: the machine's load and whether the process was pinned.

Threads that fight over the GIL behave differently on an idle machine with every core, on a loaded
one, and pinned to one core (``taskset``), so every figure is reported with these facts.
"""

from __future__ import annotations

import os
from typing import Any


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


def context() -> dict[str, Any]:
    """The facts to print beside a figure: load, cores, and whether the process is pinned."""
    total, allowed = cores()
    return {"load": load_average(), "cores": total, "usable_cores": allowed, "pinned": allowed < total}


__all__ = ["context", "cores", "load_average"]
