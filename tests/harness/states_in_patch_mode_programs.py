"""Programs for the state search in patch mode (``tests/harness/test_states_in_patch_mode.py``):
every state of each can be fingerprinted (or all but the few named there)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

LOCK = threading.Lock()
COUNT = [0]


def _work() -> None:
    for _ in range(2):
        with LOCK:
            COUNT[0] += 1


def plain_counters() -> object:
    COUNT[0] = 0
    workers = [threading.Thread(target=_work) for _ in range(2)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return COUNT[0]


def _add(i: int) -> int:
    with LOCK:
        COUNT[0] += i
    return i


def thread_pool() -> object:
    """A pool hands each worker a weak reference to itself (``concurrent.futures.thread``)."""
    COUNT[0] = 0
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(_add, i) for i in (1, 2)]
    return COUNT[0], tuple(f.result() for f in futures)
