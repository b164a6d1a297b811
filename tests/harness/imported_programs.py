"""Programs whose synchronisation objects are made at import, before ``patched()`` (tests/harness/
test_patch_imported.py): a module's lock, queue, condition and event, a class body's lock, and
an object made at import holding its own lock. Each was a wrong answer before session 35."""

from __future__ import annotations

import itertools
import queue
import random
import threading
import time

from tests.harness.expected import Fails
from tests.harness.program_threads import run_copies
from tests.harness.program_threads import start_and_join as _run

total = 0
lock = threading.Lock()
results: queue.Queue[int] = queue.Queue()
ready = threading.Condition(lock)
box: list[int] = []
stack: queue.LifoQueue[int] = queue.LifoQueue()
simple: queue.SimpleQueue[int] = queue.SimpleQueue()
opened = threading.Event()
opened.set()  # set at import: every execution starts with it set


class Registry:
    _lock = threading.Lock()
    count = 0

    def add(self) -> None:
        with Registry._lock:
            Registry.count += 1


class Counter:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.n = 0

    def inc(self) -> None:
        with self.lock:
            self.n += 1


COUNTER = Counter()


def module_lock_counter() -> None:
    """Correct: the module's lock orders the increments (was a false data race)."""
    global total
    total = 0

    def inc() -> None:
        global total
        with lock:
            total += 1

    _run(inc, inc)
    assert total == 2


def module_lock_sleep_inside() -> None:
    """Correct, with a sleep while holding the module's lock (was a hang on the real lock)."""
    counts = [0]

    def inc() -> None:
        with lock:
            v = counts[0]
            time.sleep(0)
            counts[0] = v + 1

    _run(inc, inc)
    assert counts[0] == 2


def queue_order_assumed() -> None:
    """Buggy: two threads put into the module's queue; main assumes their order (was proved)."""
    _run(lambda: results.put(1), lambda: results.put(2))
    assert [results.get(), results.get()] == [1, 2]


def condition_handoff() -> None:
    """Correct: a hand-off on the module's condition, made on the module's lock (was a hang)."""
    del box[:]

    def consumer() -> None:
        with ready:
            while not box:
                ready.wait()
            assert box == [1]

    def producer() -> None:
        with lock:  # the condition's own lock: one lock, as at import
            box.append(1)
            ready.notify()

    _run(consumer, producer)


def event_set_at_import() -> None:
    """Correct: the event was set at import, so the wait returns at once in every execution."""
    _run(opened.wait, opened.wait)


def class_lock_counter() -> None:
    Registry.count = 0
    r = Registry()
    _run(r.add, r.add)
    assert Registry.count == 2


def instance_made_at_import() -> None:
    COUNTER.n = 0
    _run(COUNTER.inc, COUNTER.inc)
    assert COUNTER.n == 2


hits = 0  # only ``module_counter_not_reset`` touches these two, once per process
hit_log: list[int] = []


def module_counter_not_reset() -> None:
    """Correct on a fresh interpreter: a module global and a module list, never reset by the
    program (each execution must start from the module as it was)."""

    def inc() -> None:
        global hits
        with lock:
            hits += 1
            hit_log.append(1)

    _run(inc, inc)
    assert hits == 2 and hit_log == [1, 1], (hits, hit_log)


def lazy_executor_import() -> None:
    """Correct: the executor is imported inside the function, as a user may (was an ImportError)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(abs, [-1, -2])) == [1, 2]


def lifo_and_simple_queues() -> None:
    """Correct: a LIFO queue made at import stays LIFO, a SimpleQueue made at import is controlled
    (it was FIFO, and the SimpleQueue hung the process on the real one)."""

    def producer() -> None:
        stack.put(1)
        stack.put(2)
        simple.put(3)

    _run(producer)
    assert [stack.get(), stack.get()] == [2, 1]
    assert simple.get() == 3


class Init:
    def __init__(self) -> None:
        self.done = False
        self.calls: list[int] = []


INIT = Init()


def first_caller_initialises() -> None:
    """Correct on a fresh interpreter: an object made at import, its attributes changed by the
    program (each execution starts from them as they were)."""
    lock = threading.Lock()

    def init() -> None:
        with lock:
            if not INIT.done:
                INIT.done = True
                INIT.calls.append(1)

    _run(init, init)
    assert INIT.calls == [1], INIT.calls


def random_draw(draws: list[float]) -> None:
    """Two threads under a lock, then one draw of the random module, kept by the caller."""

    def hold() -> None:
        with lock:
            pass

    _run(hold, hold)
    draws.append(random.random())


ids = itertools.count()
rng = random.Random(7)


def bump() -> None:
    with lock:
        bump.calls += 1  # type: ignore[attr-defined]


bump.calls = 0  # type: ignore[attr-defined]


def fresh_state_each_execution(seen: list[tuple[object, ...]]) -> None:
    """Two threads take an id each and bump a function's attribute; one draw of a module's own
    ``random.Random``: the same in every execution, as in a fresh interpreter."""
    taken: list[int] = []

    def work() -> None:
        with lock:
            taken.append(next(ids))
        bump()

    _run(work, work)
    seen.append((sorted(taken), bump.calls, rng.random()))  # type: ignore[attr-defined]


def _failing_action() -> None:
    raise RuntimeError("the barrier's action failed")


gate = threading.Barrier(2, action=_failing_action)


def barrier_action_at_import() -> None:
    """A barrier made at import keeps its action (session 37: its twin dropped it, and the failing
    action was proved never to run)."""
    run_copies(gate.wait)


# What each program gives (tests/harness/test_patched_catalogue.py): each proved one is correct on
# objects made at import, and its proof interleaved their operations (``PROOFS_INTERLEAVE``).
PROOFS_INTERLEAVE = True
FOUND = [Fails(barrier_action_at_import, "exception", "the barrier's action failed")]
PROVED = [
    module_lock_counter,
    module_lock_sleep_inside,
    condition_handoff,
    event_set_at_import,
    class_lock_counter,
    instance_made_at_import,
    module_counter_not_reset,
    lazy_executor_import,
    first_caller_initialises,
]
