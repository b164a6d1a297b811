"""Correct plain ``threading`` programs that patch mode failed before session 40 (the seventh
outside review's false alarms, ``/tmp/review7``; ``test_review7_alarms.py``). Each does what
CPython 3.11 does in a real run.

This module names ``sem._cond`` (``semaphore_count_reset``), so the semaphores and events made by
its code are CPython's own code on controlled conditions (``patch_types._privates_named``)."""

from __future__ import annotations

import _thread
import sys
import threading
import types
from collections.abc import Callable
from concurrent.futures import Future

from tests.harness.program_threads import run_copies


def daemon_after_start() -> Callable[[], object]:
    """p056: ``t.daemon = True`` after ``start`` raises ``RuntimeError``; before it, it is kept."""
    ev = threading.Event()
    early = threading.Thread(target=ev.wait)
    early.daemon = True
    t = threading.Thread(target=ev.wait)
    t.start()
    raised = ""
    try:
        t.daemon = True
    except RuntimeError as e:
        raised = str(e)
    ev.set()
    t.join()
    return lambda: (raised, t.daemon, early.daemon)


def dummy_thread() -> Callable[[], object]:
    """p144: ``current_thread()`` in a thread of ``_thread.start_new_thread`` is a ``_DummyThread``
    named ``Dummy-N`` (N from the counter of ``Thread-N``), whose ident is the one returned."""
    done = threading.Event()
    seen: list[object] = []
    before = threading.Thread(target=print)  # takes number 1

    def w() -> None:
        me = threading.current_thread()
        seen.extend([me.name, me.daemon, isinstance(me, threading.Thread), me.ident == threading.get_ident()])
        seen.append(me is threading.current_thread())
        done.set()

    ident = _thread.start_new_thread(w, ())
    done.wait()
    seen.append(ident != threading.get_ident())  # (not the main thread's: its ident is the real one's)
    return lambda: (before.name, *seen)


def current_frames() -> Callable[[], object]:
    """p134: ``sys._current_frames()`` maps each live thread's ident to its current frame: the
    waiting worker's is ``Event.wait`` (this module's events are CPython's code; its condition's
    ``wait`` is the harness's, with no frame), called by ``inner``."""
    ev = threading.Event()
    parked = threading.Event()

    def inner() -> None:
        parked.set()
        ev.wait()

    t = threading.Thread(target=inner)
    t.start()
    parked.wait()
    frames = sys._current_frames()
    worker = t.ident
    assert worker is not None
    seen = (
        sorted(frames) == sorted([threading.get_ident(), worker]),
        frames[threading.get_ident()].f_code.co_name,
        _names(frames.get(worker)),
        all(isinstance(f, types.FrameType) for f in frames.values()),
    )
    ev.set()
    t.join()
    after = sorted(sys._current_frames()) == [threading.get_ident()]
    return lambda: (*seen, after)


def _names(frame: types.FrameType | None) -> tuple[str, ...]:
    """The functions of a frame and its callers, innermost first, to the thread's target."""
    names: list[str] = []
    while frame is not None and frame.f_code.co_filename != __file__:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return (*names, frame.f_code.co_name) if frame is not None else tuple(names)


def current_frames_of_every_worker() -> None:
    """p134 as the review wrote it: the workers may not have begun when the main thread looks."""
    ev = threading.Event()
    ts = [threading.Thread(target=ev.wait) for _ in range(2)]
    for t in ts:
        t.start()
    frames = sys._current_frames()
    missing = [t.name for t in ts if t.ident not in frames]
    ev.set()
    for t in ts:
        t.join()
    assert not missing, missing


def semaphore_count_reset() -> Callable[[], object]:
    """p151: a pool resets its semaphore's count through ``_value`` under ``_cond``."""
    sem = threading.Semaphore(0)
    got: list[int] = []

    def w() -> None:
        sem.acquire()
        got.append(1)

    t = threading.Thread(target=w)
    t.start()
    with sem._cond:  # type: ignore[attr-defined]
        sem._value = 1
        sem._cond.notify()  # type: ignore[attr-defined]
    t.join()
    return lambda: tuple(got)


def semaphore_count_reset_unnotified() -> None:
    """A bug: the count is set under ``_cond`` but no waiter is notified (it may sleep for ever)."""
    sem = threading.Semaphore(0)
    t = threading.Thread(target=sem.acquire)
    t.start()
    with sem._cond:  # type: ignore[attr-defined]
        sem._value = 1
    t.join()


def bounded_in_use() -> Callable[[], object]:
    """p152: ``BoundedSemaphore._initial_value - _value`` is how many slots are in use."""
    s = threading.BoundedSemaphore(3)
    lock = threading.Lock()
    seen: list[int] = []

    def w() -> None:
        with s:
            in_use = s._initial_value - s._value  # type: ignore[attr-defined]
            with lock:
                seen.append(in_use)

    run_copies(w)
    return lambda: tuple(sorted(seen))


def _depth(n: int) -> int:
    return 0 if n == 0 else 1 + _depth(n - 1)


def deep_recursion_worker() -> Callable[[], object]:
    """p163: a worker recurses as deep as a real thread can (its target four frames deep)."""
    out: list[int] = []
    reach = sys.getrecursionlimit() - 8

    def w() -> None:
        out.append(_depth(reach))

    t = threading.Thread(target=w)
    t.start()
    t.join()
    return lambda: out == [reach]


def condition_owned() -> Callable[[], object]:
    """``Condition._is_owned()``: held by the calling thread, not by another."""
    cond = threading.Condition()
    seen: list[bool] = [cond._is_owned()]  # type: ignore[attr-defined]
    inside = threading.Event()
    leave = threading.Event()

    def holder() -> None:
        with cond:
            inside.set()
            leave.wait()

    t = threading.Thread(target=holder)
    t.start()
    inside.wait()
    seen.append(cond._is_owned())  # type: ignore[attr-defined]
    leave.set()
    t.join()
    with cond:
        seen.append(cond._is_owned())  # type: ignore[attr-defined]
    return lambda: tuple(seen)


class _Counted:
    """An object whose every attribute read but ``hits`` counts itself under a lock (p095)."""

    def __init__(self, lock: threading.Lock) -> None:
        object.__setattr__(self, "lock", lock)
        object.__setattr__(self, "hits", 0)
        object.__setattr__(self, "v", 1)

    def __getattribute__(self, name: str) -> object:
        if name in ("hits", "lock"):
            return object.__getattribute__(self, name)
        with object.__getattribute__(self, "lock"):
            object.__setattr__(self, "hits", object.__getattribute__(self, "hits") + 1)
        return object.__getattribute__(self, name)


def getattribute_takes_a_lock() -> Callable[[], object]:
    """p095b: the program's ``__getattribute__`` takes a lock; only the program's reads count."""
    obj = _Counted(threading.Lock())
    _two_readers(obj)
    return lambda: obj.hits


COUNTED = _Counted(threading.Lock())  # p095: made at import


def getattribute_at_import_takes_a_lock() -> Callable[[], object]:
    """p095: as ``getattribute_takes_a_lock``, the object made at import (patching and each
    execution's restoring of the module's state read it: the hook ran there, and the check was
    "not deterministic")."""
    _two_readers(COUNTED)
    return lambda: COUNTED.hits


def _two_readers(obj: _Counted) -> None:
    def w() -> None:
        obj.v  # noqa: B018

    run_copies(w)


HANDOFF: Future[int] = Future()  # p172: a one-shot hand-off made at import


def future_at_import() -> Callable[[], object]:
    """p172b: a worker sets a Future the module made at import; main waits for it. Each execution
    starts from the import's pending Future (the first execution's result was kept: "not
    deterministic")."""

    def w() -> None:
        HANDOFF.set_result(42)

    t = threading.Thread(target=w)
    t.start()
    got = HANDOFF.result()
    t.join()
    return lambda: got
