"""The twelfth outside review's file programs (``test_review12_files.py``): a thread's look at a
file's size or times while another writes it (r03), and ``flock`` through a duplicated descriptor
(f02). Each says what real runs on Linux do.

r03's window: ``a`` creates ``P`` (``open(P, "x")``), waits for the gate main holds, writes and
closes it; ``b`` looks at ``P``. The first schedule (main to its join, then ``a``, then ``b``)
sees the whole file; only a search that puts ``b`` inside ``a``'s window sees it empty (or
missing)."""

from __future__ import annotations

import fcntl
import os
import pathlib
import tempfile
import threading
from collections.abc import Callable

from tests.harness.program_threads import start_and_join, start_then_release

_DIR = tempfile.mkdtemp(prefix="lanecheck-review12-files-")
P = os.path.join(_DIR, "data.bin")
PAYLOAD = "payload"
GATE = threading.Lock()
SEEN: list[object] = []


def _missing_is(value: object, look: Callable[[], object]) -> Callable[[], object]:
    def guarded() -> object:
        try:
            return look()
        except FileNotFoundError:
            return value

    return guarded


def _window(look: Callable[[], object], after_close: bool = False) -> Callable[[], object]:
    """BUGGY (r03): ``b`` looks at ``P`` while ``a`` may be writing it (``after_close``: CORRECT,
    ``b`` waits until ``a`` closed it)."""
    closed = threading.Event()

    def a() -> None:
        with open(P, "x") as f:
            with GATE:
                pass
            f.write(PAYLOAD)
        closed.set()

    def b() -> None:
        if after_close:
            closed.wait()
        SEEN.append(look())

    def main() -> object:
        SEEN.clear()
        closed.clear()
        GATE.acquire()
        start_then_release(GATE, a, b)
        return SEEN[0]

    return main


LOOKS: dict[str, Callable[[], object]] = {
    "os.path.getsize": _missing_is(-1, lambda: os.path.getsize(P)),
    "os.stat": _missing_is(-1, lambda: os.stat(P).st_size),
    "os.path.getmtime": _missing_is(-1, lambda: os.path.getmtime(P) > 0),
    "Path.stat": _missing_is(-1, lambda: pathlib.Path(P).stat().st_size),
    "DirEntry.stat": lambda: tuple(e.stat().st_size for e in os.scandir(_DIR)),
}
size_window = _window(LOOKS["os.path.getsize"])
size_after_close = _window(LOOKS["os.path.getsize"], after_close=True)
exists_window = _window(lambda: os.path.exists(P))
listdir_window = _window(lambda: tuple(os.listdir(_DIR)))
scandir_window = _window(lambda: tuple(e.name for e in os.scandir(_DIR) if isinstance(e, os.DirEntry)))


LOCK = os.path.join(tempfile.mkdtemp(prefix="lanecheck-review12-flock-"), "f02.lck")
with open(LOCK, "a"):
    pass


def _try(fd: int) -> str:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return "refused"
    return "taken"


def _after(first: Callable[[], object], then: Callable[[], str], *fds: int) -> str:
    """``a`` runs ``first`` and sets an event; ``b`` waits for it and runs ``then``; the
    descriptors closed after. What ``then`` returned."""
    done, got = threading.Event(), []

    def a() -> None:
        first()
        done.set()

    def b() -> None:
        done.wait()
        got.append(then())

    start_and_join(a, b)
    for fd in fds:
        os.close(fd)
    return got[0]


def _fds(dup: bool) -> tuple[int, int]:
    fd = os.open(LOCK, os.O_RDWR)
    return fd, os.dup(fd) if dup else os.open(LOCK, os.O_RDWR)


def duplicate_shares() -> str:
    """CORRECT (f02): ``a`` flocks ``fd``, ``b`` flocks ``dup(fd)`` (``LOCK_NB``): one open file
    description, one lock: taken (the check raised ``BlockingIOError``)."""
    fd, twin = _fds(dup=True)
    return _after(lambda: fcntl.flock(fd, fcntl.LOCK_EX), lambda: _try(twin), fd, twin)


def separate_open_excludes() -> str:
    """Two ``open``s of the lock file are two descriptions: refused."""
    fd, other = _fds(dup=False)
    return _after(lambda: fcntl.flock(fd, fcntl.LOCK_EX), lambda: _try(other), fd, other)


def unlocked_through_duplicate() -> str:
    """``a`` locks ``fd`` and unlocks through ``dup(fd)``: another open takes it."""
    fd, twin = _fds(dup=True)
    other = os.open(LOCK, os.O_RDWR)

    def first() -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        fcntl.flock(twin, fcntl.LOCK_UN)

    return _after(first, lambda: _try(other), fd, twin, other)


def one_duplicate_closed() -> str:
    """``a`` locks through ``dup(fd)`` and closes it: ``fd`` keeps the description open, the lock
    stays held: another open is refused."""
    fd, twin = _fds(dup=True)
    other = os.open(LOCK, os.O_RDWR)

    def first() -> None:
        fcntl.flock(twin, fcntl.LOCK_EX)
        os.close(twin)

    return _after(first, lambda: _try(other), fd, other)


def _hand_over(dup: bool) -> str:
    fd, second = _fds(dup)
    held, release = threading.Event(), threading.Event()

    def a() -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.set()
        release.wait()

    def b() -> None:
        held.wait()
        fcntl.flock(second, fcntl.LOCK_EX)  # (blocking)
        release.set()

    start_and_join(a, b)
    os.close(second)
    os.close(fd)
    return "done"


def duplicate_blocking() -> str:
    """CORRECT (f02): ``b``'s blocking ``flock`` of ``dup(fd)`` while ``a`` holds ``fd`` and waits
    for ``b``: no wait (the check reported a deadlock)."""
    return _hand_over(dup=True)


def separate_blocking() -> str:
    """BUGGY: the same with a second ``open``: ``b`` waits for ``a``, which waits for ``b``."""
    return _hand_over(dup=False)


def try_against_unlock_through_duplicate() -> str:
    """``a`` locks ``fd`` and unlocks through ``dup(fd)``; ``b``'s try of another open falls before,
    inside or after: taken or refused."""
    fd, twin = _fds(dup=True)
    other = os.open(LOCK, os.O_RDWR)
    got: list[str] = []

    def a() -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        fcntl.flock(twin, fcntl.LOCK_UN)

    def b() -> None:
        got.append(_try(other))
        fcntl.flock(other, fcntl.LOCK_UN)

    def main() -> str:
        start_and_join(a, b)
        for n in (fd, twin, other):
            os.close(n)
        return got[0]

    return main()
