"""The eighth outside review's programs on the process's state (session 40): what one execution
leaves in the process (builtins, the working directory, a signal handler, the default socket
timeout, the recursion limit), the process's state two threads share (the working directory, the
recursion limit, ``sys.stdout``), and the main thread's ident taken at import.
``test_review8_process.py`` checks them."""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import signal
import socket
import sys
import tempfile
import threading

from tests.harness.program_threads import run_copies

# the folder the working-directory programs run in (made at import, as a fixture would be)
BASE = tempfile.mkdtemp(prefix="lanecheck-review8-")
os.makedirs(os.path.join(BASE, "sub"), exist_ok=True)
ELSEWHERE = tempfile.mkdtemp(prefix="lanecheck-review8-other-")
MAIN_IDENT = threading.get_ident()
NATIVE_CACHE = {threading.get_native_id(): "main-conn"}
MAIN = threading.current_thread()


def _two_locked_workers() -> int:
    lk = threading.Lock()
    n = [0]

    def w() -> None:
        with lk:
            n[0] += 1

    run_copies(w, 2)
    return n[0]


def builtins_flag() -> int:
    """r093: main refuses to run twice in one process (a flag on ``builtins``)."""
    assert not getattr(builtins, "_review8_started", False), "main ran twice"
    builtins._review8_started = True  # type: ignore[attr-defined]
    return _two_locked_workers()


def relative_folder() -> int:
    """r094: main changes into a relative folder (the check starts in ``BASE``) and stays there."""
    os.chdir("sub")
    return _two_locked_workers()


def handler_left_set() -> int:
    """r118: main installs a SIGUSR1 handler, first checking that none is installed."""
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL, "handler already installed"
    signal.signal(signal.SIGUSR1, lambda s, f: None)
    return _two_locked_workers()


def default_timeout() -> int:
    """r119: main checks no default socket timeout is set yet, then sets one."""
    assert socket.getdefaulttimeout() is None, socket.getdefaulttimeout()
    socket.setdefaulttimeout(5)
    return _two_locked_workers()


def raised_limit() -> int:
    """r120: main raises the recursion limit by 1000 from the default and checks the result."""
    start = LIMIT_AT_IMPORT
    sys.setrecursionlimit(sys.getrecursionlimit() + 1000)
    assert sys.getrecursionlimit() == start + 1000, sys.getrecursionlimit()
    return _two_locked_workers()


def cwd_race_in_a_temporary_folder() -> bool:
    """r126 as written (BUGGY): the folder main moves into is made by ``tempfile.mkdtemp()`` in
    the explored function, whose name is the same in every execution (the draws are), so the
    folder the previous execution made had to be gone when the next began."""
    home = os.getcwd()
    folder = tempfile.mkdtemp(prefix="lanecheck-review8-r126-")
    return _marker_lands_in(folder, home, f"review8_r126_marker_{os.getpid()}.txt")


def _marker_lands_in(folder: str, home: str, name: str) -> bool:
    """A worker writes the file ``name`` by its relative path while main moves from ``home`` into
    ``folder`` and back: whether it landed in ``folder`` (it is removed wherever it landed). Callers
    put the process id in ``name``: xdist's workers share the working directory, and one worker's
    cleanup removed the other's file between ``exists`` and ``unlink``."""

    def w() -> None:
        with open(name, "w") as f:
            f.write("x")

    t = threading.Thread(target=w)
    t.start()
    os.chdir(folder)
    os.chdir(home)
    t.join()
    inside = os.path.exists(os.path.join(folder, name))
    for place in (folder, home):
        if os.path.exists(os.path.join(place, name)):
            os.unlink(os.path.join(place, name))
    return inside


def temp_folder_first_use() -> int:
    """r126's first line: the first ``tempfile.gettempdir()`` in a process finds the folder under
    ``tempfile``'s lock, and later calls do not take it."""
    assert os.path.isdir(tempfile.gettempdir())
    return _two_locked_workers()


LIMIT_AT_IMPORT = sys.getrecursionlimit()


def _deep(n: int) -> int:
    return 0 if n == 0 else 1 + _deep(n - 1)


def limit_race() -> tuple[object, ...]:
    """r121 (BUGGY): main raises the limit only after starting a worker that recurses past the
    old one; when the worker runs first it hits ``RecursionError``."""
    res: list[object] = []

    def w() -> None:
        try:
            res.append(_deep(LIMIT_AT_IMPORT + 500))
        except RecursionError:
            res.append("overflow")

    old = sys.getrecursionlimit()
    t = threading.Thread(target=w)
    t.start()
    sys.setrecursionlimit(LIMIT_AT_IMPORT + 3000)
    t.join()
    sys.setrecursionlimit(old)
    return tuple(res)


def cwd_race() -> bool:
    """r126 (BUGGY): a worker opens a relative path while main is in another folder: the file
    lands there in some runs."""
    return _marker_lands_in(ELSEWHERE, os.getcwd(), f"review8_marker_{os.getpid()}.txt")


def stdout_assigned() -> str:
    """r125 (BUGGY): main captures its output by assigning ``sys.stdout``; a worker's ``print``
    lands in the capture in some runs."""

    def w() -> None:
        print("worker")

    t = threading.Thread(target=w)
    t.start()
    old = sys.stdout
    buf = io.StringIO()
    sys.stdout = buf
    try:
        print("main")
    finally:
        sys.stdout = old
    t.join()
    return buf.getvalue()


def stdout_written() -> str:
    """r029 (BUGGY): main captures its output with ``redirect_stdout``; a worker writes with
    ``sys.stdout.write``, which lands in the capture when it runs inside the redirection."""

    def w() -> None:
        sys.stdout.write("worker\n")

    t = threading.Thread(target=w)
    t.start()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        sys.stdout.write("main\n")
    t.join()
    return buf.getvalue()


def stdout_taken() -> str:
    """A worker takes ``sys.stdout`` (a read of it) and writes to what it took: into main's
    capture where it took it during the redirection."""
    taken: list[object] = []

    def w() -> None:
        taken.append(sys.stdout)

    t = threading.Thread(target=w)
    t.start()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print("main")
    t.join()
    return "capture" if taken[0] is buf else "real"


def main_ident_at_import() -> tuple[bool, bool]:
    """r114: the main thread's ident taken at import is the main thread's; a worker's is not."""
    res: list[bool] = []
    t = threading.Thread(target=lambda: res.append(threading.get_ident() != MAIN_IDENT))
    t.start()
    t.join()
    return threading.get_ident() == MAIN_IDENT, res == [True]


def native_id_at_import() -> tuple[object, tuple[object, ...]]:
    """r116: a cache keyed by ``get_native_id()``: the import-time entry is the main thread's."""
    res: list[object] = []
    t = threading.Thread(target=lambda: res.append(NATIVE_CACHE.get(threading.get_native_id())))
    t.start()
    t.join()
    return NATIVE_CACHE.get(threading.get_native_id()), tuple(res)


def main_only_fast_path() -> int:
    """r117 (BUGGY): the main thread, known by the ident taken at import, writes without the lock."""
    lk = threading.Lock()
    st = {"n": 0}

    def bump() -> None:
        if threading.get_ident() == MAIN_IDENT:
            st["n"] += 1
        else:
            with lk:
                st["n"] += 1

    t = threading.Thread(target=bump)
    t.start()
    bump()
    t.join()
    return st["n"]


def no_stream_assigned() -> None:
    """Names ``sys.stdout`` without assigning it (``print`` stays the builtin)."""
    print("x", file=sys.stdout)


def main_thread_at_import() -> tuple[bool, ...]:
    """r115: the main thread object taken at import is ``threading.main_thread()`` in every
    execution (two workers under a lock: several executions), alive; a worker is not it."""
    res: list[bool] = []
    lk = threading.Lock()

    def w() -> None:
        with lk:
            res.append(threading.current_thread() is threading.main_thread())

    run_copies(w, 2)
    me = threading.current_thread()
    return me is threading.main_thread(), MAIN is me, MAIN.is_alive(), MAIN.ident == MAIN_IDENT, *res
