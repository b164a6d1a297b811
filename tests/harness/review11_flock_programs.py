"""Review 11's ``fcntl.flock`` programs (see ``test_review11_flock.py``): two threads of one
process that each open a lock file and ``flock`` it exclude each other (the lock belongs to the
open file description), so a counter they bump under it is no race; the check hung on the real
call (``--interleave-races``) or reported a false data race (u18, u18b)."""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading

from tests.harness.program_threads import run_copies, start_and_join

_DIR = tempfile.mkdtemp(prefix="lanecheck-review11-flock-")
LOCK = os.path.join(_DIR, "flock.lck")
n = [0]


def _bump() -> None:
    v = n[0]
    n[0] = v + 1


def _unlocked_by_lock_un(mode: str, lockf: bool = False, shared: bool = False) -> None:
    # (``fcntl``'s functions looked up at the call: patched, ``flock`` is the controlled one)
    lock = fcntl.lockf if lockf else fcntl.flock
    with open(LOCK, mode) as f:
        lock(f, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        _bump()
        lock(f, fcntl.LOCK_UN)


def mutex_truncating() -> int:
    """u18: the lock file opened with ``"w"`` (each open truncates it: empty, so no write)."""
    n[0] = 0
    run_copies(lambda: _unlocked_by_lock_un("w"), 2)
    return n[0]


def mutex_appending() -> int:
    """u18b: opened with ``"a"``."""
    n[0] = 0
    run_copies(lambda: _unlocked_by_lock_un("a"), 2)
    return n[0]


def released_by_close() -> int:
    """No ``LOCK_UN``: the end of ``with open(...)`` closes the descriptor, which lets go."""
    n[0] = 0

    def work() -> None:
        with open(LOCK, "a") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            _bump()

    run_copies(work, 2)
    return n[0]


def released_by_os_close() -> int:
    """The descriptor of ``os.open``, locked and let go by ``os.close``."""
    n[0] = 0

    def work() -> None:
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        _bump()
        os.close(fd)

    run_copies(work, 2)
    return n[0]


def one_side_unlocked() -> int:
    """BUGGY: the second thread bumps without taking the lock: still a race."""
    n[0] = 0
    start_and_join(lambda: _unlocked_by_lock_un("a"), _bump)
    return n[0]


def try_lock() -> tuple[str, ...]:
    """``LOCK_NB`` while the other thread holds the lock raises ``BlockingIOError`` (the worker
    holds it until main's try is over: every execution sees the refusal)."""
    tried = threading.Event()
    got: list[str] = []

    def holder() -> None:
        with open(LOCK, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            locked.set()
            tried.wait()

    locked = threading.Event()
    t = threading.Thread(target=holder)
    t.start()
    locked.wait()
    with open(LOCK, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            got.append("taken")
        except BlockingIOError as e:
            got.append(f"refused {e.errno}")
    tried.set()
    t.join()
    return tuple(got)


def shared_then_exclusive() -> int:
    """Two readers share ``LOCK_SH`` (both may hold it at once) and a writer takes ``LOCK_EX``:
    each reader's read of the counter is ordered with the writer's bump."""
    n[0] = 0
    seen = [0, 0]

    def reader(i: int) -> None:
        with open(LOCK, "a") as f:
            fcntl.flock(f, fcntl.LOCK_SH)
            seen[i] = n[0]
            fcntl.flock(f, fcntl.LOCK_UN)

    def writer() -> None:
        with open(LOCK, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            _bump()

    start_and_join(lambda: reader(0), lambda: reader(1), writer)
    return n[0]


def two_readers_hold_at_once() -> str:
    """Both hold ``LOCK_SH`` at the same time: each waits (an event) for the other to hold it,
    which only a shared lock allows (an exclusive one would deadlock)."""
    a_in, b_in = threading.Event(), threading.Event()

    def one(mine: threading.Event, other: threading.Event) -> None:
        with open(LOCK, "a") as f:
            fcntl.flock(f, fcntl.LOCK_SH)
            mine.set()
            other.wait()

    start_and_join(lambda: one(a_in, b_in), lambda: one(b_in, a_in))
    return "both"


def shared_holders_bump() -> int:
    """BUGGY: ``LOCK_SH`` excludes no other ``LOCK_SH`` holder: their bumps race."""
    n[0] = 0
    run_copies(lambda: _unlocked_by_lock_un("a", shared=True), 2)
    return n[0]


LOCK2 = os.path.join(_DIR, "second.lck")


def two_flocks_deadlock() -> None:
    """BUGGY: two lock files taken in opposite orders."""
    both = threading.Barrier(2)

    def take(first: str, second: str) -> None:
        with open(first, "a") as f, open(second, "a") as g:
            fcntl.flock(f, fcntl.LOCK_EX)
            both.wait()
            fcntl.flock(g, fcntl.LOCK_EX)

    start_and_join(lambda: take(LOCK, LOCK2), lambda: take(LOCK2, LOCK))


def lockf_mutex() -> int:
    """u19 BUGGY: ``lockf`` (a POSIX record lock: the process's) excludes no thread of it."""
    n[0] = 0
    run_copies(lambda: _unlocked_by_lock_un("a", lockf=True), 2)
    return n[0]


class _Leave(Exception):
    pass


def try_against_a_holder(by_raising: bool = False) -> str:
    """A ``LOCK_NB`` try while another thread holds the lock (refused), or before it takes it or
    after its ``with`` block's end has let go (taken): the search must reach both. ``by_raising``:
    the block is left by an exception (its close is not seen as it happens)."""
    inner = threading.Lock()
    got: list[str] = []

    def holder() -> None:
        try:
            with open(LOCK, "a") as f:
                fcntl.flock(f, fcntl.LOCK_EX)
                with inner:
                    pass
                if by_raising:
                    raise _Leave
        except _Leave:
            pass

    def trier() -> None:
        with open(LOCK, "a") as g:
            try:
                fcntl.flock(g, fcntl.LOCK_EX | fcntl.LOCK_NB)
                got.append("taken")
            except BlockingIOError:
                got.append("refused")

    start_and_join(holder, trier)
    return got[0]


def _upgrade() -> None:
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        fcntl.flock(fd, fcntl.LOCK_EX)  # (Linux lets go of the shared lock first: no deadlock)
        _bump()
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def two_upgrades() -> int:
    """CORRECT (twelfth review, f03): two holders of ``LOCK_SH`` each convert to ``LOCK_EX``."""
    n[0] = 0
    run_copies(_upgrade, 2)
    return n[0]
