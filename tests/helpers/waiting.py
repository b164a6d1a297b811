"""Waiting in a test for what another thread brings about, with a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(
    predicate: Callable[[], object], timeout: float = 5.0, what: str = "the condition", poll: float = 0.001
) -> None:
    """Return once ``predicate()`` is true; fail the test, naming ``what``, after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{what} did not come about within {timeout:g} s"
        time.sleep(poll)
