"""Programs that use a queue's internals (tests/harness/test_patch_types.py): ``q.mutex``,
``q.queue``, ``q.not_empty``, ``q.not_full``, ``q.all_tasks_done``, ``q.unfinished_tasks``.
Naming them makes patch mode run CPython's queue code on controlled locks and conditions."""

from __future__ import annotations

import queue
import threading

from tests.harness.expected import Fails
from tests.harness.program_threads import start_and_join


def clear_under_mutex() -> None:
    """Correct: one thread empties the queue under its mutex (the idiom) while another puts; no
    item is lost or seen twice, and ``unfinished_tasks`` counts what was never marked done."""
    q: queue.Queue[int] = queue.Queue(maxsize=3)
    q.put(1)
    q.put(2)
    drained: list[int] = []

    def drain() -> None:
        with q.mutex:
            drained.extend(q.queue)
            q.queue.clear()
            q.unfinished_tasks -= len(drained)
            q.all_tasks_done.notify_all()
            q.not_full.notify_all()

    def put() -> None:
        q.put(3)

    start_and_join(drain, put)
    left = []
    while not q.empty():
        left.append(q.get_nowait())
        q.task_done()
    assert sorted(drained + left) == [1, 2, 3], (drained, left)
    assert q.unfinished_tasks == 0 and q.maxsize == 3
    q.join()


def wait_on_all_tasks_done() -> None:
    """Correct: a ``join`` with a timeout, written on ``all_tasks_done`` (a common recipe)."""
    q: queue.Queue[int] = queue.Queue()
    done: list[int] = []

    def worker() -> None:
        item = q.get()
        done.append(item)
        q.task_done()

    t = threading.Thread(target=worker)
    t.start()
    q.put(7)
    with q.all_tasks_done:
        while q.unfinished_tasks:
            q.all_tasks_done.wait()
    assert done == [7], done
    t.join()


def peek_without_mutex() -> None:
    """BUG: a peek at ``q.queue`` outside the mutex: the item may not be put yet."""
    q: queue.Queue[int] = queue.Queue()
    t = threading.Thread(target=q.put, args=(1,))
    t.start()
    with q.not_empty:
        pass
    assert list(q.queue) == [1], "the item is not there yet"
    t.join()


# What each program gives (tests/harness/test_patched_catalogue.py): a queue's internals
# synchronise with its operations, and a peek outside its mutex is caught.
FOUND = [Fails(peek_without_mutex, "assertion", "the item is not there yet")]
PROVED = [clear_under_mutex, wait_on_all_tasks_done]
