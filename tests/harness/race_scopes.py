"""Plain ``threading`` programs whose shared data lives outside an instance attribute or a
container (tests/harness/test_patched_catalogue.py): a closure's variable, a module's attribute, a
class's attribute, an attribute reached with ``getattr``/``setattr``, the items of a list. The
racy ones have one bug, an unsynchronised access; the others must be proved race-free."""

from __future__ import annotations

import heapq
import sys
import threading
from collections import defaultdict
from collections.abc import Callable

from tests.harness.expected import Races
from tests.harness.program_threads import start_and_join as _run

hits = 0  # a module global, also written as ``this.hits`` through the module object
this = sys.modules[__name__]


# ---------------------------------------------------------------- closures


def closure_lost_update() -> None:
    count = 0

    def inc() -> None:
        nonlocal count
        count += 1  # the closure's cell, read and written with no lock

    _run(inc, inc)
    assert count == 2, f"lost update: {count}"


def closure_locked() -> None:
    count = 0
    lock = threading.Lock()

    def inc() -> None:
        nonlocal count
        with lock:
            count += 1

    _run(inc, inc)
    assert count == 2


def closure_flag() -> object:
    """A worker reads a flag the main thread sets, both through the closure: a race."""
    stop = False
    ran: list[int] = []

    def worker() -> None:
        if not stop:
            ran.append(1)

    t = threading.Thread(target=worker)
    t.start()
    stop = True
    t.join()
    return lambda: len(ran)


def closure_read_only() -> None:
    """Threads read closure variables (data and a function) that nothing writes after the start."""
    limit = 3
    seen: list[list[int]] = [[], []]

    def small(x: int) -> bool:
        return x < limit

    def reader(i: int) -> None:
        for x in range(5):
            if small(x):
                seen[i].append(x)

    _run(lambda: reader(0), lambda: reader(1))
    assert seen[0] == seen[1] == [0, 1, 2]


# ---------------------------------------------------------------- modules and classes


def module_attribute_vs_global() -> None:
    """One thread writes the global with ``global``, the other reads it as the module's attribute:
    one location, a race."""

    def writer() -> None:
        global hits
        hits = 1

    def reader() -> None:
        assert this.hits in (0, 1)

    _run(writer, reader)


class Config:
    limit = 1


class Tuned(Config):
    pass


def limit_set_while_read(read: Callable[[], int]) -> None:
    """``Config.limit`` set by one thread while another reads it through ``read``."""

    def writer() -> None:
        Config.limit = 5

    def reader() -> None:
        assert read() >= 1

    _run(writer, reader)


def class_attribute() -> None:
    """A class attribute set by one thread and read through a subclass by another: a race."""
    limit_set_while_read(lambda: Tuned.limit)


class Box:
    def __init__(self) -> None:
        self.value = 0
        self.lock = threading.Lock()

    def method(self) -> int:
        return 1


def class_code_only() -> None:
    """Threads read a class's methods and create instances: code, not data; no race."""
    boxes: list[list[Box]] = [[], []]

    def user(i: int) -> None:
        b = Box()
        boxes[i].append(b)
        assert Box.method(b) == 1 and callable(Box.__init__)

    _run(lambda: user(0), lambda: user(1))


def getattr_lost_update() -> None:
    box = Box()

    def inc() -> None:
        setattr(box, "value", getattr(box, "value") + 1)  # noqa: B009, B010

    _run(inc, inc)
    assert box.value == 2, f"lost update: {box.value}"


def getattr_locked() -> None:
    box = Box()

    def inc() -> None:
        with box.lock:
            setattr(box, "value", getattr(box, "value") + 1)  # noqa: B009, B010

    _run(inc, inc)
    assert box.value == 2


# ---------------------------------------------------------------- lists


def list_slots_per_thread() -> None:
    """Each thread writes its own slot of a shared list, then waits at a barrier and reads the
    other's: distinct items before the barrier, ordered by it after; no race."""
    slots = [0, 0]
    barrier = threading.Barrier(2)

    def worker(i: int) -> None:
        slots[i] = i + 1
        barrier.wait()
        assert slots[1 - i] == 2 - i
        assert slots[-1] == 2

    _run(lambda: worker(0), lambda: worker(1))


def list_same_slot() -> None:
    """Both threads write the last slot, one as ``[-1]``, the other as ``[1]``: a race."""
    slots = [0, 0]

    def first() -> None:
        slots[-1] = 1

    def second() -> None:
        slots[1] = 2

    _run(first, second)


def list_delete_moves_items() -> None:
    """One thread deletes slot 0 (every later item moves), the other reads slot 1: a race."""
    slots = [1, 2, 3]

    def deleter() -> None:
        del slots[0]

    def reader() -> None:
        assert slots[1] in (2, 3)

    _run(deleter, reader)


# ---------------------------------------------------------------- containers changed by a call


def heap_push_race() -> None:
    """Two threads push onto one heap with ``heapq`` and no lock: a race on the whole list."""
    heap: list[int] = []

    def push(x: int) -> None:
        heapq.heappush(heap, x)

    _run(lambda: push(2), lambda: push(1))


def heap_push_locked() -> None:
    heap: list[int] = []
    lock = threading.Lock()

    def push(x: int) -> None:
        with lock:
            heapq.heappush(heap, x)

    _run(lambda: push(2), lambda: push(1))
    assert heapq.heappop(heap) == 1


def defaultdict_insert_race() -> None:
    """One thread reads a missing key of a defaultdict (which inserts it), the other iterates."""
    groups: defaultdict[str, list[int]] = defaultdict(list)
    groups["a"].append(1)

    def reader() -> None:
        assert groups["b"] == []

    def walker() -> None:
        assert sum(len(v) for v in groups.values()) == 1

    _run(reader, walker)


def inplace_extend_race() -> None:
    """One thread extends a shared list in place (``+=``), the other iterates it by ``enumerate``."""
    log = [0]
    holder = {"log": log}

    def writer() -> None:
        items = holder["log"]
        items += [1]

    def reader() -> None:
        for _i, _x in enumerate(log):
            pass

    _run(writer, reader)


def snapshot_race() -> None:
    """A snapshot (``list(...)``, unpacking) taken while another thread appends: a race."""
    log: list[int] = [0, 0]

    def writer() -> None:
        log.append(1)

    def reader() -> None:
        _first, *_rest = log

    _run(writer, reader)


def snapshot_locked() -> None:
    log: list[int] = [0]
    lock = threading.Lock()

    def writer() -> None:
        with lock:
            log.append(1)

    def reader() -> None:
        with lock:
            copy = list(log) + [*log]  # noqa: RUF005 - a binary operator on two lists, as written
        assert copy[0] == 0

    _run(writer, reader)


# What each program gives (tests/harness/test_patched_catalogue.py): a racy one, the location its
# report names and the source of the sites it names.
FOUND = [
    Races(
        closure_flag,
        "closure variable stop",
        ("if not stop:", "stop = True"),
        shows="a_closure_flag_read_by_a_worker_is_a_race",
    ),
    Races(
        module_attribute_vs_global,
        "global hits",
        ("hits = 1", "this.hits in"),
        shows="a_module_attribute_and_its_global_are_one_location",
    ),
    Races(
        class_attribute,
        "Config.limit",
        ("Config.limit = 5", "lambda: Tuned.limit"),
        shows="a_class_attribute_read_through_a_subclass_is_a_race",
    ),
    Races(
        getattr_lost_update,
        "Box.value",
        ('setattr(box, "value", getattr(box, "value")',),
        shows="getattr_and_setattr_by_name_are_accesses",
    ),
    Races(
        list_same_slot,
        "list[1]",
        ("slots[-1] = 1", "slots[1] = 2"),
        shows="one_slot_named_two_ways_is_one_location",
    ),
    Races(
        list_delete_moves_items,
        "list[1] and list (whole)",
        ("del slots[0]", "slots[1] in (2, 3)"),
        shows="deleting_an_item_moves_the_others",
    ),
    Races(
        heap_push_race,
        "list (whole)",
        ("heapq.heappush(heap, x)",),
        shows="a_container_changed_by_a_library_function_is_accessed",
    ),
    Races(
        defaultdict_insert_race,
        "defaultdict (whole) and defaultdict['b']",
        ('groups["b"] == []', "groups.values()"),
        shows="reading_a_missing_key_of_a_defaultdict_writes_it",
    ),
    Races(
        inplace_extend_race,
        "list (whole)",
        ("items += [1]", "enumerate(log)"),
        shows="an_in_place_operator_writes_its_container",
    ),
    Races(
        snapshot_race,
        "list (whole)",
        ("log.append(1)", "_first, *_rest = log"),
        shows="unpacking_reads_the_whole_container",
    ),
]
PROVED = [
    snapshot_locked,
    heap_push_locked,
    closure_locked,
    closure_read_only,
    class_code_only,
    getattr_locked,
    list_slots_per_thread,
]
