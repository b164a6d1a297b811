"""Review 9's lost updates on the items of objects that are no listed container (see
``test_review9_items.py``): a buffer's (``mmap``, numpy) and a standard-library mapping's
implemented in Python (``configparser``, ``email``, ``weakref``)."""

from __future__ import annotations

import configparser
import email.message
import mmap
import threading
import weakref
from typing import Any

from tests.harness.program_threads import run_copies, start_and_join


def mmap_counter() -> None:
    """s05: ``mm[0]`` read, then written, by two threads."""
    mm = mmap.mmap(-1, 16)

    def bump() -> None:
        v = mm[0]
        mm[0] = v + 1

    run_copies(bump, 2)
    assert mm[0] == 2, mm[0]


def mmap_counter_locked() -> None:
    mm = mmap.mmap(-1, 16)
    lock = threading.Lock()

    def bump() -> None:
        with lock:
            v = mm[0]
            mm[0] = v + 1

    run_copies(bump, 2)
    assert mm[0] == 2, mm[0]


def mmap_own_positions() -> None:
    """Each thread its own byte (``[-1]`` is position 15): no race."""
    mm = mmap.mmap(-1, 16)

    def first() -> None:
        mm[0] = 1

    def last() -> None:
        mm[-1] = 2

    start_and_join(first, last)
    assert mm[0] == 1 and mm[15] == 2


def numpy_counter() -> None:
    """s06: ``a[0]`` of a numpy array read, then written."""
    import numpy as np

    a = np.zeros(4, dtype=np.int64)

    def bump() -> None:
        v = a[0]
        a[0] = v + 1

    run_copies(bump, 2)
    assert a[0] == 2, a[0]


def config_counter() -> None:
    """s23: a counter in a ``ConfigParser`` section."""
    cfg = configparser.ConfigParser()
    cfg["stats"] = {"hits": "0"}

    def bump() -> None:
        n = int(cfg["stats"]["hits"])
        cfg["stats"]["hits"] = str(n + 1)

    run_copies(bump, 2)
    assert cfg["stats"]["hits"] == "2", cfg["stats"]["hits"]


def config_counter_locked() -> None:
    cfg = configparser.ConfigParser()
    cfg["stats"] = {"hits": "0"}
    lock = threading.Lock()

    def bump() -> None:
        with lock:
            n = int(cfg["stats"]["hits"])
            cfg["stats"]["hits"] = str(n + 1)

    run_copies(bump, 2)
    assert cfg["stats"]["hits"] == "2", cfg["stats"]["hits"]


def message_header() -> None:
    """An ``email.message.Message`` header replaced by one thread, read by the other."""
    msg = email.message.Message()
    msg["Subject"] = "a"
    seen: list[Any] = []

    def change() -> None:
        del msg["Subject"]
        msg["Subject"] = "b"

    t = threading.Thread(target=change)
    t.start()
    seen.append(msg["Subject"])
    t.join()
    assert seen[0] in ("a", "b", None)


class _Key:
    def __repr__(self) -> str:
        return "key"


def weak_key_counter() -> None:
    """A count kept in a ``WeakKeyDictionary``."""
    key = _Key()
    counts: weakref.WeakKeyDictionary[_Key, int] = weakref.WeakKeyDictionary({key: 0})

    def bump() -> None:
        counts[key] = counts[key] + 1

    run_copies(bump, 2)
    assert counts[key] == 2


class Guarded:
    """A program's own mapping that guards its items with a lock: its ``__getitem__`` is traced,
    so a subscript of it is no access of its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, int] = {"n": 0}

    def __getitem__(self, key: str) -> int:
        with self._lock:
            return self._items[key]

    def __setitem__(self, key: str, value: int) -> None:
        with self._lock:
            self._items[key] = value


def guarded_mapping() -> None:
    g = Guarded()

    def put() -> None:
        g["n"] = 1

    t = threading.Thread(target=put)
    t.start()
    assert g["n"] in (0, 1)
    t.join()
