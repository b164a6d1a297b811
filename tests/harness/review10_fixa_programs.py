"""Review 10's rows 11, 12 and 14 (see ``test_review10_fixa.py``): a failure whose message holds
an object whose repr takes a lock, ``multiprocessing.dummy``'s threads and pool, and an empty
``select``/``poll``/selector with a timeout used as a sleep."""

from __future__ import annotations

import queue
import select
import selectors
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from multiprocessing import dummy

from tests.harness.program_threads import join_all, start_and_join


def _plus_one(n: int) -> int:
    return n + 1


def futures_in_message() -> None:
    """t34f: fails in every execution; the message is the futures' reprs (each takes its lock)."""
    with ThreadPoolExecutor(1) as pool:
        fs = [pool.submit(_plus_one, n) for n in range(2)]
    assert sum(f.result() for f in fs) == 4, fs


class Box:
    """A program's own class whose repr reads its field under its lock."""

    def __init__(self) -> None:
        self.lock, self.n = threading.Lock(), 0

    def __repr__(self) -> str:
        with self.lock:
            return f"Box(n={self.n})"


def own_repr_in_message() -> None:
    """A worker's assertion fails with a message whose repr takes the box's (free) lock."""
    box = Box()

    def worker() -> None:
        with box.lock:
            box.n += 1
        assert box.n == 2, box

    start_and_join(worker)


def repr_waits_in_message() -> None:
    """The worker's message needs the box's lock, which main holds until the worker ended: the
    program would wait there, so the message says so instead of showing the repr."""
    box = Box()

    def worker() -> None:
        assert box.n == 1, box

    with box.lock:
        t = threading.Thread(target=worker)
        t.start()
        t.join()


def dummy_processes() -> tuple[object, ...]:
    """Two ``multiprocessing.dummy`` processes (threads) add under a lock: always 2, exit codes 0."""
    lock = threading.Lock()
    total = [0]

    def add() -> None:
        with lock:
            total[0] += 1

    procs = [dummy.Process(target=add), dummy.DummyProcess(target=add)]
    join_all(procs)
    return (total[0], *(p.exitcode for p in procs))


def dummy_pool() -> None:
    """t43: ``multiprocessing.dummy.Pool``, refused by name."""
    with dummy.Pool(2) as p:
        assert p.map(_plus_one, range(4)) == [1, 2, 3, 4]


def empty_waits_loop() -> None:
    """t113: a worker polls an event, pausing with an empty ``select``, ``poll`` and selector."""
    ev = threading.Event()

    def worker() -> None:
        poller = select.poll()
        selector = selectors.DefaultSelector()
        while not ev.is_set():
            select.select([], [], [], 0.01)
            poller.poll(10)
            selector.select(0.01)

    t = threading.Thread(target=worker)
    t.start()
    ev.set()
    t.join()


def empty_waits_clock() -> float:
    """Each empty wait moves the (virtual) clock by its timeout, 5 s each: 15 s in all."""
    start = time.monotonic()
    select.select([], [], [], 5.0)
    select.poll().poll(5000)
    selectors.DefaultSelector().select(5.0)
    return round(time.monotonic() - start, 1)


def reprs_seen() -> tuple[str, ...]:
    """Row 19: the reprs a program sees of its threads, locks, conditions, events, semaphores and
    queues, held and free, before and after a thread ran."""
    lock, rlock, cond, ev = threading.Lock(), threading.RLock(), threading.Condition(), threading.Event()
    sems = (threading.Semaphore(2), threading.BoundedSemaphore(1))
    queues: tuple[object, ...] = (queue.Queue(), queue.LifoQueue(), queue.SimpleQueue())
    t = threading.Thread(target=ev.set, name="setter", daemon=True)
    before = repr(t)
    with lock, rlock, rlock:
        held = (repr(lock), repr(rlock))
    t.start()
    t.join()
    free = (repr(lock), repr(rlock), repr(cond), repr(ev), repr(t))
    return (before, *held, *free, *map(repr, sems), *map(repr, queues), repr(threading.current_thread()))


class HalfRepr(Box):
    """A repr that raises while it holds the box's lock."""

    def __repr__(self) -> str:
        self.lock.acquire()
        raise ValueError("no repr")


MADE: list[Box] = []  # the box of the last execution, for the test to look at afterwards


def repr_raises_holding_a_lock() -> None:
    """The worker's message cannot be shown: its repr raised holding the box's lock, which the
    rendering must not leave held (it is no step of the program)."""
    box = HalfRepr()
    MADE[:] = [box]

    def worker() -> None:
        raise AssertionError(box)

    start_and_join(worker)
