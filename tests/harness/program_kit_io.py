"""A test program's worker reading what its main thread sends, on plain ``threading`` (patched or
not): shared by the programs on blocking reads (``review8_io_programs.py``,
``review9_children_programs.py``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def read_while_main_sends(read: Callable[[], T], send: Callable[[], object]) -> list[T]:
    """What a worker's ``read()`` returned, started before main's ``send()`` and joined after it."""
    got: list[T] = []
    t = threading.Thread(target=lambda: got.append(read()))
    t.start()
    send()
    t.join()
    return got
