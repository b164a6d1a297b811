"""A counter under a lock made at import (the module a program imports)."""

from __future__ import annotations

import threading

from tests.harness.outside_lib import deeper

_lock = threading.Lock()
total = 0


def bump() -> None:
    global total
    with _lock:
        total += 1


def bump_unlocked() -> None:
    global total
    total += 1


def record(value: int) -> None:
    """Appends under the lock of a module this one imports (two steps from the program)."""
    deeper.append(value)
