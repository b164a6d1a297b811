"""Small classic programs that prove the harness (used by its tests and by ``lanecheck explore``).

Each is a ``test_fn(rt)``: it builds the program with ``rt`` only, starts threads, and returns a
final check. Correct and buggy variants sit side by side.
"""

from __future__ import annotations

from collections.abc import Callable

from model_checks.harness.runtime import ControlledRuntime

Program = Callable[[ControlledRuntime], object]


def _join_all(rt: ControlledRuntime, bodies: list[Callable[[], None]]) -> None:
    threads = [rt.start_thread(body, f"t{i}") for i, body in enumerate(bodies)]
    for t in threads:
        t.join()


def counter(threads: int = 2, locked: bool = False) -> Program:
    """Read, yield, write: lost updates unless the lock is held."""

    def program(rt: ControlledRuntime) -> object:
        n = [0]
        lock = rt.lock("counter.lock")

        def inc() -> None:
            if locked:
                lock.acquire()
            value = n[0]
            rt.yield_point("between read and write")
            n[0] = value + 1
            if locked:
                lock.release()

        _join_all(rt, [inc] * threads)

        def final() -> int:
            assert n[0] == threads, f"lost update: counter is {n[0]}, expected {threads}"
            return n[0]

        return final

    return program


class Tally:
    """A shared counter with nothing but a plain attribute (``plain_counter``)."""

    def __init__(self) -> None:
        self.count = 0


def plain_counter(threads: int = 2, locked: bool = False) -> Program:
    """``tally.count += 1`` in every thread, with no yield point marking the shared access: the
    lost update the explorer cannot see at synchronisation points alone. The race detector
    reports it; ``interleave_races`` also shows the wrong final count. Locked, it is correct."""

    def program(rt: ControlledRuntime) -> object:
        tally = Tally()
        lock = rt.lock("tally.lock")

        def inc() -> None:
            if locked:
                with lock:
                    tally.count += 1
            else:
                tally.count += 1

        _join_all(rt, [inc] * threads)

        def final() -> int:
            assert tally.count == threads, f"lost update: count is {tally.count}, expected {threads}"
            return tally.count

        return final

    return program


def cas_counter(threads: int = 2, increments: int = 1) -> Program:
    """A lock-free counter: load, then CAS until it sticks."""

    def program(rt: ControlledRuntime) -> object:
        cell = rt.atomic_int(0, "cell")

        def inc() -> None:
            for _ in range(increments):
                while True:
                    old = cell.load()
                    if cell.compare_and_swap(old, old + 1):
                        break

        _join_all(rt, [inc] * threads)

        def final() -> int:
            value = cell.load()
            assert value == threads * increments, value
            return value

        return final

    return program


def lock_order(inverted: bool = True) -> Program:
    """Two threads take two locks; in opposite orders they can deadlock."""

    def program(rt: ControlledRuntime) -> object:
        a, b = rt.lock("A"), rt.lock("B")

        def first() -> None:
            with a, b:
                pass

        def second() -> None:
            if inverted:
                with b, a:
                    pass
            else:
                with a, b:
                    pass

        _join_all(rt, [first, second])
        return None

    return program


def handoff(use_while: bool = False, notify: bool = True) -> Program:
    """A consumer waits for one item on a condition. ``if`` instead of ``while`` breaks under
    spurious wakeups; a producer that forgets to notify strands the consumer."""

    def program(rt: ControlledRuntime) -> object:
        cond = rt.condition(rt.lock("mutex"), "not_empty")
        items: list[int] = []
        got: list[int] = []

        def consumer() -> None:
            with cond:
                if use_while:
                    while not items:
                        cond.wait()
                elif not items:
                    cond.wait()
                got.append(items.pop(0))

        def producer() -> None:
            with cond:
                items.append(1)
                if notify:
                    cond.notify()

        rt.pending_work(lambda: bool(items))
        _join_all(rt, [consumer, producer])

        def final() -> tuple[int, ...]:
            assert got == [1], got
            return tuple(got)

        return final

    return program


def timed_wait(timeout: float = 1.0) -> Program:
    """A waiter gives up after a (virtual) timeout unless the setter gets there first."""

    def program(rt: ControlledRuntime) -> object:
        ev = rt.event("ready")
        seen: list[bool] = []

        def waiter() -> None:
            seen.append(ev.wait(timeout))

        def setter() -> None:
            ev.set()

        _join_all(rt, [waiter, setter])
        start = rt.monotonic()

        def final() -> tuple[bool, float]:
            return seen[0], start

        return final

    return program


def independent(threads: int = 3, ops: int = 2) -> Program:
    """Threads touching only their own atomics: one execution suffices under DPOR."""

    def program(rt: ControlledRuntime) -> object:
        cells = [rt.atomic_int(0, f"c{i}") for i in range(threads)]

        def body(i: int) -> Callable[[], None]:
            def run() -> None:
                for _ in range(ops):
                    cells[i].fetch_add(1)

            return run

        _join_all(rt, [body(i) for i in range(threads)])

        def final() -> tuple[int, ...]:
            return tuple(c.load() for c in cells)

        return final

    return program


def bounded_buffer(capacity: int = 1, items: int = 2, producers: int = 1, consumers: int = 1) -> Program:
    """A correct bounded buffer on one mutex and two conditions (while-loops around wait)."""

    def program(rt: ControlledRuntime) -> object:
        mutex = rt.lock("buf.mutex")
        not_full = rt.condition(mutex, "not_full")
        not_empty = rt.condition(mutex, "not_empty")
        buf: list[int] = []
        out: list[int] = []
        total = items * producers
        per_consumer = total // consumers

        def produce(p: int) -> Callable[[], None]:
            def run() -> None:
                for i in range(items):
                    with mutex:
                        while len(buf) >= capacity:
                            not_full.wait()
                        buf.append(p * 100 + i)
                        not_empty.notify()

            return run

        def consume() -> None:
            for _ in range(per_consumer):
                with mutex:
                    while not buf:
                        not_empty.wait()
                    out.append(buf.pop(0))
                    not_full.notify()

        rt.invariant(lambda: len(buf) <= capacity, "capacity")
        rt.pending_work(lambda: bool(buf))
        _join_all(rt, [produce(p) for p in range(producers)] + [consume] * consumers)

        def final() -> tuple[int, ...]:
            assert sorted(out) == sorted(p * 100 + i for p in range(producers) for i in range(items)), out
            return tuple(out)

        return final

    return program


def parking_pool(workers: int = 2, tasks: int = 2, recheck: bool = False) -> Program:
    """A worker pool on one mutex: the main thread submits ``tasks`` items (each with a notify),
    waits until all ran, then stops the workers. A worker that finds the queue empty releases the
    mutex, takes it again and parks; with ``recheck=False`` it parks without looking at the queue
    again (BUG: a submission in that window notified nobody, so the item is stranded once every
    worker parks: a lost wakeup needing few preemptions, which DPOR's depth-first order reaches
    only after ~17,000 executions and PCT within a few hundred). ``recheck=True`` waits in a loop
    on "queue empty and not stopped" (correct, but its space is large: 2 workers and 1 task take
    DPOR ~40,000 executions)."""

    def program(rt: ControlledRuntime) -> object:
        mutex = rt.lock("pool.mutex")
        work = rt.condition(mutex, "work")
        finished = rt.condition(mutex, "finished")
        queue: list[int] = []
        ran: list[int] = []
        stop = [False]

        def worker() -> None:
            while True:
                with mutex:
                    if queue:
                        item: int | None = queue.pop(0)
                    elif stop[0]:
                        return
                    else:
                        item = None
                if item is None:
                    with mutex:
                        if recheck:
                            while not queue and not stop[0]:
                                work.wait()
                        elif not stop[0]:
                            work.wait()  # BUG: parks without re-checking the queue
                    continue
                with mutex:
                    ran.append(item)
                    finished.notify_all()

        rt.pending_work(lambda: bool(queue))
        threads = [rt.start_thread(worker, f"w{i}") for i in range(workers)]
        for i in range(tasks):
            with mutex:
                queue.append(i)
                work.notify()
        with mutex:
            while len(ran) < tasks:
                finished.wait()
            stop[0] = True
            work.notify_all()
        for t in threads:
            t.join()

        def final() -> tuple[int, ...]:
            assert sorted(ran) == list(range(tasks)), ran
            return tuple(sorted(ran))

        return final

    return program


PROGRAMS: dict[str, Callable[[], Program]] = {
    "counter-racy": lambda: counter(2, locked=False),
    "counter-locked": lambda: counter(2, locked=True),
    "counter-plain": lambda: plain_counter(2, locked=False),
    "counter-plain-locked": lambda: plain_counter(2, locked=True),
    "cas-counter": lambda: cas_counter(2, 2),
    "lock-order-inversion": lambda: lock_order(True),
    "lock-order-consistent": lambda: lock_order(False),
    "handoff-if": lambda: handoff(use_while=False),
    "handoff-while": lambda: handoff(use_while=True),
    "handoff-missing-notify": lambda: handoff(use_while=True, notify=False),
    "timed-wait": lambda: timed_wait(),
    "independent": lambda: independent(3, 2),
    "bounded-buffer": lambda: bounded_buffer(1, 2, 2, 2),
    "pool-park-without-recheck": lambda: parking_pool(2, 2, recheck=False),
}
