"""Plain ``threading`` programs of the seventh outside review (session 39): arguments CPython
refuses were accepted in patch mode, so a program that crashes on every real run (or on every run
where the call has to wait) was proved. ``time.sleep`` of a negative length or NaN is a
``ValueError``; a timed wait whose timeout CPython's clock cannot hold (``inf``, ``1e10``) is an
``OverflowError`` and a NaN one a ``ValueError`` where CPython's lock would wait with it: a lock's
``acquire`` always, a condition's ``wait`` always, an event's ``wait`` only if it is not set, a
semaphore's or a queue's only if it must wait, a join unless a join or ``is_alive`` has already
seen the thread end. Each buggy program fails for real (checked on CPython 3.11.7); each correct
twin is a call CPython accepts with the same argument."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

from tests.harness.expected import Fails
from tests.harness.program_threads import start_and_join

INF = float("inf")
NAN = float("nan")


def _in_a_thread(fn: Callable[[], object]) -> None:
    start_and_join(fn)


def _later(fn: Callable[[], object]) -> threading.Thread:
    """``fn`` in a thread of its own after a sleep (so a real run has the main thread wait)."""

    def run() -> None:
        time.sleep(0.01)
        fn()

    t = threading.Thread(target=run)
    t.start()
    return t


def _notified_later() -> tuple[threading.Condition, list[int], threading.Thread]:
    """A condition, its predicate's list, and the thread that (after a sleep) fills the list and
    notifies the condition."""
    cond = threading.Condition()
    ready: list[int] = []

    def notify() -> None:
        with cond:
            ready.append(1)
            cond.notify()

    return cond, ready, _later(notify)


# --- time.sleep ----------------------------------------------------------------------------------


def sleep_past_deadline() -> None:
    """Buggy: the deadline has passed when the worker computes what is left of it."""
    deadline = time.monotonic() + 0.01

    def work() -> None:
        time.sleep(0.02)
        time.sleep(deadline - time.monotonic())

    _in_a_thread(work)


def sleep_clamped() -> None:
    """Correct: what is left of a deadline, never less than nothing."""
    deadline = time.monotonic() + 0.01

    def work() -> None:
        time.sleep(0.02)
        time.sleep(max(0.0, deadline - time.monotonic()))

    _in_a_thread(work)


def sleep_nan() -> None:
    """Buggy: a back-off of 0/0 written as NaN."""
    _in_a_thread(lambda: time.sleep(NAN))


# --- a lock's acquire: refused up front, free or held ----------------------------------------------


def lock_huge_timeout() -> None:
    """Buggy: 1e10 seconds is past what CPython's clock holds, even for a free lock."""
    lock = threading.Lock()
    _in_a_thread(lambda: lock.acquire(timeout=1e10))


def lock_huge_int_timeout() -> None:
    """Buggy: the same as an int, in CPython's other words."""
    lock = threading.RLock()
    _in_a_thread(lambda: lock.acquire(timeout=10**10))


def lock_nan_timeout() -> None:
    """Buggy: a NaN timeout."""
    lock = threading.Lock()
    _in_a_thread(lambda: lock.acquire(timeout=NAN))


def lock_timeout_max() -> None:
    """Correct: ``threading.TIMEOUT_MAX`` is accepted."""
    lock = threading.Lock()
    got: list[bool] = []
    _in_a_thread(lambda: got.append(lock.acquire(timeout=threading.TIMEOUT_MAX)))
    assert got == [True]


# --- Event.wait ------------------------------------------------------------------------------------


def event_wait_inf() -> None:
    """Buggy: "no timeout" written as ``inf``; the event is not set yet when the main thread waits."""
    ev = threading.Event()
    t = _later(ev.set)
    ev.wait(timeout=INF)
    t.join()


def event_set_wait_inf() -> None:
    """Correct: a set event returns at once, whatever the timeout."""
    ev = threading.Event()
    ev.set()
    got: list[bool] = []
    _in_a_thread(lambda: got.append(ev.wait(INF)))
    assert got == [True]


def event_wait_nan_polls() -> None:
    """Correct: a NaN timeout is a look at the flag (CPython's waiter lock is only tried)."""
    ev = threading.Event()
    got: list[bool] = []
    _in_a_thread(lambda: got.append(ev.wait(NAN)))
    assert got == [False]


def timer_inf() -> None:
    """Buggy: a timer that should never fire, written as ``Timer(inf)``: its thread's wait raises."""
    timer = threading.Timer(INF, lambda: None)
    timer.start()
    timer.join(0.05)
    timer.cancel()
    timer.join()


def timer_inf_cancelled_before_start() -> None:
    """Correct: cancelled before it starts, the timer's wait finds its event set."""
    timer = threading.Timer(INF, lambda: None)
    timer.cancel()
    timer.start()
    timer.join()


# --- Condition.wait and wait_for ----------------------------------------------------------------


def cond_wait_inf() -> None:
    """Buggy: a condition's wait with ``inf`` always raises (after the notifier's turn or not)."""
    cond, ready, t = _notified_later()
    with cond:
        while not ready:
            cond.wait(INF)
    t.join()


def cond_wait_for_inf() -> None:
    """Buggy: ``wait_for`` with ``inf`` raises if the predicate does not hold at first."""
    cond, ready, t = _notified_later()
    with cond:
        cond.wait_for(lambda: ready, INF)
    t.join()


def cond_wait_for_true_inf() -> None:
    """Correct: the predicate holds at once, so ``wait_for`` never waits."""
    cond = threading.Condition()
    with cond:
        assert cond.wait_for(lambda: True, INF)


def cond_wait_nan_polls() -> None:
    """Correct: a NaN timeout is a try of the waiter lock: ``False`` at once."""
    cond = threading.Condition()
    got: list[bool] = []

    def work() -> None:
        with cond:
            got.append(cond.wait(NAN))

    _in_a_thread(work)
    assert got == [False]


# --- Semaphore.acquire -----------------------------------------------------------------------------


def _acquire_before_the_release(timeout: float) -> None:
    """An exhausted semaphore's acquire, with ``timeout``, waits for a release a thread makes later."""
    sem = threading.Semaphore(0)
    t = _later(sem.release)
    assert sem.acquire(timeout=timeout)
    t.join()


def semaphore_acquire_inf() -> None:
    """Buggy: an exhausted semaphore's acquire with ``inf``."""
    _acquire_before_the_release(INF)


def semaphore_free_acquire_inf() -> None:
    """Correct: a free semaphore's acquire never waits, so ``inf`` is never looked at."""
    sem = threading.Semaphore(1)
    got: list[bool] = []
    _in_a_thread(lambda: got.append(sem.acquire(timeout=INF)))
    assert got == [True]


def semaphore_acquire_nan_waits() -> None:
    """Correct: CPython's loop polls for ever with NaN, so the release comes in time."""
    _acquire_before_the_release(NAN)


# --- Thread.join -----------------------------------------------------------------------------------


def join_inf() -> None:
    """Buggy: a join with ``inf`` (even a finished thread's, unless already joined)."""
    t = threading.Thread(target=lambda: time.sleep(0.01))
    t.start()
    t.join(INF)


def join_nan() -> None:
    """Buggy: a join with NaN."""
    t = threading.Thread(target=lambda: time.sleep(0.01))
    t.start()
    t.join(NAN)


def join_inf_after_join() -> None:
    """Correct: once joined, CPython's thread has no lock left to wait on."""
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    t.join(INF)


def join_inf_after_is_alive() -> None:
    """Correct: ``is_alive()`` that saw the thread end does as much as a join."""
    t = threading.Thread(target=lambda: None)
    t.start()
    while t.is_alive():
        time.sleep(0.01)
    t.join(INF)


# --- queues ------------------------------------------------------------------------------------------


def _get_before_the_put(timeout: float) -> None:
    """An empty queue's get, with ``timeout``, waits for a put a thread makes later."""
    q: queue.Queue[int] = queue.Queue()
    t = _later(lambda: q.put(1))
    assert q.get(timeout=timeout) == 1
    t.join()


def queue_get_inf() -> None:
    """Buggy: the get comes before the put (always, with the put's thread asleep first) and raises."""
    _get_before_the_put(INF)


def queue_put_inf_full() -> None:
    """Buggy: a full bounded queue's put with ``inf``."""
    q: queue.Queue[int] = queue.Queue(1)
    q.put(0)
    t = _later(q.get)
    q.put(1, timeout=INF)
    t.join()


def queue_item_get_inf() -> None:
    """Correct: an item is there, so the get never waits."""
    q: queue.Queue[int] = queue.Queue()
    q.put(1)
    got: list[int] = []
    _in_a_thread(lambda: got.append(q.get(timeout=INF)))
    assert got == [1]


def queue_get_nan_waits() -> None:
    """Correct: CPython's queue polls for ever with NaN, so the put comes in time."""
    _get_before_the_put(NAN)


def simple_queue_item_get_inf() -> None:
    """Buggy: the C ``SimpleQueue`` converts the timeout first, item or not."""
    q: queue.SimpleQueue[int] = queue.SimpleQueue()
    q.put(1)
    _in_a_thread(lambda: q.get(timeout=INF))


PROVED = [
    sleep_clamped,
    lock_timeout_max,
    event_set_wait_inf,
    event_wait_nan_polls,
    timer_inf_cancelled_before_start,
    cond_wait_for_true_inf,
    cond_wait_nan_polls,
    semaphore_free_acquire_inf,
    semaphore_acquire_nan_waits,
    join_inf_after_join,
    join_inf_after_is_alive,
    queue_item_get_inf,
    queue_get_nan_waits,
]

_OUT_OF_RANGE = "OverflowError: timestamp out of range for platform time_t"
_NAN = "ValueError: Invalid value NaN (not a number)"
# every wait whose timeout CPython's clock cannot hold fails alike, and so does every NaN one
_PAST_THE_CLOCK = [
    lock_huge_timeout,
    event_wait_inf,
    timer_inf,
    cond_wait_inf,
    cond_wait_for_inf,
    semaphore_acquire_inf,
    join_inf,
    queue_get_inf,
    queue_put_inf_full,
    simple_queue_item_get_inf,
]
_NOT_A_NUMBER = [sleep_nan, lock_nan_timeout, join_nan]
FOUND = [
    Fails(sleep_past_deadline, "exception", "ValueError: sleep length must be non-negative"),
    Fails(lock_huge_int_timeout, "exception", "OverflowError: timestamp too large to convert to C _PyTime_t"),
    *[Fails(program, "exception", _OUT_OF_RANGE) for program in _PAST_THE_CLOCK],
    *[Fails(program, "exception", _NAN) for program in _NOT_A_NUMBER],
]
