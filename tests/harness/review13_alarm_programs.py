"""Correct programs that review 13 found reported as failing (or stopped as "not deterministic"),
adapted from /tmp/review13/pNN.py (the name each came from is in its docstring); one racy program
whose replay is made to diverge. Each returns what it saw, so a proof can be held to it."""

from __future__ import annotations

import collections
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from tests.harness.program_threads import run_copies


class _Locked:
    """An element whose ``__repr__`` takes a lock: a thread printing a container of it can be
    parked inside the container's ``repr`` (CPython's recursion guard holds the container)."""

    def __init__(self, lock: threading.Lock, text: str) -> None:
        self.lock = lock
        self.text = text

    def __repr__(self) -> str:
        with self.lock:
            return self.text


def _printed_by_two(
    container: object, lock: threading.Lock, show: Callable[[object], str]
) -> tuple[str, ...]:
    out: list[str] = []

    def fmt() -> None:
        s = show(container)
        with lock:
            out.append(s)

    run_copies(fmt, 2)
    return tuple(out)


def repr_of_a_list() -> tuple[str, ...]:
    """p01: two threads print one list (an element's ``__repr__`` takes a lock): both see it whole."""
    lock = threading.Lock()
    return _printed_by_two([_Locked(lock, "Item")], lock, repr)


def repr_of_a_list_reading_cpu_time() -> tuple[str, ...]:
    """p01, each thread reading its CPU clock first (its switches are traced for that too)."""
    lock = threading.Lock()

    def show(container: object) -> str:
        time.thread_time()
        return repr(container)

    return _printed_by_two([_Locked(lock, "Item")], lock, show)


def repr_of_a_deque() -> tuple[str, ...]:
    """p78: the same with a deque."""
    lock = threading.Lock()
    return _printed_by_two(collections.deque([_Locked(lock, "E")]), lock, repr)


def str_of_a_dict() -> tuple[str, ...]:
    """p66: the same with a dict's ``str``."""
    lock = threading.Lock()
    return _printed_by_two({"x": _Locked(lock, "Acct(0)")}, lock, str)


class _Interrupted(Exception):
    """A signal handler's error, raised in the main thread where the handler ran."""


def repr_after_a_handler_raised_inside_it() -> tuple[str, str]:
    """The main thread, parked inside a list's ``repr`` (an element's lock held by the worker),
    is interrupted by a signal whose handler raises: the error unwinds it out of the ``repr``, and
    after the worker's join (a switch away and back) it prints the list whole, not ``[...]``
    (the error was thrown into it: its repr list must come back then too)."""
    lock = threading.Lock()
    inside = [False]

    class Marked(_Locked):
        def __repr__(self) -> str:
            inside[0] = True
            try:
                return super().__repr__()
            finally:
                inside[0] = False

    def handler(signum: int, frame: object) -> None:
        if inside[0]:
            raise _Interrupted

    def worker() -> None:
        with lock:
            os.kill(os.getpid(), signal.SIGUSR1)

    container = [Marked(lock, "Item")]
    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        t = threading.Thread(target=worker)
        t.start()
        try:
            first = repr(container)
        except _Interrupted:
            first = "interrupted"
        t.join()
        return first, repr(container)
    finally:
        signal.signal(signal.SIGUSR1, previous)


def _lasted(wait: Callable[[], bool], clock_name: str = "monotonic") -> bool:
    """Did a timed wait of 0.05 s that timed out (``wait()`` false) last at least 0.05 s on
    ``time``'s clock ``clock_name``? (Looked up when called: patched, it reads the virtual clock.)"""
    clock: Callable[[], float] = getattr(time, clock_name)
    t0 = clock()
    ended = wait()
    return ended or clock() - t0 >= 0.05


def event_wait_lasts_its_timeout() -> bool:
    """p183: a timed-out ``Event.wait(0.05)`` lasted at least 0.05 s."""
    return _lasted(lambda: threading.Event().wait(0.05))


def lock_acquire_lasts_its_timeout() -> bool:
    """p185: a timed-out ``Lock.acquire(timeout=0.05)`` (the lock held) lasted at least 0.05 s."""
    lock = threading.Lock()
    lock.acquire()
    return _lasted(lambda: lock.acquire(timeout=0.05))


def condition_wait_lasts_its_timeout() -> bool:
    """p197: a timed-out ``Condition.wait(0.05)`` lasted at least 0.05 s."""
    c = threading.Condition()
    with c:
        return _lasted(lambda: c.wait(0.05))


def sleep_lasts_its_length() -> tuple[bool, ...]:
    """p192: ``time.sleep(0.05)`` lasted at least 0.05 s on ``monotonic``, ``perf_counter``, ``time``."""

    def slept() -> bool:
        time.sleep(0.05)
        return False

    return tuple(_lasted(slept, clock) for clock in ("monotonic", "perf_counter", "time"))


def first_pool_name() -> str:
    """p122: the first pool's worker is ``ThreadPoolExecutor-0_0`` in every execution."""
    with ThreadPoolExecutor(1) as ex:
        return ex.submit(lambda: threading.current_thread().name).result()


class _Job:
    def __init__(self, n: int) -> None:
        self.n = n


def sharded_by_hash() -> None:
    """p195: jobs sharded to two workers' queues by ``hash(job)`` (the object's address)."""
    import queue

    qs: list[queue.Queue[_Job | None]] = [queue.Queue(), queue.Queue()]
    done: list[int] = []
    lock = threading.Lock()

    def worker(q: queue.Queue[_Job | None]) -> None:
        while (j := q.get()) is not None:
            with lock:
                done.append(j.n)

    ws = [threading.Thread(target=worker, args=(q,)) for q in qs]
    for w in ws:
        w.start()
    for i in range(6):
        j = _Job(i)
        qs[(hash(j) >> 4) % 2].put(j)
    for q in qs:
        q.put(None)
    for w in ws:
        w.join()
    assert sorted(done) == list(range(6))


def lost_update() -> None:
    """A plain lost update, for a failing schedule to cut short (a replay that diverges)."""
    box = [0]

    def bump() -> None:
        box[0] += 1

    run_copies(bump, 2)
    assert box[0] == 2, box
