"""r043 (BUGGY: deadlock-prone when the draw at import says so): the lock order of the main
thread is a draw made at import; the worker takes B then A. ``random.random() < 0.5`` under
``random.seed(1)`` (0.134...): ABBA; under ``random.seed(0)`` (0.844...): one order. Explored
from the command line only (``test_review8_import_draws.py``)."""

from __future__ import annotations

import random
import threading

FLIP = random.random() < 0.5
A = threading.Lock()
B = threading.Lock()


def _worker() -> None:
    with B, A:
        pass


def main() -> None:
    t = threading.Thread(target=_worker)
    t.start()
    first, second = (A, B) if FLIP else (B, A)
    with first, second:
        pass
    t.join()
