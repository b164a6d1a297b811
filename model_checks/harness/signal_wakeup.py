"""``signal.set_wakeup_fd`` in the main controlled thread: a delivered signal writes its byte.

CPython's C handler writes the signal's number, one byte, to the wakeup fd as the signal arrives
(a signal with a Python handler: ``SIG_IGN`` and ``SIG_DFL`` install no C handler), before the
handler runs in the main thread. A modelled signal (``patch_signals``) is never sent, so no C
handler runs: lanecheck writes the byte at its delivery (review 9: refused by name until then,
so a program waking a ``select`` on its wakeup pipe could not be checked). The fd is the
process's: the real one is set too (a real signal's C handler writes to it, as in CPython), and
it is put back as the check found it after every execution (``patch_state``), before the program
closes the pipe of the next one.
"""

from __future__ import annotations

import os
import signal
import sys

_real_set_wakeup_fd = signal.set_wakeup_fd
_real_write = os.write  # (``patch_io``'s is a controlled wait: the byte is written at once)

# the fd the program set in this execution and its ``warn_on_full_buffer`` (None: not set), and
# the one the process had before the program's first call (put back after the execution)
SET: list[tuple[int, bool] | None] = [None]
FOUND: list[int | None] = [None]


def set_fd(fd: int, warn_on_full_buffer: bool) -> int:
    """The main controlled thread's ``signal.set_wakeup_fd``: CPython's, remembered."""
    old = int(_real_set_wakeup_fd(fd, warn_on_full_buffer=warn_on_full_buffer))
    if FOUND[0] is None:
        FOUND[0] = old
    SET[0] = (fd, warn_on_full_buffer)
    return old


def trip(signum: int) -> None:
    """``signum`` arrives, with a Python handler: CPython's C handler writes its byte."""
    found = SET[0]
    if found is None or found[0] < 0:
        return
    fd, warn = found
    try:
        _real_write(fd, bytes([signum & 0xFF]))
    except OSError as error:
        # (CPython: ``warn_on_full_buffer=False`` silences a full buffer only)
        if warn or not isinstance(error, BlockingIOError):
            # (CPython's words, as its default unraisable hook prints them)
            sys.stderr.write(
                "Exception ignored when trying to write to the signal wakeup fd:\n"
                f"{type(error).__name__}: {error}\n"
            )


def put_back() -> None:
    """After an execution: the wakeup fd the process had before the program set one."""
    if FOUND[0] is not None:
        _real_set_wakeup_fd(FOUND[0])
        FOUND[0] = None
    SET[0] = None
