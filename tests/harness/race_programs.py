"""Plain ``threading`` programs for the data-race detector (tests/harness/test_races.py): each is
run unmodified in patch mode; the racy ones have exactly one bug, an unsynchronised access."""

from __future__ import annotations

import queue
import threading

LIMIT = 2


class Counter:
    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()

    def racy_inc(self) -> None:
        self.count += 1  # read-modify-write with no lock: the lost update

    def locked_inc(self) -> None:
        with self.lock:
            self.count += 1

    def released_early_inc(self) -> None:
        with self.lock:
            value = self.count
        self.count = value + 1  # looks locked, but the write is after the release


def _run(*targets: object) -> None:
    threads = [threading.Thread(target=t) for t in targets]  # type: ignore[arg-type]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def lost_update() -> None:
    c = Counter()
    _run(c.racy_inc, c.racy_inc)
    assert c.count == 2, f"lost update: {c.count}"


def locked_counter() -> None:
    c = Counter()
    _run(c.locked_inc, c.locked_inc)
    assert c.count == 2


def released_early() -> None:
    c = Counter()
    _run(c.released_early_inc, c.released_early_inc)


class Cache:
    def __init__(self) -> None:
        self.data: dict[str, object] = {}
        self.lock = threading.Lock()
        self.made = 0

    def racy_get(self, key: str) -> object:
        if key not in self.data:  # check ...
            self.data[key] = object()  # ... then act: both threads may create it
        return self.data[key]

    def locked_get(self, key: str) -> object:
        with self.lock:
            if key not in self.data:
                self.data[key] = object()
            return self.data[key]


def dict_check_then_act() -> None:
    c = Cache()
    _run(lambda: c.racy_get("a"), lambda: c.racy_get("a"))


def dict_locked() -> None:
    c = Cache()
    _run(lambda: c.locked_get("a"), lambda: c.locked_get("a"))


CONFIG = {"size": 3}


def read_only_sharing() -> None:
    """Both threads only read shared data (a module constant, a shared list and attribute)."""
    shared = Counter()
    items = [1, 2, 3]
    seen: list[list[int]] = [[], []]

    def reader(i: int) -> None:
        for x in items:
            if x < CONFIG["size"] + shared.count:
                seen[i].append(x)  # each thread appends to its own list

    _run(lambda: reader(0), lambda: reader(1))
    assert seen[0] == seen[1]


def through_condition() -> None:
    cond = threading.Condition()
    box: dict[str, int] = {}

    def producer() -> None:
        box["v"] = 1  # plain write, published by the notify under the lock
        with cond:
            box["ready"] = 1
            cond.notify()

    def consumer() -> None:
        with cond:
            while "ready" not in box:
                cond.wait()
        assert box["v"] == 1

    _run(producer, consumer)


def through_queue() -> None:
    q: queue.Queue[dict[str, int]] = queue.Queue()

    def producer() -> None:
        msg = {"v": 0}
        msg["v"] = 1
        q.put(msg)

    def consumer() -> None:
        msg = q.get()
        msg["v"] += 1

    _run(producer, consumer)


def through_event() -> None:
    ev = threading.Event()
    c = Counter()

    def writer() -> None:
        c.count = 5
        ev.set()

    def reader() -> None:
        ev.wait()
        assert c.count == 5

    _run(writer, reader)


def through_join() -> None:
    c = Counter()
    t = threading.Thread(target=c.racy_inc)
    t.start()
    t.join()
    c.count += 1  # after the join: ordered
    assert c.count == 2


class Flag:
    def __init__(self) -> None:
        self.stop = False


def declared_flag() -> object:
    """A stop flag read and written with no lock: a race unless ``Flag.stop`` is declared; the
    outcome is whether the worker ran."""
    f = Flag()
    ran: list[int] = []

    def worker() -> None:
        if not f.stop:
            ran.append(1)

    t = threading.Thread(target=worker)
    t.start()
    f.stop = True
    t.join()
    return lambda: len(ran)


def spin_on_flag() -> None:
    """A worker spinning on a flag that the main thread sets, with no lock and no sleep: a race.
    3.11 compiles the loop's condition twice (at the loop's entry and at its back edge)."""
    f = Flag()

    def worker() -> None:
        while not f.stop:
            pass

    t = threading.Thread(target=worker)
    t.start()
    f.stop = True
    t.join()
