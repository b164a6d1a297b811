"""Plain ``threading`` programs of the sixth outside review (session 39), each a wrong answer of
patch mode before it: state made at import inside a tuple (a named tuple, a function's default, a
class attribute) kept the first execution's changes, and so did the process's environment, a flag
set on ``sys`` and a logger configured in the explored function (``patch_state.py``,
``patch_logging.py``): a path every real run takes went unexplored (a deadlock proved absent) or
a correct program failed. The controlled primitives accepted arguments CPython refuses (a timeout
with ``blocking=False``, a negative one), and ``threading.Condition`` refused a lock-like object
of the program's own, which CPython accepts."""

from __future__ import annotations

import collections
import io
import logging
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from tests.harness.expected import Fails
from tests.harness.program_threads import start_and_join


def _two_locked(fn: Callable[[], object]) -> None:
    lock = threading.Lock()

    def work() -> None:
        with lock:
            fn()

    start_and_join(work, work)


# --- state made at import inside a tuple ---------------------------------------------------------

_STATE = ({"fresh": True},)


def deadlock_hidden_by_stale_tuple() -> None:
    """Buggy: in a fresh process the second thread takes the locks in the other order (the
    dict in the tuple said "not fresh" from the second execution on: proved deadlock-free)."""
    a, b = threading.Lock(), threading.Lock()

    def first() -> None:
        with a:
            time.sleep(0.01)
            with b:
                pass

    def second() -> None:
        if _STATE[0]["fresh"]:
            with b:
                time.sleep(0.01)
                with a:
                    pass
        else:
            with a, b:
                pass

    start_and_join(first, second)
    _STATE[0]["fresh"] = False


_TUPLE_LIST: tuple[list[int]] = ([],)


def tuple_list_fresh() -> None:
    _two_locked(lambda: _TUPLE_LIST[0].append(1))
    assert len(_TUPLE_LIST[0]) == 2, _TUPLE_LIST


Cfg = collections.namedtuple("Cfg", "items")
_CFG = Cfg(items=[])


def namedtuple_list_fresh() -> None:
    _two_locked(lambda: _CFG.items.append(1))
    assert len(_CFG.items) == 2, _CFG


class Holder:
    def __init__(self) -> None:
        self.pair: tuple[list[int], list[int]] = ([], [])


_HOLDER = Holder()


def object_tuple_list_fresh() -> None:
    _two_locked(lambda: _HOLDER.pair[0].append(1))
    assert len(_HOLDER.pair[0]) == 2, _HOLDER.pair


def _default_tuple(acc: tuple[list[int]] = ([],)) -> int:
    acc[0].append(1)
    return len(acc[0])


def default_tuple_fresh() -> None:
    out: list[int] = []
    _two_locked(lambda: out.append(_default_tuple()))
    assert sorted(out) == [1, 2], out


class Cache:
    cache: tuple[dict[int, int]] = ({},)


def class_tuple_dict_fresh() -> None:
    _two_locked(lambda: Cache.cache[0].__setitem__(len(Cache.cache[0]), 1))
    assert len(Cache.cache[0]) == 2, Cache.cache


_NESTED = (1, ("a", [0]))


def nested_tuple_list_fresh() -> None:
    _two_locked(lambda: _NESTED[1][1].append(1))
    assert _NESTED[1][1] == [0, 1, 1], _NESTED


# --- the process's state ----------------------------------------------------------------------

_VARIABLE = "LANECHECK_TESTS_REVIEW6_STARTED"


def environ_fresh() -> None:
    """Correct: the variable is unset when the program starts (a real run's process)."""
    assert _VARIABLE not in os.environ
    os.environ[_VARIABLE] = "1"
    _two_locked(lambda: None)


def sys_flag_fresh() -> None:
    """Correct: the program sets a flag on ``sys`` once, at its start."""
    assert not hasattr(sys, "_lanecheck_tests_review6_flag")
    sys._lanecheck_tests_review6_flag = True  # type: ignore[attr-defined]
    _two_locked(lambda: None)


def logger_configured_in_main() -> None:
    """Correct: the explored function configures its logger when it has no handler, as
    ``logging.basicConfig`` does the root logger (the root's own case needs a fresh process:
    tests/harness/test_patch_review6.py); two threads log under a lock."""
    buf = io.StringIO()
    log = logging.getLogger("lanecheck.tests.review6")
    if not log.handlers:
        log.addHandler(logging.StreamHandler(buf))
        log.setLevel(logging.INFO)
        log.propagate = False
    _two_locked(lambda: log.info("hello"))
    assert buf.getvalue().count("hello") == 2, buf.getvalue()


# --- misuse CPython refuses -------------------------------------------------------------------


def _in_a_thread(fn: Callable[[], object]) -> None:
    start_and_join(fn)


def try_lock_with_timeout() -> None:
    """Buggy: CPython refuses a timeout with ``blocking=False``."""
    lock = threading.Lock()

    def work() -> None:
        if lock.acquire(blocking=False, timeout=0.5):
            lock.release()

    _in_a_thread(work)


def rlock_negative_timeout() -> None:
    """Buggy: CPython refuses a negative timeout other than -1."""
    lock = threading.RLock()
    _in_a_thread(lambda: lock.acquire(timeout=-0.5))


def semaphore_nonblocking_timeout() -> None:
    """Buggy: CPython refuses a timeout with ``blocking=False``."""
    sem = threading.Semaphore(1)
    _in_a_thread(lambda: sem.acquire(False, 0.5))


def queue_put_negative_timeout() -> None:
    """Buggy: a bounded queue's blocking ``put`` refuses a negative timeout."""
    q: queue.Queue[int] = queue.Queue(maxsize=1)
    _in_a_thread(lambda: q.put(1, timeout=-1))


def queue_get_negative_timeout() -> None:
    """Correct: the refusal is CPython's ``ValueError`` (it was a deadlock: a wait for ever)."""
    q: queue.Queue[int] = queue.Queue()
    try:
        q.get(timeout=-1)
    except ValueError as e:
        assert "non-negative" in str(e)
        return
    raise AssertionError("no ValueError")


def semaphore_negative_timeout_polls() -> None:
    """Correct: a negative timeout is a try, as in CPython (it was a wait for ever)."""
    sem = threading.Semaphore(0)
    got: list[bool] = []
    _in_a_thread(lambda: got.append(sem.acquire(timeout=-1)))
    assert got == [False], got


def unbounded_put_negative_timeout() -> None:
    """Correct: an unbounded queue's ``put`` never looks at its timeout (CPython's code)."""
    q: queue.Queue[int] = queue.Queue()
    _in_a_thread(lambda: q.put(1, timeout=-1))
    assert q.get_nowait() == 1


# --- a condition over the program's own lock-like object -------------------------------------


class WrappedLock:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.acquires = 0

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        ok = self._lock.acquire(blocking, timeout)
        if ok:
            self.acquires += 1
        return ok

    def release(self) -> None:
        self._lock.release()

    def __enter__(self) -> WrappedLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _producer(cond: threading.Condition, items: list[Any]) -> Callable[[], None]:
    """A thread's body that puts an item in ``items`` and notifies ``cond``."""

    def produce() -> None:
        with cond:
            items.append(1)
            cond.notify()

    return produce


def cond_custom_lock() -> None:
    """Correct: a condition over a lock-like object (CPython's code uses its acquire/release)."""
    cond = threading.Condition(WrappedLock())  # type: ignore[arg-type]
    items: list[int] = []

    def consume() -> None:
        with cond:
            while not items:
                cond.wait()
            items.pop()

    start_and_join(consume, _producer(cond, items))
    assert items == []


def cond_custom_lock_lost_wakeup() -> None:
    """Buggy: the consumer waits without checking first; notified before it waits, it waits for
    ever (found only if the waits are controlled ones)."""
    cond = threading.Condition(WrappedLock())  # type: ignore[arg-type]
    items: list[int] = []

    def consume() -> None:
        with cond:
            cond.wait()
            items.pop()

    start_and_join(consume, _producer(cond, items))


_IMPORT_LOCK = threading.Lock()


def cond_on_lock_made_at_import() -> None:
    """Correct: a condition over a lock made at import (its stand-in's twin)."""
    cond = threading.Condition(_IMPORT_LOCK)
    ready: list[Any] = []

    def wait() -> None:
        with cond:
            cond.wait_for(lambda: ready)

    start_and_join(wait, _producer(cond, ready))


PROVED = [
    tuple_list_fresh,
    namedtuple_list_fresh,
    object_tuple_list_fresh,
    default_tuple_fresh,
    class_tuple_dict_fresh,
    nested_tuple_list_fresh,
    environ_fresh,
    sys_flag_fresh,
    logger_configured_in_main,
    queue_get_negative_timeout,
    semaphore_negative_timeout_polls,
    unbounded_put_negative_timeout,
    cond_custom_lock,
    cond_on_lock_made_at_import,
]

_NOT_BLOCKING = "can't specify a timeout for a non-blocking call"
FOUND = [
    Fails(deadlock_hidden_by_stale_tuple, "deadlock", "no thread can run"),
    Fails(try_lock_with_timeout, "exception", f"ValueError: {_NOT_BLOCKING}"),
    Fails(rlock_negative_timeout, "exception", "ValueError: timeout value must be positive"),
    Fails(
        semaphore_nonblocking_timeout,
        "exception",
        "ValueError: can't specify timeout for non-blocking acquire",
    ),
    Fails(queue_put_negative_timeout, "exception", "ValueError: 'timeout' must be a non-negative number"),
    Fails(cond_custom_lock_lost_wakeup, "deadlock", "no thread can run"),
]
