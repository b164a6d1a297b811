"""Programs whose threads change interpreter settings for good (test_settings_put_back.py): the int
digit limit, the collector's thresholds, ``socket``'s default timeout. Each execution of a check
must start from the values the check found, as each real run starts in a fresh process."""

from __future__ import annotations

import gc
import socket
import sys
import threading

from tests.harness.program_threads import start_and_join

GATE = threading.Lock()
SEEN: list[object] = []
CHANGED = (5000, (500, 5, 5), 7.0)


def settings() -> tuple[object, ...]:
    return (sys.get_int_max_str_digits(), gc.get_threshold(), socket.getdefaulttimeout())


def _read_then_change_for_good() -> None:
    with GATE:
        SEEN.append(settings())
    sys.set_int_max_str_digits(CHANGED[0])
    gc.set_threshold(*CHANGED[1])
    socket.setdefaulttimeout(CHANGED[2])


def changed_for_good() -> object:
    """Two threads each read the settings, then change them: the first read of every execution
    is what the check found."""
    SEEN.clear()
    start_and_join(_read_then_change_for_good, _read_then_change_for_good)
    return SEEN[0]
