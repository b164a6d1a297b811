"""Review 13's programs on object lifetimes (F2, A3, A4; see ``test_review13_lifetimes.py``): the
harness kept a program's objects alive past their last reference (the race detector's shadow
memory, a finished ``Thread``'s target and arguments, a finished thread's ``threading.local``
namespaces), so a finalizer, a generator's ``finally`` or a weak reference's callback never ran:
a bug lost (a ``__del__`` taking the lock its own thread holds) or a false alarm (a connection
never closed, a pool slot never given back: a false deadlock)."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

from tests.harness.expected import Fails
from tests.harness.program_threads import run_copies, start_and_join

ERRORS: list[str] = []


class _Node:
    """Cyclic garbage (``self.me = self``) whose ``__del__`` needs a lock."""

    def __init__(self, lock: threading.Lock) -> None:
        self.lock = lock
        self.me = self

    def __del__(self) -> None:
        if not self.lock.acquire(timeout=0.5):
            ERRORS.append("__del__ deadlocked: gc ran it in a thread holding the lock")
            return
        self.lock.release()


def _collect_under_lock_while_garbage_is_made(*, collect_under_lock: bool, collector_first: bool) -> None:
    ERRORS.clear()
    gc.disable()
    try:
        lock = threading.Lock()

        def make() -> None:
            n = _Node(lock)
            del n

        def collect() -> None:
            with lock:
                if collect_under_lock:
                    gc.collect()
            if not collect_under_lock:
                gc.collect()

        start_and_join(*((collect, make) if collector_first else (make, collect)))
        gc.collect()
    finally:
        gc.enable()
    assert not ERRORS, ERRORS


def cycle_collected_under_the_lock_its_del_needs() -> None:
    """p36b: A makes cyclic garbage; B holds the lock and runs ``gc.collect()``, whose ``__del__``
    then cannot take it (every real run). The detector kept the object's ``__dict__`` (its
    fields' location) alive, so it was never garbage: "exhaustive"."""
    _collect_under_lock_while_garbage_is_made(collect_under_lock=True, collector_first=False)


def collector_started_before_the_garbage_is_made() -> None:
    """p36 (F3): p36b with the collecting thread started first. The order that fails (the garbage
    made before the collection) needs the collection's step run after the other thread's: DPOR
    took the two as independent ("exhaustive", also with the detector off)."""
    _collect_under_lock_while_garbage_is_made(collect_under_lock=True, collector_first=True)


def collector_lets_go_of_the_lock_first() -> None:
    """p36's correct twin: the collection runs after the lock is released."""
    _collect_under_lock_while_garbage_is_made(collect_under_lock=False, collector_first=True)


class _Res:
    """A slotted resource that takes weak references, whose ``__del__`` takes its lock."""

    __slots__ = ("__weakref__", "lock", "name")

    def __init__(self, lock: threading.Lock) -> None:
        self.lock = lock
        self.name = "r"

    def __del__(self) -> None:
        if not self.lock.acquire(timeout=0.5):
            ERRORS.append("__del__ ran under the lock its own thread holds")
            return
        self.lock.release()


def slotted_object_dropped_under_its_lock() -> None:
    """p60 (with a ``__weakref__`` slot): the worker drops the last reference while it holds the
    lock that ``__del__`` takes. The detector kept the slotted object (its slots' location) alive:
    ``__del__`` never ran."""
    ERRORS.clear()
    lock = threading.Lock()

    def drop() -> None:
        r = _Res(lock)
        with lock:
            del r

    start_and_join(drop)
    assert not ERRORS, ERRORS


class _Payload:
    pass


def thread_argument_freed_after_join() -> None:
    """p73c: what a ``Thread`` was handed is released once it has run (``Thread.run`` deletes
    ``_target`` and ``_args``), so nothing holds it after ``join``."""
    p = _Payload()
    r = weakref.ref(p)
    t = threading.Thread(target=lambda x: None, args=(p,))
    del p
    t.start()
    t.join()
    assert r() is None, "payload still referenced after the thread ended"


CLOSED: list[int] = []
_TLS = threading.local()


class _Conn:
    def __del__(self) -> None:
        CLOSED.append(1)


def thread_local_released_at_thread_end() -> None:
    """p103: a thread's ``threading.local`` values are released when the thread ends, before
    ``join`` returns."""
    CLOSED.clear()

    def work() -> None:
        _TLS.conn = _Conn()

    start_and_join(work)
    assert CLOSED == [1], "thread-local connection not released at thread exit"


def thread_local_gives_its_pool_slot_back() -> None:
    """p194: a one-slot pool; a thread-local connection takes the slot and gives it back in
    ``__del__``, when its thread ends. Two workers one after the other: the second got the slot
    only once the first's namespace went (a false deadlock before)."""
    slots = threading.BoundedSemaphore(1)
    used: list[int] = []

    class Conn:
        def __init__(self) -> None:
            slots.acquire()

        def __del__(self) -> None:
            slots.release()

    def work(i: int) -> None:
        _TLS.pooled = Conn()
        used.append(i)

    for i in range(2):
        t = threading.Thread(target=work, args=(i,))
        t.start()
        t.join()
    assert used == [0, 1], used


WHERE: list[str] = []


def _suspended() -> Iterator[int]:
    try:
        yield 1
        yield 2
    finally:
        WHERE.append(threading.current_thread().name)


def generator_finally_runs_where_it_is_dropped() -> None:
    """p64b: a suspended generator held by two threads; its ``finally`` runs in whichever drops
    it last. The detector kept it (``next`` writes it) alive: ``finally`` never ran, and the
    check failed with ``AssertionError: []``, an outcome no real run has."""
    WHERE.clear()
    lock = threading.Lock()
    g = _suspended()
    next(g)
    box_a, box_b = [g], [g]
    del g

    def a() -> None:
        with lock:
            box_a.clear()

    def b() -> None:
        box_b.clear()

    ta = threading.Thread(target=a, name="A")
    tb = threading.Thread(target=b, name="B")
    ta.start()
    tb.start()
    ta.join()
    tb.join()
    assert WHERE in (["A"], ["B"]), WHERE


class _Slotted:
    """No ``__dict__``, no ``__weakref__``: the detector cannot hold it weakly."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __del__(self) -> None:
        CLOSED.append(self.n)


def slotted_and_listed_objects_freed_when_their_thread_ends() -> None:
    """A thread's own slotted object and list (locations the detector must hold strongly) are
    let go once the thread's code is done: what they hold is freed before ``join`` returns."""
    CLOSED.clear()

    def work() -> None:
        token = _Slotted(1)
        token.n += 1
        held = [_Conn()]
        held.append(_Conn())
        del token, held

    start_and_join(work)
    assert sorted(CLOSED) == [1, 1, 2], CLOSED


class _Cell:
    def __init__(self, n: int) -> None:
        self.n = n


def short_lived_objects_in_two_threads() -> None:
    """Each thread makes and drops its own objects, writing their fields: no data is shared. Now
    that they are freed, another thread's object may get a freed one's address (its ``id``): the
    location of the freed one must be forgotten, or its writes race with the new one's."""
    totals: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        total = 0
        for i in range(30):
            c = _Cell(i)
            c.n += 1
            total += c.n
            del c
            if i % 10 == 0:
                with lock:  # (a scheduling point: the other thread's objects come in between)
                    pass
        with lock:
            totals.append(total)

    run_copies(work)
    assert totals == [465, 465], totals


FOUND = (
    Fails(cycle_collected_under_the_lock_its_del_needs, "assertion", "__del__ deadlocked"),
    Fails(slotted_object_dropped_under_its_lock, "assertion", "__del__ ran under the lock"),
    Fails(collector_started_before_the_garbage_is_made, "assertion", "__del__ deadlocked"),
)
PROVED = (
    thread_argument_freed_after_join,
    thread_local_released_at_thread_end,
    thread_local_gives_its_pool_slot_back,
    generator_finally_runs_where_it_is_dropped,
    slotted_and_listed_objects_freed_when_their_thread_ends,
    short_lived_objects_in_two_threads,
    collector_lets_go_of_the_lock_first,
)
