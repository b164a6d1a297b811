"""r044 (BUGGY, 60 of 60 real runs fail): the module seeds the ``random`` module's generator at
import, so the worker's draw is always ``Random(3).random()`` = 0.2379..., below 0.5. Explored
from the command line only (``test_review8_import_draws.py``): importing it seeds the importer's
generator."""

from __future__ import annotations

import random
import threading

random.seed(3)
out: list[float] = []


def main() -> None:
    t = threading.Thread(target=lambda: out.append(random.random()))
    t.start()
    t.join()
    assert out[-1] >= 0.5, out
