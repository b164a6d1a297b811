"""A module the program makes itself, used as a namespace: its attributes are the program's state
(outside review 17's p38)."""

from __future__ import annotations

import threading
import types
from typing import Any

from tests.harness.program_threads import start_and_join

S: Any = types.ModuleType("s")


def order_kept_in_a_made_module() -> None:
    """BUG: ``S.x`` ends 1 or 2 by which thread takes the lock first."""
    S.x = 0
    lock = threading.Lock()
    ev = threading.Event()

    def double() -> None:
        with lock:
            S.x = S.x * 2

    def bump() -> None:
        with lock:
            S.x = S.x + 1

    def flip() -> None:
        ev.set()
        ev.clear()
        ev.set()

    start_and_join(double, bump, flip)
    assert S.x == 1, S.x
