"""The ninth outside review's programs on the process's state (session 41): the working
directory read or written by library code (pathlib, ``os.path``, ``contextlib.chdir``), the umask,
the collector's switch, the int digit limit, and ``signal.set_wakeup_fd`` in a worker. Each BUGGY
one has a CORRECT twin. ``test_review9_process.py`` checks them."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tests.harness.program_threads import join_all, run_copies, start_and_join

# two folders, each with its own ``f.txt`` (made at import, as a fixture would be)
DIR_A = tempfile.mkdtemp(prefix="lanecheck-review9-a-")
DIR_B = tempfile.mkdtemp(prefix="lanecheck-review9-b-")
Path(DIR_A, "f.txt").write_text("A")
Path(DIR_B, "f.txt").write_text("B")
Path(DIR_A, "only_a.txt").write_text("a")
BIG = 10**1000  # (1001 digits: over a limit of 640, under CPython's default 4300)
WAKEUP_REFUSED = "set_wakeup_fd only works in main thread of the main interpreter"
T = TypeVar("T")


def _in_a_while(worker: Callable[[], T], main: Callable[[], object]) -> T:
    """Main moves into A, starts a worker running ``worker``, runs ``main``, joins the worker and
    goes back to the folder it was in: what ``worker`` returned."""
    home = os.getcwd()
    os.chdir(DIR_A)
    got: list[T] = []
    t = threading.Thread(target=lambda: got.append(worker()))
    t.start()
    main()
    t.join()
    os.chdir(home)
    return got[0]


def cwd_pathlib() -> str:
    """s42 (BUGGY): the worker reads a relative path through pathlib (its ``io.open``) while main
    moves from A to B: real runs read A (37/40) or B."""
    return _in_a_while(lambda: Path("f.txt").read_text(), lambda: os.chdir(DIR_B))


def cwd_pathlib_ordered() -> str:
    """The CORRECT twin: the worker reads once main is in B (an Event orders them)."""
    moved = threading.Event()

    def w() -> str:
        moved.wait()
        return Path("f.txt").read_text()

    def move() -> None:
        os.chdir(DIR_B)
        moved.set()

    return _in_a_while(w, move)


def cwd_os_path() -> tuple[bool, bool]:
    """BUGGY: ``os.path.exists`` (its ``os.stat``) and ``os.path.abspath`` (its ``os.getcwd``) of
    relative paths while main moves from A to B."""

    def w() -> tuple[bool, bool]:
        return os.path.exists("only_a.txt"), os.path.abspath("x").startswith(DIR_A)

    return _in_a_while(w, lambda: os.chdir(DIR_B))


def cwd_thread_target() -> str:
    """BUGGY: a worker whose target is ``os.chdir`` itself (no line of the program's in it) moves
    main's relative open."""
    home = os.getcwd()
    os.chdir(DIR_A)
    t = threading.Thread(target=os.chdir, args=(DIR_B,))
    t.start()
    got = Path("f.txt").read_text()
    t.join()
    os.chdir(home)
    return got


def _read_f() -> str:
    with open("f.txt") as f:
        return f.read()


def _enter_chdir_b() -> None:
    with contextlib.chdir(DIR_B):
        pass


def contextlib_chdir() -> str:
    """s43 (BUGGY): main enters ``contextlib.chdir(B)`` (its ``os.chdir`` runs in contextlib)
    while the worker opens a relative path: real runs read A or B (25/40)."""
    return _in_a_while(_read_f, _enter_chdir_b)


def contextlib_chdir_after_join() -> str:
    """The CORRECT twin: main enters ``contextlib.chdir(B)`` once the worker is joined."""
    home = os.getcwd()
    os.chdir(DIR_A)
    got: list[str] = []
    t = threading.Thread(target=lambda: got.append(_read_f()))
    t.start()
    t.join()
    _enter_chdir_b()
    os.chdir(home)
    return got[0]


def _umask_program(locked: bool) -> int:
    os.umask(0o022)
    lock = threading.Lock() if locked else contextlib.nullcontext()
    seen: list[int] = []

    def writer() -> None:
        with lock:
            old = os.umask(0o077)  # a private file's
            os.umask(old)

    def reader() -> None:
        with lock:
            cur = os.umask(0)  # the usual "read the umask" idiom
            os.umask(cur)
        seen.append(cur)

    start_and_join(writer, reader)
    os.umask(0o022)
    return seen[0]


def umask_read() -> int:
    """s01 (BUGGY): the reader's set-and-restore may see the writer's temporary 0o077 (17/40)."""
    return _umask_program(locked=False)


def umask_read_locked() -> int:
    """The CORRECT twin: both under one lock."""
    return _umask_program(locked=True)


def umask_file_mode() -> int:
    """BUGGY: a worker creates a file while main's umask is 0o077 for a moment: 0o644 or 0o600."""
    os.umask(0o022)
    path = os.path.join(DIR_B, "made.txt")
    modes: list[int] = []

    def w() -> None:
        with open(path, "w"):
            pass
        modes.append(stat.S_IMODE(os.stat(path).st_mode))
        os.unlink(path)

    t = threading.Thread(target=w)
    t.start()
    old = os.umask(0o077)
    os.umask(old)
    t.join()
    return modes[0]


def _gc_program(locked: bool) -> bool:
    gc.enable()
    lock = threading.Lock() if locked else contextlib.nullcontext()
    bad: list[str] = []

    def section() -> None:
        with lock:
            was = gc.isenabled()
            gc.disable()
            try:
                if gc.isenabled():
                    bad.append("gc came back on inside the section")
            finally:
                if was:
                    gc.enable()

    run_copies(section, 2)
    gc.enable()
    return bool(bad)


def gc_section() -> bool:
    """s02 (BUGGY): one thread's ``gc.enable()`` ends the other's gc-free section (4/40)."""
    return _gc_program(locked=False)


def gc_section_locked() -> bool:
    """The CORRECT twin: the sections under one lock."""
    return _gc_program(locked=True)


def _digits_program(locked: bool) -> str:
    sys.set_int_max_str_digits(4300)
    lock = threading.Lock() if locked else contextlib.nullcontext()
    got: list[str] = []

    def strict() -> None:
        with lock:
            old = sys.get_int_max_str_digits()
            sys.set_int_max_str_digits(640)
            sys.set_int_max_str_digits(old)

    def printer() -> None:
        with lock:
            try:
                got.append(str(len(str(BIG))))
            except ValueError:
                got.append("ValueError")

    start_and_join(strict, printer)
    sys.set_int_max_str_digits(4300)
    return got[0]


def int_digits() -> str:
    """s22 (BUGGY): the strict thread's temporary limit of 640 makes the printer's ``str`` of a
    1001-digit int raise (4/40)."""
    return _digits_program(locked=False)


def int_digits_locked() -> str:
    """The CORRECT twin: both under one lock."""
    return _digits_program(locked=True)


def wakeup_fd_worker() -> tuple[str, ...]:
    """s30 (BUGGY): ``signal.set_wakeup_fd`` in a worker raises CPython's ``ValueError`` (10/10)."""
    r, w = os.pipe()
    os.set_blocking(w, False)
    errs: list[str] = []

    def setup() -> None:
        try:
            old = signal.set_wakeup_fd(w)
            signal.set_wakeup_fd(old)
        except ValueError as e:
            errs.append(str(e))

    start_and_join(setup)
    os.close(r)
    os.close(w)
    return tuple(errs)


def wakeup_fd_main_reset() -> int:
    """CORRECT: the main thread asks for no wakeup fd (``-1``): CPython's call, the old one back."""
    old = signal.set_wakeup_fd(-1)
    start_and_join(lambda: None)
    return old


def wakeup_fd_main() -> tuple[bytes, tuple[str, ...]]:
    """CORRECT: the main thread sets a wakeup fd and waits on its pipe; a worker sends the process
    SIGUSR1: CPython's C handler writes the signal's byte (the handler runs in main too)."""
    r, w = os.pipe()
    os.set_blocking(w, False)
    handled: list[str] = []
    old_handler = signal.signal(signal.SIGUSR1, lambda signum, frame: handled.append("handled"))
    old = signal.set_wakeup_fd(w)
    t = threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGUSR1))
    t.start()
    got = os.read(r, 1)
    t.join()
    signal.set_wakeup_fd(old)
    signal.signal(signal.SIGUSR1, old_handler)
    os.close(r)
    os.close(w)
    return got, tuple(handled)


def many_relative_opens(count: int = 200) -> int:
    """Cost: two threads each open a relative path ``count`` times through pathlib, in a program
    that names ``chdir`` (each open is a read of the working directory)."""
    home = os.getcwd()
    os.chdir(DIR_A)
    totals = [[0], [0]]

    def w(total: list[int]) -> None:
        for _ in range(count):
            total[0] += len(Path("f.txt").read_text())

    join_all(threading.Thread(target=w, args=(total,)) for total in totals)
    os.chdir(home)
    return totals[0][0] + totals[1][0]
