"""Review 13's programs on what a controlled thread reaches of CPython's per-thread machinery (F5:
idents given again, F7: the trace hooks, A5: an exception sent to a thread, A8: SIGINT's handler)
and on two paths to a location the race detector did not see (F6), each with a correct twin."""

from __future__ import annotations

import _thread
import contextlib
import ctypes
import signal
import sys
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from tests.harness.program_threads import start_and_join


def pause() -> None:
    pass


def _sessions(remove: bool) -> None:
    """Per-thread sessions keyed by ``get_ident()``; three threads one after another (p116)."""
    sessions: dict[int, str] = {}
    lock = threading.Lock()

    def session() -> None:
        me = threading.get_ident()
        with lock:
            if me in sessions:
                raise RuntimeError(f"got the session of a finished thread: {sessions[me]!r}")
            sessions[me] = threading.current_thread().name
        if remove:
            with lock:
                del sessions[me]

    for _ in range(3):
        start_and_join(session)


def sessions_kept() -> None:
    """BUG (p116): a finished thread's session is found by the next thread, given its ident."""
    _sessions(remove=False)


def sessions_removed() -> None:
    """CORRECT: each thread removes its session before it ends."""
    _sessions(remove=True)


def buffers_by_ident() -> None:
    """BUG (review 14's p98): a buffer per thread keyed by ``get_ident()``; the second worker,
    started after the first ended, is given its ident and writes over its buffer."""
    buffers: dict[int, list[str]] = {}

    def worker(words: list[str]) -> None:
        buffers[threading.get_ident()] = [w.upper() for w in words]

    ts = [threading.Thread(target=worker, args=(ws,)) for ws in (["a", "b"], ["c"])]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def buffers_by_number() -> None:
    """BUG: the same writes, both to the key a worker's ident would have, not taken from one."""
    buffers: dict[int, str] = {}

    def worker(word: str) -> None:
        buffers[1_000_001] = word

    ts = [threading.Thread(target=worker, args=(w,)) for w in "ab"]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def idents_given_again() -> tuple[object, ...]:
    """CORRECT: what CPython gives (checked on Linux): a worker's ident by every route is one
    number; a live thread's is its own; the next thread started takes the ident freed last (here
    ``second``'s: it ends after ``first``, which it joins; ``second`` has ``first``'s where
    ``first`` ended before ``second`` was started); never the native id."""
    natives: list[int] = []
    routes: list[bool] = []

    def record() -> None:
        me = threading.current_thread()
        ident = threading.get_ident()
        routes.append(ident == _thread.get_ident() == me.ident and me.native_id == threading.get_native_id())
        natives.append(threading.get_native_id())

    def after_first() -> None:
        first.join()
        record()

    first, second = threading.Thread(target=record), threading.Thread(target=after_first)
    first.start()
    second.start()
    second.join()
    third = threading.Thread(target=record)
    third.start()
    third.join()
    return (
        all(routes),
        first.ident != second.ident,
        third.ident == second.ident,
        len(set(natives)) == len(natives) == 3,
    )


def _update_twice(
    guard: AbstractContextManager[object], read: Callable[[], int], write: Callable[[int], object]
) -> None:
    """Two updates of one value, each a read, a pause and a write under ``guard``."""
    for _ in range(2):
        with guard:
            v = read()
            pause()
            write(v + 1)


def _guard(locked: bool) -> AbstractContextManager[object]:
    return threading.Lock() if locked else contextlib.nullcontext()


def _closure(locked: bool) -> None:
    """One thread updates a closure's variable through ``nonlocal``, the other through its cell."""
    n = 0
    guard = _guard(locked)

    def via_nonlocal() -> None:
        nonlocal n
        for _ in range(2):
            with guard:
                v = n
                pause()
                n = v + 1

    closure = via_nonlocal.__closure__
    assert closure is not None
    cell = closure[via_nonlocal.__code__.co_freevars.index("n")]

    def put(v: int) -> None:
        cell.cell_contents = v

    start_and_join(lambda: _update_twice(guard, lambda: cell.cell_contents, put), via_nonlocal)
    assert n == 4, n


def cell_unlocked() -> None:
    """BUG (p134): the cell's and the ``nonlocal``'s updates race."""
    _closure(locked=False)


def cell_locked() -> None:
    """CORRECT: both under one lock."""
    _closure(locked=True)


class Slotted:
    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


def _slot(locked: bool, how: str) -> None:
    """One thread updates a slot through its descriptor (called as ``how`` says), the other as
    ``c.n``."""
    c = Slotted()
    slot: Any = vars(Slotted)["n"]  # (``Slotted.n``: the slot's descriptor)
    guard = _guard(locked)
    get_n, set_n = slot.__get__, slot.__set__
    forms: dict[str, tuple[Callable[[], int], Callable[[int], object]]] = {
        "method": (lambda: slot.__get__(c, Slotted), lambda v: slot.__set__(c, v)),
        "bound": (lambda: get_n(c, Slotted), lambda v: set_n(c, v)),
        "unbound": (lambda: type(slot).__get__(slot, c, Slotted), lambda v: type(slot).__set__(slot, c, v)),
    }

    def put(v: int) -> None:
        c.n = v

    start_and_join(lambda: _update_twice(guard, *forms[how]), lambda: _update_twice(guard, lambda: c.n, put))
    assert c.n == 4, c.n


def slot_unlocked(how: str) -> None:
    """BUG (p141): the descriptor's and the attribute's updates race."""
    _slot(locked=False, how=how)


def slot_locked() -> None:
    """CORRECT: both under one lock."""
    _slot(locked=True, how="method")


def timeout_off_under_debugger() -> None:
    """BUG (p198): the waiter turns its timeout off "under a debugger"; a real run times out."""
    ev = threading.Event()
    errs: list[str] = []

    def waiter() -> None:
        timeout = None if sys.gettrace() is not None else 0.05
        if not ev.wait(timeout):
            errs.append("timed out")

    def setter() -> None:
        threading.Event().wait(0.1)
        ev.set()

    start_and_join(waiter, setter)
    assert not errs, errs


def hooks_seen() -> tuple[object, ...]:
    """CORRECT (p199): what a worker sees of the interpreter's hooks in a plain run."""
    seen: list[object] = []

    def worker() -> None:
        seen.extend(
            (sys.gettrace(), sys.getprofile(), signal.getsignal(signal.SIGINT) is signal.default_int_handler)
        )

    start_and_join(worker)
    return tuple(seen)


class Stop(Exception):
    pass


def async_exception() -> None:
    """p84: stop a worker with ``PyThreadState_SetAsyncExc`` (refused by name)."""
    ev = threading.Event()

    def worker() -> None:
        ev.wait()

    t = threading.Thread(target=worker)
    t.start()
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(t.ident or 0), ctypes.py_object(Stop))
    ev.set()
    t.join()
