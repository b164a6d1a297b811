"""Polling loops on ``q.get(timeout=...)`` for the state search's timeout cuts (session 48,
review 14's B7: every limit answered "bounded by timeout_limit"). Run under ``patched``; each
returns what its threads saw (a proof is held to the outcomes)."""

from __future__ import annotations

import queue
import threading
import time


def _poll_then_drain(
    q: queue.Queue[int], stop: threading.Event, done: list[int], misses: list[int], clock: bool = False
) -> None:
    while not stop.is_set():
        if clock:
            time.monotonic()
        try:
            item = q.get(timeout=0.05)
        except queue.Empty:
            if misses:  # (a poll whose every timeout changes the state)
                misses[0] += 1
            continue
        done.append(item)
    while True:
        try:
            done.append(q.get_nowait())
        except queue.Empty:
            return


def _feed(worker: threading.Thread, q: queue.Queue[int], stop: threading.Event, items: int) -> None:
    worker.start()
    for i in range(items):
        q.put(i)
    stop.set()
    worker.join()


def drain_after_stop() -> tuple[int, ...]:
    """Correct (review 14's p39b): poll until stopped, then drain what is left."""
    q: queue.Queue[int] = queue.Queue()
    stop = threading.Event()
    done: list[int] = []
    _feed(threading.Thread(target=_poll_then_drain, args=(q, stop, done, [])), q, stop, 3)
    assert done == [0, 1, 2], done
    return tuple(done)


def count_misses() -> tuple[int, ...]:
    """Correct, but each timeout adds one to a counter: no state comes back."""
    q: queue.Queue[int] = queue.Queue()
    stop = threading.Event()
    done: list[int] = []
    _feed(threading.Thread(target=_poll_then_drain, args=(q, stop, done, [0])), q, stop, 3)
    assert done == [0, 1, 2], done
    return tuple(done)


def two_pollers() -> tuple[int, ...]:
    """Correct: two workers poll one queue until stopped, then drain it."""
    q: queue.Queue[int] = queue.Queue()
    stop = threading.Event()
    done: list[list[int]] = [[], []]  # (one list each: two appends to one list would race)
    workers = [threading.Thread(target=_poll_then_drain, args=(q, stop, mine, [])) for mine in done]
    workers[1].start()
    _feed(workers[0], q, stop, 2)
    workers[1].join()
    assert sorted(done[0] + done[1]) == [0, 1], done
    return tuple(map(len, done))


def stop_without_drain() -> tuple[int, ...]:
    """BUG: the worker leaves once stopped; what it had not taken is lost."""
    q: queue.Queue[int] = queue.Queue()
    stop = threading.Event()
    done: list[int] = []

    def worker() -> None:
        while not stop.is_set():
            try:
                item = q.get(timeout=0.05)
            except queue.Empty:
                continue
            done.append(item)

    _feed(threading.Thread(target=worker), q, stop, 3)
    assert done == [0, 1, 2], done
    return tuple(done)


def stop_checked_after_timeout() -> tuple[int, ...]:
    """BUG (review 14's p39): the worker returns when a get times out and stop is set, but the
    last put and the ``set`` can both land between the timeout and the check."""
    q: queue.Queue[int] = queue.Queue()
    stop = threading.Event()
    done: list[int] = []

    def worker() -> None:
        while True:
            try:
                item = q.get(timeout=0.05)
            except queue.Empty:
                if stop.is_set():
                    return
                continue
            done.append(item)

    _feed(threading.Thread(target=worker), q, stop, 3)
    assert done == [0, 1, 2], done
    return tuple(done)


def peeking_poll() -> frozenset[int]:
    """Correct; each timeout notes how many items were taken then (a set: a value noted again
    changes nothing). Which values can be noted depends on where the timeouts land."""
    q: queue.Queue[int] = queue.Queue()
    stop = threading.Event()
    done: list[int] = []
    seen: set[int] = set()

    def worker() -> None:
        while not stop.is_set():
            try:
                item = q.get(timeout=0.05)
            except queue.Empty:
                seen.add(len(done))
                continue
            done.append(item)

    _feed(threading.Thread(target=worker), q, stop, 2)
    return frozenset(seen)


def reading_the_clock() -> tuple[int, ...]:
    """``drain_after_stop`` whose worker reads the clock each round: what the clock is shows."""
    q: queue.Queue[int] = queue.Queue()
    stop = threading.Event()
    done: list[int] = []
    _feed(threading.Thread(target=_poll_then_drain, args=(q, stop, done, [], True)), q, stop, 3)
    return tuple(done)


def polling_for_ever() -> None:
    """BUG (hangs): nobody sets ``stop``; the worker polls it and main polls the join."""
    stop = threading.Event()

    def worker() -> None:
        while not stop.wait(0.01):
            pass

    t = threading.Thread(target=worker)
    t.start()
    while t.is_alive():
        t.join(0.1)
