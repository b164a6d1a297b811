"""Plain ``threading`` programs that look at CPython's private fields of the primitives
(``Semaphore._value``, ``Event._flag``, ``Condition._waiters``): patch mode raised
``AttributeError`` on each before session 39 (``test_primitive_fields.py``)."""

from __future__ import annotations

import threading
from collections.abc import Callable


def semaphore_value() -> Callable[[], object]:
    """The count another thread's ``with sem`` moves: 2 before or after it, 1 inside."""
    sem = threading.Semaphore(2)
    seen: list[int] = []

    def worker() -> None:
        with sem:
            pass

    t = threading.Thread(target=worker)
    t.start()
    seen.append(sem._value)
    t.join()
    seen.append(sem._value)
    return lambda: tuple(seen)


def event_flag() -> Callable[[], object]:
    ev = threading.Event()
    seen: list[bool] = []
    t = threading.Thread(target=ev.set)
    t.start()
    seen.append(ev._flag)  # type: ignore[attr-defined]
    t.join()
    seen.append(ev._flag)  # type: ignore[attr-defined]
    return lambda: tuple(seen)


def _look_while_a_thread_waits(look: Callable[[threading.Condition], None]) -> None:
    """``look(cond)`` under the lock while another thread waits on ``cond`` (or has yet to)."""
    cond = threading.Condition()
    ready: list[bool] = []

    def waiter() -> None:
        with cond:
            while not ready:
                cond.wait()

    t = threading.Thread(target=waiter)
    t.start()
    with cond:
        look(cond)
        ready.append(True)
        cond.notify()
    t.join()


def condition_waiters() -> Callable[[], object]:
    """The number of threads parked in ``wait``, read under the lock: 0 or 1."""
    seen: list[int] = []
    _look_while_a_thread_waits(lambda cond: seen.append(len(cond._waiters)))  # type: ignore[attr-defined]
    return lambda: tuple(seen)


def waiters_assumed_parked() -> None:
    """A bug: the main thread assumes the waiter is already parked."""

    def look(cond: threading.Condition) -> None:
        assert cond._waiters, "no thread was waiting yet"  # type: ignore[attr-defined]

    _look_while_a_thread_waits(look)


def barrier_count_assumed() -> None:
    """A bug: the main thread assumes no other thread reached the barrier yet when it looks
    (``n_waiting`` reads the barrier's count without its lock, in CPython too)."""
    barrier = threading.Barrier(3)
    t1 = threading.Thread(target=barrier.wait)
    t2 = threading.Thread(target=barrier.wait)
    t1.start()
    t2.start()
    waiting = barrier.n_waiting
    barrier.wait()
    t1.join()
    t2.join()
    assert waiting == 0, f"{waiting} thread(s) already waiting"


def barrier_count_read() -> Callable[[], object]:
    """Every count the look can see: 0, 1 or 2."""
    barrier = threading.Barrier(3)
    threads = [threading.Thread(target=barrier.wait) for _ in range(2)]
    for t in threads:
        t.start()
    waiting = barrier.n_waiting
    broken = barrier.broken
    barrier.wait()
    for t in threads:
        t.join()
    return lambda: (waiting, broken)


def refused_fields_set() -> Callable[[], object]:
    """Sets each field a controlled primitive has no counterpart of: which were refused."""
    import queue

    refused = []
    for obj, field in ((queue.Queue(), "mutex"), (queue.Queue(), "not_empty"), (threading.Event(), "_cond")):
        try:
            setattr(obj, field, "X")
        except AttributeError:
            refused.append(field)
    return lambda: tuple(refused)
