"""The thirteenth outside review's F8 programs (``test_review13_f8_c2.py``): a check-then-insert
cache in a ``weakref`` mapping (p05) and a counter kept in an ``mmap`` (p59), each with no lock
(BUGGY: real runs lose an update, or give two objects for one key) and with one (CORRECT); and a
thread whose one step is a long local loop (C2)."""

from __future__ import annotations

import gc
import mmap
import threading
import weakref
from collections.abc import Callable

from tests.harness.program_threads import run_copies


class Obj:
    pass


def _weak_cache(
    make: Callable[[], weakref.WeakValueDictionary[int, Obj]],
    lookup: Callable[[weakref.WeakValueDictionary[int, Obj], int], Obj | None],
    locked: bool,
) -> Callable[[], object]:
    def main() -> object:
        cache = make()
        lock = threading.Lock()
        got: list[Obj] = []

        def get() -> None:
            with lock if locked else _NoLock():
                o = lookup(cache, 0)
                if o is None:
                    o = Obj()
                    cache[0] = o
                got.append(o)

        run_copies(get)
        return got[0] is got[1]

    return main


class _NoLock:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _get(cache: weakref.WeakValueDictionary[int, Obj], k: int) -> Obj | None:
    return cache.get(k)


def _contains(cache: weakref.WeakValueDictionary[int, Obj], k: int) -> Obj | None:
    return cache[k] if k in cache else None  # noqa: SIM401 (the ``in`` test is what is checked)


def _bound_get(cache: weakref.WeakValueDictionary[int, Obj], k: int) -> Obj | None:
    look = cache.get  # (a bound method called through a name)
    return look(k)


# name -> (lookup): p05's ``.get()``, an ``in`` test, a bound ``get`` (BUGGY without the lock:
# both threads may miss and insert, each keeping its own object)
WEAK_LOOKUPS = {"get": _get, "contains": _contains, "bound_get": _bound_get}


def weak_cache(how: str, locked: bool) -> Callable[[], object]:
    return _weak_cache(weakref.WeakValueDictionary, WEAK_LOOKUPS[how], locked)


def weak_key_racy() -> object:
    """BUGGY: a ``WeakKeyDictionary`` counter per object, read with ``get`` and written with a
    subscript by two threads with no lock (a lost update)."""
    key = Obj()
    counts: weakref.WeakKeyDictionary[Obj, int] = weakref.WeakKeyDictionary()

    def bump() -> None:
        counts[key] = counts.get(key, 0) + 1

    run_copies(bump)
    return counts[key]


def _mmap_counter(locked: bool, by_bytes: bool) -> Callable[[], object]:
    def main() -> object:
        m = mmap.mmap(-1, 16)
        lock = threading.Lock()

        def work() -> None:
            with lock if locked else _NoLock():
                m.seek(0)
                if by_bytes:  # p59's
                    v = m.read_byte()
                    m.seek(0)
                    m.write_byte((v + 1) % 256)
                else:
                    v = m.read(1)[0]
                    m.seek(0)
                    m.write(bytes([(v + 1) % 256]))

        run_copies(work)
        value = m[0]
        m.close()
        return value

    return main


def mmap_counter(locked: bool, by_bytes: bool) -> Callable[[], object]:
    """p59 (``by_bytes``: ``read_byte``/``write_byte``; else ``read``/``write``): BUGGY without
    the lock (real runs end with 1), CORRECT with it (always 2)."""
    return _mmap_counter(locked, by_bytes)


def long_step() -> object:
    """CORRECT, but one step of ``w`` is a local loop much longer than a short time limit (C2:
    p176's 3,000,000 turns took 8.7 s under the harness; this one, unbounded by a turn count,
    runs until something stops it, or 200,000,000 turns)."""
    lock = threading.Lock()
    total = [0]

    def w() -> None:
        s = 0
        for i in range(200_000_000):
            s += i & 7
        with lock:
            total[0] += s

    run_copies(w, 1)
    return total[0]


def weak_key_released() -> object:
    """CORRECT: a thread reads a ``WeakKeyDictionary``'s entry (``get``, ``in``); once the key is
    dropped the entry goes (the detector must not keep the key alive): 0 entries left."""
    key: Obj | None = Obj()
    counts: weakref.WeakKeyDictionary[Obj, int] = weakref.WeakKeyDictionary()
    counts[key] = 1  # type: ignore[index]
    seen: list[object] = []

    def look() -> None:
        seen.append(counts.get(key))  # type: ignore[arg-type]
        seen.append(key in counts)

    run_copies(look, 1)
    key = None
    gc.collect()
    return len(counts)
