"""An invoke that holds items at a gate: for tests that need a worker busy while they post or stop."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def _every(item: object) -> bool:
    return True


class Gated(Generic[T]):
    """``invoke(context, item)``: sets ``started``, waits for ``gate`` (at most ``timeout`` s), then
    appends the item to ``seen``. Only the items ``hold`` picks wait; the others are just recorded."""

    def __init__(self, timeout: float = 10, hold: Callable[[T], bool] = _every) -> None:
        self.started = threading.Event()
        self.gate = threading.Event()
        self.seen: list[T] = []
        self._timeout = timeout
        self._hold = hold

    def __call__(self, context: Any, item: T) -> None:
        if self._hold(item):
            self.started.set()
            self.gate.wait(self._timeout)
        self.seen.append(item)
