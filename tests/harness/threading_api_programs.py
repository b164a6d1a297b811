"""Programs on the rest of the ``threading`` API (tests/harness/test_patched_catalogue.py):
``sys.exit`` in a thread, the thread list and the main thread, futures waited on as a set,
threads started with ``_thread``. Each was a wrong answer of an outside review (session 36)."""

from __future__ import annotations

import _thread
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed, wait

from tests.harness.expected import Fails, Races
from tests.harness.program_threads import start_and_join


class Box:
    def __init__(self) -> None:
        self.v = 0


def racy_then_thread_exit() -> None:
    """BUG: a lost update; each worker then ends itself with sys.exit(), which ends only it."""
    box = Box()

    def work() -> None:
        box.v += 1
        sys.exit()

    start_and_join(work, work)


def exit_with_status() -> None:
    """The main thread ends the program with status 3: a failure of the program."""
    sys.exit(3)


def threads_exit_quietly() -> None:
    """Correct: a thread's sys.exit() ends it quietly; the main thread's status 0 is a success."""
    start_and_join(sys.exit, sys.exit)
    sys.exit(0)


def join_every_other_thread() -> None:
    """Correct: the program joins every thread of ``threading.enumerate()`` but itself."""
    box, lock = Box(), threading.Lock()

    def work() -> None:
        with lock:
            box.v += 1

    for _ in range(2):
        threading.Thread(target=work).start()
    for t in threading.enumerate():
        if t is not threading.current_thread():
            t.join()
    with lock:
        assert box.v == 2, box.v


def main_thread_identity() -> None:
    assert threading.current_thread() is threading.current_thread()
    assert threading.current_thread() is threading.main_thread()
    assert threading.active_count() == 1


def _double(x: int) -> int:
    return 2 * x


def futures_as_completed() -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(_double, i) for i in range(2)]
        assert sorted(f.result() for f in as_completed(futures)) == [0, 2]


def futures_waited() -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        done, _ = wait([pool.submit(_double, i) for i in range(2)])
        assert len(done) == 2


def low_level_thread_race() -> None:
    """BUG: the main thread's update races with the worker's."""
    box, done = Box(), threading.Event()

    def work() -> None:
        box.v += 1
        done.set()

    _thread.start_new_thread(work, ())
    box.v += 1
    done.wait()


# What each program gives (tests/harness/test_patched_catalogue.py): each was a wrong answer of
# session 36's review (lanecheck exited with the program's status and no verdict, joined the real
# main thread for ever, or called a correct program not deterministic).
FOUND = [
    Races(racy_then_thread_exit, "Box.v"),
    Fails(exit_with_status, "exception", "ended the program with status 3 (SystemExit)"),
    Races(low_level_thread_race, "Box.v"),
]
PROVED = [
    threads_exit_quietly,
    join_every_other_thread,
    main_thread_identity,
    futures_as_completed,
    futures_waited,
]
