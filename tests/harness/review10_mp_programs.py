"""``multiprocessing``'s synchronisation objects made at import, shared by threads
(``test_review10_mp.py``). Before session 42 each stayed the real one: a switch inside a
critical section (the ``time.sleep``) left the next thread's ``acquire`` blocking the one OS
thread (a hang), an ``RLock`` (owned by the OS thread) let both threads in, an event's wait
blocked for ever."""

from __future__ import annotations

import multiprocessing
import time

from tests.harness.program_threads import run_copies, start_and_join

LOCK = multiprocessing.Lock()
FIRST = multiprocessing.Lock()
SECOND = multiprocessing.Lock()
SEMAPHORE = multiprocessing.Semaphore(1)
BOUNDED = multiprocessing.BoundedSemaphore(1)
CONDITION = multiprocessing.Condition(multiprocessing.Lock())
READY = multiprocessing.Event()
BARRIER = multiprocessing.Barrier(2)
COUNT = multiprocessing.Value("i", 0)
CELLS = multiprocessing.Array("i", 2)
box = [0]
slots = [0, 0]


class Store:
    _rlock = multiprocessing.RLock()  # (a class body's)

    def __init__(self) -> None:
        self.total = 0


class Guarded:
    def __init__(self) -> None:
        self.lock = multiprocessing.Lock()
        self.total = 0


STORE = Store()
GUARDED = Guarded()  # (an object made at import)


def _add_under(lock: object, cells: list[int] = box) -> None:
    with lock:  # type: ignore[attr-defined]
        seen = cells[0]
        time.sleep(0.001)  # (a switch while the lock is held)
        cells[0] = seen + 1


def lock_counter() -> int:
    box[0] = 0

    def bump() -> None:
        _add_under(LOCK)
        _add_under(LOCK)

    run_copies(bump)
    assert box[0] == 4, box[0]
    return box[0]


def lock_in_one_thread_only() -> int:
    """BUGGY: the second thread does not take the lock: a lost update."""
    box[0] = 0

    def unguarded() -> None:
        seen = box[0]
        time.sleep(0.001)
        box[0] = seen + 1

    start_and_join(lambda: _add_under(LOCK), unguarded)
    assert box[0] == 2, box[0]
    return box[0]


def lock_order_inversion() -> None:
    """BUGGY: two locks made at import taken in opposite orders: a deadlock."""

    def one() -> None:
        with FIRST, SECOND:
            box[0] += 1

    def other() -> None:
        with SECOND, FIRST:
            box[0] += 1

    start_and_join(one, other)


def rlock_in_a_class_body() -> int:
    store = Store()

    def bump() -> None:
        with Store._rlock, Store._rlock:  # (taken again by its owner)
            seen = store.total
            time.sleep(0.001)
            store.total = seen + 1

    run_copies(bump)
    assert store.total == 2, store.total
    return store.total


def lock_of_an_object_made_at_import() -> int:
    GUARDED.total = 0

    def bump() -> None:
        assert GUARDED.lock.acquire(True)
        try:
            seen = GUARDED.total
            time.sleep(0.001)
            GUARDED.total = seen + 1
        finally:
            GUARDED.lock.release()

    run_copies(bump)
    assert GUARDED.total == 2, GUARDED.total
    return GUARDED.total


def semaphores() -> int:
    box[0] = slots[0] = 0

    def bump() -> None:
        _add_under(SEMAPHORE)
        _add_under(BOUNDED, slots)

    run_copies(bump)
    assert box[0] == slots[0] == 2 and SEMAPHORE.get_value() == 1, (box, slots)
    return box[0]


def condition_hand_off() -> int:
    box[0] = 0

    def give() -> None:
        with CONDITION:
            box[0] = 7
            CONDITION.notify_all()

    def take() -> None:
        with CONDITION:
            assert CONDITION.wait_for(lambda: box[0] == 7)

    start_and_join(take, give)
    return box[0]


def event_hand_off() -> int:
    box[0] = 0

    def give() -> None:
        box[0] = 7
        READY.set()

    def take() -> None:
        READY.wait()
        assert box[0] == 7, box[0]

    start_and_join(take, give)
    assert READY.is_set()
    return box[0]


def barrier_meeting() -> int:
    def meet(index: int) -> None:
        slots[index] = index + 1
        BARRIER.wait()
        assert slots == [1, 2], slots

    start_and_join(lambda: meet(0), lambda: meet(1))
    return sum(slots)


def value_under_its_lock() -> int:
    def bump() -> None:
        for _ in range(2):
            with COUNT.get_lock():
                seen = COUNT.value
                time.sleep(0.001)
                COUNT.value = seen + 1

    run_copies(bump)
    assert COUNT.value == 4, COUNT.value
    return int(COUNT.value)


def array_under_its_lock() -> int:
    def bump() -> None:
        with CELLS.get_lock():
            seen = CELLS[0]
            time.sleep(0.001)
            CELLS[0] = seen + 1
            CELLS[1] = len(CELLS)

    run_copies(bump)
    assert CELLS[:] == [2, 2], CELLS[:]
    return int(CELLS[0])


def value_lost_update() -> int:
    """BUGGY: ``COUNT.value += 1`` takes the value's lock for the read and for the write apart."""

    def bump() -> None:
        COUNT.value += 1

    run_copies(bump)
    assert COUNT.value == 2, COUNT.value
    return int(COUNT.value)


def array_lost_update() -> int:
    """BUGGY: ``CELLS[0] += 1`` in two threads, no ``get_lock()``."""

    def bump() -> None:
        seen = CELLS[0]
        time.sleep(0.001)
        CELLS[0] = seen + 1

    run_copies(bump)
    assert CELLS[0] == 2, CELLS[0]
    return int(CELLS[0])
