"""Programs for review 9's rows on what CPython keeps per OS thread or does for the main thread:
``_thread.interrupt_main`` (s34, s34b), ``time.thread_time`` (s33), ``ctypes``' errno (s37),
``os.sched_yield`` in a spin (s38), each CORRECT or BUGGY in CPython 3.11 on Linux."""

from __future__ import annotations

import _thread
import ctypes
import os
import resource
import signal
import threading
import time
from types import FrameType


# ------------------------------------------------------------------ _thread.interrupt_main
def interrupt_main_runs_the_handler_in_main() -> None:
    """CORRECT (s34): a worker's ``interrupt_main()``; main's SIGINT handler runs in main."""
    got: list[bool] = []

    def handler(sig: int, frame: FrameType | None) -> None:
        got.append(threading.current_thread() is threading.main_thread())

    old = signal.signal(signal.SIGINT, handler)
    try:
        t = threading.Thread(target=_thread.interrupt_main)
        t.start()
        t.join()
        for _ in range(100):
            if got:
                break
            time.sleep(0.01)
    finally:
        signal.signal(signal.SIGINT, old)
    assert got == [True], got


def interrupt_main_raises_keyboard_interrupt_in_main() -> None:
    """CORRECT (s34b): with Python's default handler main gets ``KeyboardInterrupt``, caught."""
    caught = False
    try:
        t = threading.Thread(target=_thread.interrupt_main)
        t.start()
        t.join()
        for _ in range(100):
            time.sleep(0.01)
    except KeyboardInterrupt:
        caught = True
    assert caught


def interrupt_main_does_nothing_for_a_signal_python_does_not_handle() -> None:
    """CORRECT: SIGINT ignored, SIGUSR1 at its default action: ``interrupt_main`` does nothing
    (CPython 3.10+); a signal number out of range is CPython's ``ValueError``."""
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        t = threading.Thread(target=_thread.interrupt_main)
        t.start()
        t.join()
        _thread.interrupt_main(signal.SIGUSR1)
        try:
            _thread.interrupt_main(0)  # type: ignore[arg-type]
        except ValueError as e:
            assert str(e) == "signal number out of range", e
        else:
            raise AssertionError("no ValueError")
        time.sleep(0.01)
    finally:
        signal.signal(signal.SIGINT, old)


def interrupt_main_handler_takes_the_lock_main_holds() -> None:
    """BUGGY: the handler runs in main once its join returns, while main holds the lock the
    handler takes: a self-deadlock on every real run."""
    lk = threading.Lock()

    def handler(sig: int, frame: FrameType | None) -> None:
        with lk:
            pass

    old = signal.signal(signal.SIGINT, handler)
    try:
        with lk:
            t = threading.Thread(target=_thread.interrupt_main)
            t.start()
            t.join()
            time.sleep(0.01)
    finally:
        signal.signal(signal.SIGINT, old)


def interrupt_main_uncaught() -> None:
    """BUGGY: nothing catches the ``KeyboardInterrupt`` raised in main: main fails with it."""
    t = threading.Thread(target=_thread.interrupt_main)
    t.start()
    t.join()
    time.sleep(0.01)


# ------------------------------------------------------------------ a thread's CPU time
def _burn(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def sleeper_uses_no_cpu_time() -> None:
    """CORRECT (s33): a worker that only sleeps uses (almost) no CPU while another burns 0.1 s,
    by each per-thread CPU clock."""
    used: dict[str, float] = {}
    cpu = time.CLOCK_THREAD_CPUTIME_ID

    def sleeper() -> None:
        t0, c0 = time.thread_time(), time.clock_gettime(cpu)
        r0 = resource.getrusage(resource.RUSAGE_THREAD)
        time.sleep(0.3)
        r1 = resource.getrusage(resource.RUSAGE_THREAD)
        used["thread_time"] = time.thread_time() - t0
        used["clock_gettime"] = time.clock_gettime(cpu) - c0
        used["getrusage"] = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime

    ts = [threading.Thread(target=sleeper), threading.Thread(target=_burn, args=(0.1,))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert max(used.values()) < 0.05, used


def thread_time_taken_for_the_processs() -> None:
    """BUGGY: main counts a worker's CPU time in its own ``thread_time`` (it is per thread)."""
    t0 = time.thread_time()
    t = threading.Thread(target=_burn, args=(0.05,))
    t.start()
    t.join()
    assert time.thread_time() - t0 >= 0.05, "the worker's CPU time is not main's"


# ------------------------------------------------------------------ ctypes' errno
def each_thread_reads_its_own_errno() -> None:
    """CORRECT (s37): ctypes keeps a private errno per thread: each reads back what it set."""
    lk = threading.Lock()
    bad: list[tuple[int, int]] = []

    def worker(n: int) -> None:
        ctypes.set_errno(n)
        with lk:
            pass
        if ctypes.get_errno() != n:
            bad.append((n, ctypes.get_errno()))

    ts = [threading.Thread(target=worker, args=(n,)) for n in (5, 7)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad, bad


def errno_read_from_another_thread() -> None:
    """BUGGY: main reads the errno a worker set (a new thread's starts at 0; main's is its own)."""
    ctypes.set_errno(0)
    t = threading.Thread(target=ctypes.set_errno, args=(5,))
    t.start()
    t.join()
    assert ctypes.get_errno() == 5, "the worker's errno is not main's"


# ------------------------------------------------------------------ os.sched_yield in a spin
def spin_with_sched_yield() -> None:
    """CORRECT (s38): a worker spins on an Event with ``os.sched_yield()`` between polls."""
    ev = threading.Event()
    done: list[int] = []

    def waiter() -> None:
        while not ev.is_set():
            os.sched_yield()
        done.append(1)

    t = threading.Thread(target=waiter)
    t.start()
    ev.set()
    t.join()
    assert done == [1]


def sched_yield_taken_for_synchronisation() -> None:
    """BUGGY: main yields once and assumes the worker ran meanwhile."""
    done: list[int] = []
    t = threading.Thread(target=done.append, args=(1,))
    t.start()
    os.sched_yield()
    assert done == [1], "the worker has not run yet"
    t.join()
