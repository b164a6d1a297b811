"""Which ``KeyboardInterrupt`` is the user's Ctrl-C and which one the program raised.

A controlled thread's ``KeyboardInterrupt`` was taken for Ctrl-C and ended lanecheck with status
130 and no verdict, even where the program raised it itself in a worker thread (session 37's
review), which CPython treats as any other exception of that thread. The signal arrives in the
main OS thread, where the controlled threads may run too (the greenlet back end), so its thread
says nothing: while a check runs, a SIGINT handler of our own marks the Ctrl-C as pressed before
raising it. Where the check does not run in the main thread, or a handler other than Python's
default is installed, every ``KeyboardInterrupt`` is taken for Ctrl-C, as before.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

WATCHING = [False]  # a check runs with the handler below installed
PRESSED = [False]  # and Ctrl-C was pressed meanwhile


def _pressed(signum: int, frame: FrameType | None) -> None:
    PRESSED[0] = True
    raise KeyboardInterrupt


def programs_own(error: BaseException) -> bool:
    """Is ``error`` a ``KeyboardInterrupt`` the program raised (not the user's Ctrl-C)?"""
    return isinstance(error, KeyboardInterrupt) and WATCHING[0] and not PRESSED[0]


@contextmanager
def watched() -> Iterator[None]:
    """While a check runs: tell the user's Ctrl-C from the program's ``KeyboardInterrupt``."""
    if (
        WATCHING[0]
        or threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    signal.signal(signal.SIGINT, _pressed)
    WATCHING[0], PRESSED[0] = True, False
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        WATCHING[0] = PRESSED[0] = False
