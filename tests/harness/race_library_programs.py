"""Plain ``threading`` programs whose shared data is touched by code the tracer does not see
itself (tests/harness/test_patched_catalogue.py): a container's method handed to a thread, a timer or
a pool, the standard library's algorithms written in Python, an object's fields read whole, a
container's truth, C code reading a container (a constructor, an unbound method). Each
racy one has one unsynchronised access and was proved race free before session 37; each
``*_locked`` one is its race-free twin."""

from __future__ import annotations

import collections
import copy
import dataclasses
import functools
import heapq
import itertools
import pickle
import statistics
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from tests.harness.expected import Races
from tests.harness.program_threads import start_and_join

# ---------------------------------------------------------------- a method handed to a thread or pool


def thread_target_append() -> None:
    """``xs.append`` is the thread's target: the thread writes ``xs``, another reads it."""
    xs: list[int] = []
    writer = threading.Thread(target=xs.append, args=(1,))
    reader = threading.Thread(target=lambda: sum(xs))
    writer.start()
    reader.start()
    writer.join()
    reader.join()


def thread_target_append_joined() -> None:
    """The same write, joined before the read: ordered."""
    xs: list[int] = []
    writer = threading.Thread(target=xs.append, args=(1,))
    writer.start()
    writer.join()
    reader = threading.Thread(target=lambda: sum(xs))
    reader.start()
    reader.join()


def partial_target() -> None:
    """A ``partial`` of a library function that changes its first argument."""
    heap: list[int] = []
    pusher = threading.Thread(target=functools.partial(heapq.heappush, heap, 3))
    reader = threading.Thread(target=lambda: heap[:1])
    pusher.start()
    reader.start()
    pusher.join()
    reader.join()


def timer_function() -> None:
    """A timer's function is a dict's method."""
    d: dict[str, int] = {}
    timer = threading.Timer(0.0, d.update, args=({"a": 1},))
    timer.start()
    reader = threading.Thread(target=lambda: d.get("a"))
    reader.start()
    timer.join()
    reader.join()


def pool_update() -> None:
    """``pool.submit(d.update, other)``: the pool's worker writes ``d`` while another task reads it."""
    d: dict[str, int] = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        pool.submit(d.update, {"a": 1})
        pool.submit(lambda: len(d))


def pool_map_locked() -> None:
    """``pool.map`` of a method, every task under one lock with the reader."""
    totals: list[int] = []
    lock = threading.Lock()

    def add(n: int) -> None:
        with lock:
            totals.append(n)

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(add, [1, 2]))
    assert sorted(totals) == [1, 2]


# ---------------------------------------------------------------- the standard library written in Python


def counter_update() -> None:
    """``Counter.update`` in two threads: a read-modify-write of the counter in each."""
    c: collections.Counter[str] = collections.Counter()
    start_and_join(lambda: c.update(["a"]), lambda: c.update(["a"]))


def counter_update_locked() -> None:
    c: collections.Counter[str] = collections.Counter()
    lock = threading.Lock()

    def count() -> None:
        with lock:
            c.update(["a"])

    start_and_join(count, count)
    assert c["a"] == 2


def chain_map_write() -> None:
    """A ``ChainMap`` writes its first map, which another thread reads."""
    first: dict[str, int] = {}
    cm = collections.ChainMap(first, {"b": 2})

    def writer() -> None:
        cm["a"] = 1

    start_and_join(writer, lambda: first.get("a"))


def nsmallest_race() -> None:
    """``heapq.nsmallest`` reads the list another thread appends to."""
    xs = [3, 1, 2]
    start_and_join(lambda: heapq.nsmallest(2, xs), lambda: xs.append(0))


def mean_race() -> None:
    """``statistics.mean`` reads the data another thread appends to."""
    xs = [1.0, 2.0]
    start_and_join(lambda: statistics.mean(xs), lambda: xs.append(3.0))


@dataclasses.dataclass
class Point:
    x: int = 0
    y: int = 0


def dataclass_replace_race() -> None:
    """``dataclasses.replace`` reads every field; another thread writes one."""
    p = Point()

    def mover() -> None:
        p.x = 1

    start_and_join(lambda: dataclasses.replace(p, y=2), mover)


class Plain:
    def __init__(self) -> None:
        self.value = 0


def _fields_read_while_written(read: Callable[[Plain], object]) -> None:
    """``read(obj)`` in one thread while another writes a field of ``obj``. Each program hands a
    lambda of its own (not the library function itself), so the report names the program's line."""
    obj = Plain()

    def writer() -> None:
        obj.value = 1  # the write each read races

    start_and_join(lambda: read(obj), writer)


def copy_object_race() -> None:
    """``copy.copy`` of an object reads its fields (its ``__dict__``, whole)."""
    _fields_read_while_written(lambda obj: copy.copy(obj))


def copy_object_locked() -> None:
    obj = Plain()
    lock = threading.Lock()

    def writer() -> None:
        with lock:
            obj.value = 1

    def copier() -> None:
        with lock:
            assert copy.copy(obj).value in (0, 1)

    start_and_join(copier, writer)


def vars_race() -> None:
    """``vars(obj)[name]`` is the attribute ``obj.name``: one location."""
    _fields_read_while_written(lambda obj: vars(obj)["value"])


def pickle_object_race() -> None:
    """``pickle.dumps(obj)`` reads the object's fields."""
    _fields_read_while_written(lambda obj: pickle.dumps(obj))


def own_fields_per_thread() -> None:
    """Each thread writes its own object's fields and copies it: nothing shared."""

    def work() -> None:
        mine = Plain()
        mine.value = 1
        assert copy.copy(mine).value == 1
        assert dataclasses.replace(Point(), x=1).x == 1

    start_and_join(work, work)


# ---------------------------------------------------------------- a container's truth, C code reading it

pending: list[str] = []


def _submit() -> None:
    pending.append("job")


def emptiness_check() -> None:
    """``if not pending:`` reads the list (its length) while a thread appends to it."""
    pending.clear()
    t = threading.Thread(target=_submit)
    t.start()
    idle = not pending
    t.join()
    assert idle or pending


def truth_in_a_loop() -> None:
    """``while xs:`` tests the list another thread fills."""
    xs: list[int] = []

    def drain() -> None:
        n = 0
        while xs and n < 3:
            n += 1

    start_and_join(drain, lambda: xs.append(1))


def truth_of_a_dict_or() -> None:
    """``d or default`` reads the dict."""
    d: dict[str, int] = {}

    def writer() -> None:
        d["a"] = 1

    start_and_join(lambda: d or None, writer)


def truth_locked() -> None:
    xs: list[int] = []
    lock = threading.Lock()

    def writer() -> None:
        with lock:
            xs.append(1)

    def reader() -> None:
        with lock:
            assert not xs or xs == [1]

    start_and_join(reader, writer)


def deque_copy_race() -> None:
    """``collections.deque(xs)`` copies the list another thread appends to."""
    xs: list[int] = []
    start_and_join(lambda: collections.deque(xs), lambda: xs.append(1))


def unbound_method_race() -> None:
    """``list.append(xs, 9)``: a container's method called through its class."""
    xs: list[int] = []
    start_and_join(lambda: list.append(xs, 9), lambda: xs.__len__())


def yield_from_race() -> None:
    """``yield from xs`` iterates the list another thread appends to."""
    xs: list[int] = []

    def items() -> object:
        yield from xs

    start_and_join(lambda: list(items()), lambda: xs.append(1))  # type: ignore[call-overload]


def islice_race() -> None:
    """``itertools.islice(xs, 1)`` reads the list."""
    xs = [1, 2]
    start_and_join(lambda: list(itertools.islice(xs, 1)), lambda: xs.append(3))


# ---------------------------------------------------------------- an iterator made before the threads

items = [1, 2, 3]
shared_iterator = iter(items)


def iterator_next_race() -> None:
    """Two threads take from one iterator made at import: each ``next`` moves it."""
    start_and_join(lambda: next(shared_iterator, None), lambda: next(shared_iterator, None))


def iterator_and_writer_race() -> None:
    """A loop over an iterator made before the threads reads the list another thread appends to."""
    xs = [1]
    it = iter(xs)

    def reader() -> None:
        for _ in it:
            pass

    start_and_join(reader, lambda: xs.append(2))


def local_loops_per_thread() -> None:
    """Each thread loops over its own list: no iterator shared."""

    def work() -> None:
        total = 0
        for n in [1, 2, 3]:
            total += n
        assert total == 6

    start_and_join(work, work)


# What each program gives (tests/harness/test_patched_catalogue.py): a racy one, the location its
# report names and the program's lines it names.
FOUND = [
    Races(
        thread_target_append,
        "list (whole)",
        ("target=xs.append", "lambda: sum(xs)"),
        shows="a_containers_method_as_a_threads_target",
    ),
    Races(
        partial_target,
        "list (whole)",
        ("partial(heapq.heappush", "heap[:1]"),
        shows="a_partial_of_a_library_function_as_a_target",
    ),
    Races(
        timer_function,
        "dict['a'] and dict (whole)",
        ("threading.Timer(0.0, d.update", 'd.get("a")'),
        shows="a_containers_method_as_a_timers_function",
    ),
    Races(
        pool_update,
        "dict (whole)",
        ("pool.submit(d.update, {", "lambda: len(d)"),
        shows="a_containers_method_submitted_to_a_pool",
    ),
    Races(
        counter_update,
        "Counter (whole)",
        ('lambda: c.update(["a"])',),
        shows="counter_update_writes_the_counter",
    ),
    Races(
        chain_map_write,
        "dict['a']",
        ('cm["a"] = 1', 'first.get("a")'),
        shows="a_chain_map_writes_its_first_map",
    ),
    Races(
        nsmallest_race,
        "list (whole)",
        ("heapq.nsmallest(2, xs)", "xs.append(0)"),
        shows="heapq_nsmallest_reads_its_argument",
    ),
    Races(
        mean_race,
        "list (whole)",
        ("statistics.mean(xs)", "xs.append(3.0)"),
        shows="statistics_mean_reads_its_argument",
    ),
    Races(
        dataclass_replace_race,
        "Point.x",
        ("dataclasses.replace(p, y=2)", "p.x = 1"),
        shows="dataclasses_replace_reads_every_field",
    ),
    Races(
        copy_object_race,
        "Plain.value and Plain's fields (whole)",
        ("lambda obj: copy.copy(obj)", "obj.value = 1  # the write"),
        shows="copy_of_an_object_reads_its_fields",
    ),
    Races(
        vars_race,
        "Plain.value",
        ("lambda obj: vars(obj)", "obj.value = 1  # the write"),
        shows="vars_of_an_object_is_its_attributes",
    ),
    Races(
        pickle_object_race,
        "Plain.value and Plain's fields (whole)",
        ("lambda obj: pickle.dumps(obj)", "obj.value = 1  # the write"),
        shows="pickling_an_object_reads_its_fields",
    ),
    Races(emptiness_check, "list (whole)", ("idle = not pending", 'pending.append("job")'), shows="not_xs"),
    Races(truth_in_a_loop, "list (whole)", ("while xs and n < 3",), shows="while_xs"),
    Races(truth_of_a_dict_or, "dict['a'] and dict (whole)", ("lambda: d or None",), shows="d_or_default"),
    Races(
        deque_copy_race, "list (whole)", ("lambda: collections.deque(xs)",), shows="a_deque_made_from_a_list"
    ),
    Races(unbound_method_race, "list (whole)", ("lambda: list.append(xs, 9)",), shows="an_unbound_method"),
    Races(yield_from_race, "list (whole)", ("yield from xs\n",), shows="yield_from"),
    Races(islice_race, "list (whole)", ("lambda: list(itertools.islice",), shows="itertools_islice"),
    Races(
        iterator_next_race,
        "list_iterator",
        ("lambda: next(shared_iterator",),
        shows="next_of_a_shared_iterator",
    ),
    Races(
        iterator_and_writer_race,
        "list (whole)",
        ("for _ in it:", "lambda: xs.append(2)"),
        shows="loop_over_an_iterator",
    ),
]
PROVED = [
    thread_target_append_joined,
    pool_map_locked,
    counter_update_locked,
    copy_object_locked,
    own_fields_per_thread,
    truth_locked,
    local_loops_per_thread,
]
