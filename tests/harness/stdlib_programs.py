"""Plain-``threading`` programs over the standard library's less basic pieces, for patch mode
(tests/harness/test_patch_stdlib.py): ``Queue.join``/``task_done``, daemon threads, ``Timer``,
``threading.local``, ``Barrier``, ``ThreadPoolExecutor`` and ``Thread`` subclasses, each defined
here at import time (before patching), as a user's module would be. The ``*_bug`` ones are wrong
on purpose."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from tests.harness.program_threads import join_all, run_copies, start_and_join

TLS = threading.local()
TLS.where = "set at import"


# ------------------------------------------------------------------- Queue.join and daemons


def _daemon_workers_then_join(workers: int, items: int, done_before_recording: bool) -> None:
    q: queue.Queue[int] = queue.Queue()
    done: list[int] = []
    mutex = threading.Lock()

    def worker() -> None:
        while True:
            item = q.get()
            if done_before_recording:
                q.task_done()
            with mutex:
                done.append(item)
            if not done_before_recording:
                q.task_done()

    for _ in range(workers):
        threading.Thread(target=worker, daemon=True).start()
    for item in range(items):
        q.put(item)
    q.join()
    with mutex:
        assert sorted(done) == list(range(items)), done


def queue_join_daemon_workers() -> None:
    """The idiom: daemon workers loop on ``get`` for ever; ``join`` waits for ``task_done``."""
    _daemon_workers_then_join(workers=2, items=2, done_before_recording=False)


def queue_join_bug() -> None:
    """``task_done`` before the work is recorded: ``join`` can return before it is."""
    _daemon_workers_then_join(workers=1, items=1, done_before_recording=True)


def queue_join_nobody_works() -> None:
    """An item put and never marked done: ``join`` waits for ever."""
    q: queue.Queue[int] = queue.Queue()
    q.put(1)
    q.join()


def task_done_too_often() -> None:
    q: queue.Queue[int] = queue.Queue()
    q.put(1)
    q.get()
    q.task_done()
    q.task_done()


def daemon_left_spinning() -> None:
    """A daemon thread that never ends does not keep the program going."""

    def spin() -> None:
        while True:
            time.sleep(1)

    threading.Thread(target=spin, daemon=True).start()


def zero_timeout_tries() -> None:
    """``acquire(timeout=0)`` and ``get(timeout=0)`` return at once, as a non-blocking call does:
    tries, not timed waits (three of them were ``bounded by timeout_limit=2`` before)."""
    sem = threading.Semaphore(0)
    items: queue.Queue[int] = queue.Queue()
    got: list[bool] = []

    def give() -> None:
        sem.release()
        items.put(1)

    t = threading.Thread(target=give)
    t.start()
    for _ in range(3):
        got.append(sem.acquire(timeout=0))
    with contextlib.suppress(queue.Empty):
        items.get(timeout=0)
    t.join()
    assert got.count(True) <= 1, got


def daemon_races_main_bug() -> None:
    """The daemon may take the lock and write before the main thread reads: the assertion can
    fail. Not one of the daemon's steps runs before the program's end in depth-first order."""
    lock = threading.Lock()
    state = {"x": 0}

    def write() -> None:
        with lock:
            state["x"] = 1

    threading.Thread(target=write, daemon=True).start()
    with lock:
        assert state["x"] == 0, state


def non_daemon_waits_for_ever_bug() -> None:
    never = threading.Event()
    threading.Thread(target=never.wait).start()


def daemon_is_inherited() -> None:
    seen: list[bool] = []

    def inner() -> None:
        seen.append(threading.current_thread().daemon)

    def outer() -> None:
        t = threading.Thread(target=inner)
        t.start()
        t.join()

    join_all([threading.Thread(target=outer, daemon=True)])
    assert seen == [True], seen


# ----------------------------------------------------------------------- clocks and Timer


def clock_moves_with_sleep() -> None:
    started, wall = time.monotonic(), time.time()
    time.sleep(5)
    # (a thread's successive reads are a microsecond apart, as a real clock's differ)
    assert 5 <= time.monotonic() - started < 5.001 and 5 <= time.time() - wall < 5.001


def deadline_loop() -> None:
    """Waits in a loop until a deadline read from ``time.monotonic``: a timed wait that times out
    moves the clock to its deadline, so the loop ends, as in real time."""
    cond = threading.Condition()
    ready: list[int] = []

    def producer() -> None:
        time.sleep(0.1)
        with cond:
            ready.append(1)
            cond.notify()

    threading.Thread(target=producer).start()
    deadline = time.monotonic() + 1.0
    with cond:
        while not ready:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            cond.wait(left)


def priority_queue_orders() -> None:
    jobs: queue.PriorityQueue[tuple[int, str]] = queue.PriorityQueue()
    taken: list[str] = []

    def consumer() -> None:
        for _ in range(2):
            taken.append(jobs.get()[1])

    t = threading.Thread(target=consumer)
    t.start()
    jobs.put((2, "b"))
    jobs.put((1, "a"))
    t.join()
    assert sorted(taken) == ["a", "b"], taken


def timer_fires() -> None:
    fired = threading.Event()
    t = threading.Timer(0.5, fired.set)
    t.start()
    t.join()
    assert fired.is_set()


def timer_cancelled() -> None:
    calls: list[int] = []
    t = threading.Timer(5.0, calls.append, args=(1,))
    t.start()
    t.cancel()
    t.join()
    assert calls == [], calls


def timer_race_bug() -> None:
    """Assumes the timer has not fired yet when the main thread looks."""
    fired = threading.Event()
    t = threading.Timer(1.0, fired.set)
    t.start()
    assert not fired.is_set()
    t.join()


# -------------------------------------------------------------------------- threading.local


def local_per_thread() -> None:
    here = threading.local()
    seen: list[bool] = []
    mutex = threading.Lock()

    def worker(n: int) -> None:
        here.value = n
        time.sleep(0)  # a scheduling point between the write and the read
        with mutex:
            seen.append(here.value == n)

    join_all([threading.Thread(target=worker, args=(n,)) for n in range(2)])
    assert seen == [True, True], seen


def local_made_at_import() -> None:
    """The main thread sees what the module set at import; another thread sees nothing."""
    assert TLS.where == "set at import"
    other: list[object] = []
    start_and_join(lambda: other.append(getattr(TLS, "where", None)))
    assert other == [None], other


def local_subclass_made_while_patched() -> None:
    class Counter(threading.local):
        def __init__(self, start: int) -> None:
            self.n = start

    counter = Counter(5)
    seen: list[int] = []
    mutex = threading.Lock()

    def worker() -> None:
        counter.n += 1
        with mutex:
            seen.append(counter.n)

    run_copies(worker)
    assert seen == [6, 6] and counter.n == 5, (seen, counter.n)


class ImportedCounter(threading.local):
    def __init__(self) -> None:
        self.n = 0


def local_subclass_from_import() -> None:
    """Its object made in the explored function: each thread's ``n`` its own, from 0."""
    counter = ImportedCounter()
    seen: list[int] = []
    mutex = threading.Lock()

    def worker() -> None:
        for _ in range(3):
            counter.n += 1
        with mutex:
            seen.append(counter.n)

    run_copies(worker)
    assert seen == [3, 3] and counter.n == 0, (seen, counter.n)


# -------------------------------------------------------- Barrier, executors, Thread classes


def barrier_meets() -> None:
    barrier = threading.Barrier(2)
    arrived: list[int] = []
    mutex = threading.Lock()

    def party(n: int) -> None:
        with mutex:
            arrived.append(n)
        barrier.wait()
        with mutex:
            assert len(arrived) == 2, arrived

    join_all([threading.Thread(target=party, args=(n,)) for n in range(2)])


def barrier_short_of_parties_bug() -> None:
    barrier = threading.Barrier(3)
    run_copies(barrier.wait)


def executor_two_submitters() -> None:
    pool = ThreadPoolExecutor(max_workers=1)
    results: list[int] = []
    mutex = threading.Lock()

    def submitter(n: int) -> None:
        future = pool.submit(lambda: n * 10)
        with mutex:
            results.append(future.result())

    join_all([threading.Thread(target=submitter, args=(n,)) for n in range(2)])
    pool.shutdown()
    assert sorted(results) == [0, 10], results


class Tally:
    def __init__(self) -> None:
        self.count = 0


def executor_lost_update_bug() -> None:
    tally = Tally()

    def bump() -> None:
        tally.count += 1

    with ThreadPoolExecutor(max_workers=2) as pool:
        for _ in range(2):
            pool.submit(bump)
    assert tally.count == 2, tally.count


class Worker(threading.Thread):
    """A ``Thread`` subclass defined at import: patch mode runs it as a controlled thread."""

    def __init__(self, jobs: queue.Queue[int], out: list[int], mutex: threading.Lock) -> None:
        super().__init__(daemon=True)
        self.jobs, self.out, self.mutex = jobs, out, mutex

    def run(self) -> None:
        while True:
            item = self.jobs.get()
            with self.mutex:
                self.out.append(item)
            self.jobs.task_done()


def thread_subclass_workers() -> None:
    jobs: queue.Queue[int] = queue.Queue()
    out: list[int] = []
    mutex = threading.Lock()
    for _ in range(2):
        Worker(jobs, out, mutex).start()
    for n in range(2):
        jobs.put(n)
    jobs.join()
    with mutex:
        assert sorted(out) == [0, 1], out


def executor_maps() -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        assert list(pool.map(lambda n: n * 2, range(3))) == [0, 2, 4]


def join_current_thread() -> None:
    refused: list[str] = []

    def joins_itself() -> None:
        try:
            threading.current_thread().join()
        except RuntimeError as error:
            refused.append(str(error))

    start_and_join(joins_itself)
    assert refused == ["cannot join current thread"], refused


def philosophers_bug() -> None:
    """Each takes its left fork, then its right: all three can hold one and wait for ever."""
    forks = [threading.Lock() for _ in range(3)]

    def eat(seat: int) -> None:
        with forks[seat], forks[(seat + 1) % 3]:
            pass

    join_all([threading.Thread(target=eat, args=(seat,)) for seat in range(3)])


def misuse_raises_as_threading_does() -> None:
    """Releasing an unlocked lock, another thread's ``RLock`` and waiting on a condition not held
    raise ``RuntimeError``, as with the real primitives; a plain ``Lock`` may be released by
    another thread than the one that took it."""
    refused: list[str] = []

    def expect_refusal(action: Callable[[], object], what: str) -> None:
        try:
            action()
        except RuntimeError:
            refused.append(what)

    lock, rlock, cond = threading.Lock(), threading.RLock(), threading.Condition()
    expect_refusal(lock.release, "unlocked")
    expect_refusal(cond.wait, "wait")
    expect_refusal(cond.notify, "notify")
    rlock.acquire()
    lock.acquire()
    join_all([threading.Thread(target=expect_refusal, args=(rlock.release, "rlock of another"))])
    start_and_join(lock.release)  # a Lock has no owner
    rlock.release()
    assert not lock.locked()
    assert refused == ["unlocked", "wait", "notify", "rlock of another"], refused
