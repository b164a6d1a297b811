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


TABLE = {"a": 1, "b": 2}
MEMBERS = {"x", "y"}
SEEN: list[str] = []


def _walk_table() -> None:
    for key in TABLE:  # (its iterator is in this frame at each lock step)
        with LOCK:
            SEEN.append(key)


def _walk_members() -> None:
    for name in MEMBERS:
        with LOCK:
            SEEN.append(name)


def _mark() -> None:
    with LOCK:
        SEEN.append("mark")


def iterators_at_each_step() -> object:
    """Two threads iterate a dict and a set, a lock step for each item; a third marks the list
    once. Where the mark falls among their items is the outcome, so every position of each
    iterator must be a state of its own."""
    SEEN.clear()
    threads = [threading.Thread(target=f) for f in (_walk_table, _walk_members, _mark)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tuple(SEEN)


def _add_member() -> None:
    with LOCK:
        MEMBERS.add("z")


def iterate_while_another_adds() -> object:
    """A set changed in size while another thread iterates it: ``RuntimeError`` in the reader."""
    MEMBERS.clear()
    MEMBERS.update({"x", "y"})
    SEEN.clear()
    threads = [threading.Thread(target=_walk_members), threading.Thread(target=_add_member)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(SEEN)
