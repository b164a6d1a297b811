"""Plain ``threading`` programs on the clocks from session 40's outside review (``/tmp/review7``:
p014, p015, p042, p079, p081, p082, p083, p108, p139, p172), explored in patch mode by
``test_clock_review7.py``. Each says whether it is correct in a real process."""

from __future__ import annotations

import datetime
import pickle
import threading
import time
from datetime import datetime as DateTime

from tests.harness.program_threads import join_all, run_copies, start_and_join

TTL = 60.0


def ttl_cache_checks_staleness_outside_the_lock() -> None:
    """Buggy (p081): ``last = 0.0`` means "never loaded", and a real clock is far past 0, so both
    threads see the cache stale outside the lock and both load it (with the clock at 0 the check
    was never true and the search proved it)."""
    lock = threading.Lock()
    state = {"last": 0.0, "loads": 0}

    def get() -> None:
        if time.monotonic() - state["last"] > TTL:
            with lock:
                state["loads"] += 1
                time.sleep(0.001)
                state["last"] = time.monotonic()

    run_copies(get)
    assert state["loads"] <= 1, state


def ttl_cache_first_call_loads() -> None:
    """Correct (p079): the first call finds "never loaded" (0.0) stale and loads."""
    lock = threading.Lock()
    state: dict[str, object] = {"cache": None, "last": 0.0}
    out: list[object] = []

    def get() -> None:
        with lock:
            last = state["last"]
            assert isinstance(last, float)
            if time.monotonic() - last > TTL:
                state["cache"] = "loaded"
                state["last"] = time.monotonic()
            out.append(state["cache"])

    run_copies(get)
    assert out == ["loaded", "loaded"], out


def wall_clock_is_a_plausible_date() -> None:
    """Correct (p015): ``time.time()`` is a date of this century, and ``localtime()`` (which
    reads the time when given none) agrees with it."""
    stamps: list[float] = []
    worker = threading.Thread(target=lambda: stamps.append(time.time()))
    worker.start()
    worker.join()
    assert time.gmtime(stamps[0]).tm_year >= 2020, stamps
    assert abs(stamps[0] - time.mktime(time.localtime())) < 3600, (stamps, time.localtime())


def throughput() -> None:
    """Correct (p082): elapsed ``perf_counter`` time across a computation is never 0."""
    rates: list[float] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        t0 = time.perf_counter()
        s = 0
        for i in range(n):
            s += i
        rate = n / (time.perf_counter() - t0)
        with lock:
            rates.append(rate)

    join_all([threading.Thread(target=work, args=(1000,)) for _ in range(2)])
    assert len(rates) == 2


def ids_from_the_clock_under_a_lock() -> None:
    """Correct (p083): ``monotonic_ns()`` read under a lock, twice by each of two threads, gives
    four different ids, in the order the lock was taken."""
    lock = threading.Lock()
    ids: list[int] = []

    def work() -> None:
        for _ in range(2):
            with lock:
                ids.append(time.monotonic_ns())

    run_copies(work)
    assert len(set(ids)) == 4 and ids == sorted(ids), ids


def child_reads_after_its_parent() -> None:
    """Correct: a thread started after its parent read the clock reads a later time."""
    before = time.monotonic()
    seen: list[float] = []
    child = threading.Thread(target=lambda: seen.append(time.monotonic()))
    child.start()
    child.join()
    assert seen[0] > before, (before, seen)
    assert time.monotonic() > seen[0], "the join orders the parent's read after the child's"


def busy_wait_until_a_deadline() -> None:
    """Correct (p108): a thread spins, reading the clock, until 10 ms have passed (with a frozen
    clock it never ended: reported as a livelock)."""
    out: list[int] = []

    def spin() -> None:
        deadline = time.monotonic() + 0.01
        n = 0
        while time.monotonic() < deadline:
            n += 1
        out.append(n)

    t = threading.Thread(target=spin)
    t.start()
    t.join()
    assert len(out) == 1


def datetime_beside_a_timed_wait() -> None:
    """Correct (p014): after a 50 ms timed wait that timed out, ``datetime.now()`` shows 50 ms
    passed (it read the real clock, the wait the virtual one)."""
    ev = threading.Event()
    res: list[tuple[bool, datetime.timedelta]] = []

    def waiter() -> None:
        start = datetime.datetime.now()
        ok = ev.wait(0.05)
        res.append((ok, datetime.datetime.now() - start))

    t = threading.Thread(target=waiter)
    t.start()
    t.join()
    ok, elapsed = res[0]
    assert ok or elapsed >= datetime.timedelta(seconds=0.05), elapsed


def datetimes_agree_with_time() -> None:
    """Correct: every way of reading the date agrees with ``time.time()``, what they make are
    real datetimes (``isinstance``, ``type``, ``pickle``), and they move with a sleep."""
    out: list[datetime.timedelta] = []

    def worker() -> None:
        wall = time.time()
        now, by_name, utc = datetime.datetime.now(), DateTime.now(), datetime.datetime.utcnow()
        today, dt_today = datetime.date.today(), datetime.datetime.today()
        aware = datetime.datetime.now(datetime.UTC)
        assert abs(now.timestamp() - wall) < 1 and abs(by_name.timestamp() - wall) < 1, (now, wall)
        assert abs(aware.timestamp() - wall) < 1 and abs(dt_today.timestamp() - wall) < 1
        assert abs((aware.replace(tzinfo=None) - utc).total_seconds()) < 1, (aware, utc)
        assert today == datetime.date.fromtimestamp(wall), (today, wall)
        for value in (now, by_name, utc, aware, dt_today):
            assert isinstance(value, datetime.datetime) and isinstance(value, DateTime)
            assert type(value) is type(datetime.datetime(2024, 1, 1)), type(value)
            assert pickle.loads(pickle.dumps(value)) == value
        time.sleep(3600)
        out.append(datetime.datetime.now() - now)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert out[0] >= datetime.timedelta(hours=1), out


def timeout_while_the_setter_could_run() -> None:
    """Correct in practice (p172): a 5 s timed wait for a hand-off a thread makes at once."""
    ready = threading.Event()
    t = threading.Thread(target=ready.set)
    t.start()
    assert ready.wait(5), "the hand-off did not come within 5 s"
    t.join()


def two_sleeps() -> None:
    """Correct in practice (p042): a 10 ms sleep ends long before a 500 ms one."""
    order: list[str] = []
    lock = threading.Lock()

    def sleeper(name: str, seconds: float) -> None:
        time.sleep(seconds)
        with lock:
            order.append(name)

    join_all(
        [
            threading.Thread(target=sleeper, args=("a", 0.01)),
            threading.Thread(target=sleeper, args=("b", 0.5)),
        ]
    )
    assert order == ["a", "b"], order


def repeating_timer_ticks_during_a_sleep() -> None:
    """Correct in practice (p139): a 10 ms repeating timer ticks during a 500 ms sleep."""
    ticks = [0]
    lock = threading.Lock()

    class RepeatTimer(threading.Timer):
        def run(self) -> None:
            while not self.finished.wait(self.interval):
                self.function(*self.args, **self.kwargs)

    def tick() -> None:
        with lock:
            ticks[0] += 1

    timer = RepeatTimer(0.01, tick)
    timer.start()
    time.sleep(0.5)
    timer.cancel()
    timer.join()
    with lock:
        assert ticks[0] >= 1, ticks


def stop_flag_after_a_sleep() -> None:
    """Correct in practice (p157): a worker that sleeps 10 ms a round has ticked once by the time
    a 20 ms sleep ends and the stop flag is set."""
    stop = threading.Event()
    ticks = [0]

    def work() -> None:
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.01)

    t = threading.Thread(target=work)
    t.start()
    time.sleep(0.02)
    stop.set()
    t.join()
    assert ticks[0] >= 1


def unlocked_write_ordered_by_a_sleep() -> None:
    """Buggy (p041): a sleep orders an unlocked write before a read only in practice."""
    box = {"v": 0}

    def writer() -> None:
        box["v"] = 1

    def reader() -> None:
        time.sleep(0.1)
        assert box["v"] == 1

    start_and_join(reader, writer)


def slow_path_after_a_long_computation() -> None:
    """Buggy (p137) in a real run, where the computation takes ~10 ms: the slow path appends to
    a shared list without a lock. Compute time is not modelled: the explorer sees 1 us."""
    leftover: list[int] = []

    def worker(i: int) -> None:
        t0 = time.perf_counter()
        sum(range(200_000))
        if time.perf_counter() - t0 > 0.001:
            leftover.append(i)

    join_all([threading.Thread(target=worker, args=(i,)) for i in range(2)])


def check_then_act() -> None:
    """Buggy, with no sleep and no timeout: a read and a write in two critical sections."""
    lock = threading.Lock()
    state = {"n": 0}

    def bump() -> None:
        with lock:
            n = state["n"]
        with lock:
            state["n"] = n + 1

    run_copies(bump)
    assert state["n"] == 2, state


def main_timeout() -> None:
    """The CLI's entry point for ``timeout_while_the_setter_could_run``."""
    timeout_while_the_setter_could_run()


def main_sleeps() -> None:
    """The CLI's entry point for ``two_sleeps``."""
    two_sleeps()
