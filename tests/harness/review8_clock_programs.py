"""Plain ``threading`` programs on the clocks from session 40's eighth outside review
(``/tmp/review8``: r015, r048, r063, r066, r074, r102, r113), explored in patch mode by
``test_review8_clock.py``. Each says whether it is correct in a real process. The times taken
here at import are real ones, taken before any check begins."""

from __future__ import annotations

import os
import queue
import tempfile
import threading
import time

from tests.harness.program_threads import run_copies

LOADED = time.monotonic()
WALL_AT_IMPORT = time.time()
DEADLINE = time.monotonic() + 60

# what the executions of the running check read (``test_review8_clock.py`` clears it)
READS: list[tuple[float, int, float, int, float]] = []


def _work() -> int:
    s = 0
    for i in range(200):
        s += i
    return s


def fresh_since_import_counts_without_the_lock() -> None:
    """Buggy (r102): a config loaded at import is fresh for 60 s, in which readers bump a hit
    counter with no lock (a lost update); the stale path is locked."""
    stats = {"hits": 0}
    lock = threading.Lock()

    def read() -> None:
        if time.monotonic() - LOADED < 60:
            v = stats["hits"]
            _work()
            stats["hits"] = v + 1
        else:
            with lock:
                stats["hits"] += 1

    run_copies(read, 2)
    assert stats["hits"] == 2, stats


def elapsed_since_import() -> None:
    """Correct (r048): the program ends within a minute of its import, on either clock."""
    t = threading.Thread(target=_work)
    t.start()
    t.join()
    assert 0 <= time.monotonic() - LOADED < 60, time.monotonic() - LOADED
    assert 0 <= time.time() - WALL_AT_IMPORT < 60, time.time() - WALL_AT_IMPORT


def age_of_a_file_just_written() -> None:
    """Correct (r063): a worker writes a file; its age by ``time.time()`` is under a minute."""
    fd, path = tempfile.mkstemp()
    os.close(fd)

    def write() -> None:
        with open(path, "w") as f:
            f.write("x")

    t = threading.Thread(target=write)
    t.start()
    t.join()
    age = time.time() - os.path.getmtime(path)
    os.unlink(path)
    assert -60 < age < 60, age


def get_until_a_deadline_set_at_import() -> None:
    """Correct (r113): a worker waits for an item until a deadline set at import; main puts it
    at once (with virtual timeouts the wait may end early, the documented timing note)."""
    q: queue.Queue[str] = queue.Queue()
    got: list[str] = []

    def w() -> None:
        got.append(q.get(timeout=max(0.0, DEADLINE - time.monotonic())))

    t = threading.Thread(target=w)
    t.start()
    q.put("item")
    t.join()
    assert got == ["item"], got


def clock_gettime_across_a_timed_wait() -> None:
    """Buggy (r015): a 0.2 s timed wait passes a 0.1 s deadline read by ``clock_gettime``."""
    start = time.clock_gettime(time.CLOCK_MONOTONIC)
    threading.Event().wait(0.2)
    assert time.clock_gettime(time.CLOCK_MONOTONIC) - start < 0.1, "deadline passed"


def clock_gettime_ns_across_a_joined_wait() -> None:
    """Buggy (r066): a worker's 0.3 s wait, joined, passes a 0.1 s budget on CLOCK_REALTIME."""
    t0 = time.clock_gettime_ns(time.CLOCK_REALTIME)
    t = threading.Thread(target=lambda: threading.Event().wait(0.3))
    t.start()
    t.join()
    assert time.clock_gettime_ns(time.CLOCK_REALTIME) - t0 < 100_000_000, "slow"


def clock_gettime_agrees_with_monotonic() -> None:
    """Correct: ``monotonic`` reads ``CLOCK_MONOTONIC`` and ``time`` ``CLOCK_REALTIME`` (Linux),
    so each pair read in a row is in order and close, across a sleep too."""
    for _ in range(2):
        a = time.monotonic()
        b = time.clock_gettime(time.CLOCK_MONOTONIC)
        c = time.time()
        d = time.clock_gettime_ns(time.CLOCK_REALTIME)
        assert a < b < a + 0.001 and c * 1e9 < d < c * 1e9 + 1e6, (a, b, c, d)
        time.sleep(5)


def stamps_of_two_threads_in_start_order() -> None:
    """Buggy (review 8's r072): two threads stamp ``monotonic_ns()`` with nothing ordering them,
    and the program takes the first started's stamp to be the earlier (or at least distinct)."""
    stamps: dict[str, int] = {}

    def w(name: str) -> None:
        stamps[name] = time.monotonic_ns()

    a = threading.Thread(target=w, args=("a",))
    b = threading.Thread(target=w, args=("b",))
    a.start()
    b.start()
    a.join()
    b.join()
    assert stamps["a"] < stamps["b"], stamps


def child_stamps_after_its_parent() -> None:
    """Correct: a thread started after its parent's read reads a later time (``_ns`` form)."""
    stamps: list[int] = [time.monotonic_ns()]
    t = threading.Thread(target=lambda: stamps.append(time.monotonic_ns()))
    t.start()
    t.join()
    assert stamps[0] < stamps[1], stamps


def record_reads() -> None:
    """Correct: records what the clocks read after a worker that takes a lock main takes too
    (two orders, the same times: no other thread reads the clock) (``READS``)."""
    lock = threading.Lock()

    def w() -> None:
        with lock:
            _work()

    t = threading.Thread(target=w)
    t.start()
    with lock:
        _work()
    t.join()
    READS.append((time.monotonic(), time.monotonic_ns(), time.time(), time.time_ns(), time.perf_counter()))


def main_ttl() -> None:
    fresh_since_import_counts_without_the_lock()


def gettime_against_a_timeout() -> None:
    """Buggy: a reader's ``clock_gettime(CLOCK_BOOTTIME)`` before or after another thread's 1 s
    timeout (no common object): DPOR must run both orders, as for ``monotonic()``."""
    never_set = threading.Event()
    seen: list[float] = []
    start = time.clock_gettime(time.CLOCK_BOOTTIME)
    waiter = threading.Thread(target=never_set.wait, args=(1.0,))
    reader = threading.Thread(target=lambda: seen.append(time.clock_gettime(time.CLOCK_BOOTTIME) - start))
    waiter.start()
    reader.start()
    waiter.join()
    reader.join()
    assert seen[0] < 1.0, f"the reader ran {seen[0]} s after the start"
