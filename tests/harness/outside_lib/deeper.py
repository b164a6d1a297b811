"""A list under a lock made at import, reached from the program only through ``counting``."""

from __future__ import annotations

import threading

_guard = threading.Lock()
items: list[int] = []


def append(value: int) -> None:
    with _guard:
        items.append(value)
