"""Plain ``threading`` programs whose shared data is reached where the tracer saw no access before
session 38 (a fourth outside review; each racy one was proved race free): an iterator that is
no container's (``itertools.count``, ``zip``), a call prepared with its arguments
(``functools.partial``, ``operator.methodcaller``) or made by a dunder name, a formatter or
serialiser not listed before (``format_map``, ``pprint``, ``inspect.getmembers``), one that is a
bound method of a hidden instance (``reprlib.repr``), a ``bytearray`` read by its own methods or
as a buffer, a ``threading.local`` subclass's slot and class data, and a class attribute shadowed
on a subclass. Each racy one has one unsynchronised access; the others must be proved."""

from __future__ import annotations

import collections
import functools
import hashlib
import inspect
import io
import itertools
import operator
import os
import pprint
import reprlib
import struct
import threading

from tests.harness.expected import Races
from tests.harness.program_threads import start_and_join
from tests.harness.race_library_programs import Plain

_ids = itertools.count()


class Job:
    def __init__(self) -> None:
        self.id = next(_ids)  # the module's id generator


def id_counter_race() -> None:
    start_and_join(Job, Job)


def id_counter_locked() -> None:
    ids = itertools.count()
    lock = threading.Lock()
    got: list[int] = []

    def take() -> None:
        with lock:
            got.append(next(ids))

    start_and_join(take, take)
    assert sorted(got) == [0, 1]


def zip_shared_race() -> None:
    pairs = zip([1, 2], "ab", strict=False)
    start_and_join(lambda: next(pairs), lambda: next(pairs))


def enumerate_per_thread() -> None:
    def work() -> None:
        for i, x in enumerate(zip([1, 2], "ab", strict=False)):
            assert x[0] == i + 1

    start_and_join(work, work)


def format_map_race() -> None:
    cfg = {"host": "old"}

    def writer() -> None:
        cfg["host"] = "new"

    start_and_join(writer, lambda: "{host}".format_map(cfg))


def pformat_race() -> None:
    xs = [0]

    def writer() -> None:
        xs[0] = 1

    start_and_join(writer, lambda: pprint.pformat(xs))


def reprlib_race() -> None:
    xs = [0]

    def writer() -> None:
        xs[0] = 1

    start_and_join(writer, lambda: reprlib.repr(xs))


def getmembers_race() -> None:
    p = Plain()
    start_and_join(lambda: setattr(p, "value", 1), lambda: inspect.getmembers(p))


def getattribute_by_its_name_race() -> None:
    p = Plain()
    start_and_join(lambda: setattr(p, "value", 1), lambda: p.__getattribute__("value"))


def partial_called_race() -> None:
    events: list[str] = []
    record = functools.partial(events.append, "started")  # a prepared callback

    def worker() -> None:
        record()

    start_and_join(worker, lambda: len(events))


def methodcaller_race() -> None:
    events: list[str] = []
    start_and_join(lambda: operator.methodcaller("append", 1)(events), lambda: len(events))


def inplace_function_race() -> None:
    xs = [1]
    start_and_join(lambda: operator.iadd(xs, [2]), lambda: len(xs))  # type: ignore[no-untyped-call]


def inplace_dunder_race() -> None:
    xs = [1]
    start_and_join(lambda: xs.__iadd__([2]), lambda: len(xs))


def bytearray_decode_race() -> None:
    buf = bytearray(b"-----")

    def writer() -> None:
        buf[0:5] = b"hello"

    start_and_join(writer, lambda: buf.decode())


def bytearray_unpacked_race() -> None:
    buf = bytearray(4)

    def writer() -> None:
        buf[0:4] = b"\x01\x00\x00\x00"

    start_and_join(writer, lambda: struct.unpack("<i", buf))


def bytearray_hashed_race() -> None:
    buf = bytearray(b"abc")

    def writer() -> None:
        buf.extend(b"d")

    start_and_join(writer, lambda: hashlib.sha256(buf).hexdigest())


def bytearray_locked() -> None:
    buf = bytearray(b"-----")
    lock = threading.Lock()

    def writer() -> None:
        with lock:
            buf[0:5] = b"hello"

    def reader() -> None:
        with lock:
            assert buf.decode() in ("-----", "hello")
            assert struct.unpack("<b", buf[:1])[0] in (45, 104)

    start_and_join(writer, reader)


def local_slot_race() -> None:
    """A ``threading.local`` subclass's slots are one per object, not per thread."""

    class Ctx(threading.local):
        __slots__ = ("n",)

    ctx = Ctx()
    ctx.n = 0

    def bump() -> None:
        ctx.n = ctx.n + 1

    start_and_join(bump, bump)


def local_class_counter_race() -> None:
    """Its ``__init__`` runs in each thread that first touches it: a shared class counter."""

    class Ctx(threading.local):
        created = 0

        def __init__(self) -> None:
            Ctx.created = Ctx.created + 1

    ctx = Ctx()

    def touch() -> None:
        ctx.user = "me"

    start_and_join(touch, touch)


def local_namespaces_per_thread() -> None:
    """The attributes of a ``local`` subclass's namespace are each thread's own."""

    class Ctx(threading.local):
        default = 1

        def __init__(self) -> None:
            self.count = self.default

    ctx = Ctx()

    def work() -> None:
        ctx.count += 1
        assert ctx.count == 2

    start_and_join(work, work)


def bound_method_taken_outside_the_lock() -> None:
    """``add = events.append`` reads nothing of the list; the call is under the lock (a false race
    before session 38), as is a partial of it and a deque's."""
    events: list[int] = []
    items: collections.deque[int] = collections.deque()
    lock = threading.Lock()

    def work(i: int) -> None:
        add, push, record = events.append, items.append, functools.partial(events.append, i)
        with lock:
            add(i)
            push(i)
            record()

    start_and_join(lambda: work(0), lambda: work(1))
    assert sorted(events) == [0, 0, 1, 1] and sorted(items) == [0, 1]


def pack_into_race() -> None:
    buf = bytearray(4)
    start_and_join(lambda: struct.pack_into("B", buf, 0, 7), lambda: buf[0])


def readinto_race() -> None:
    buf = bytearray(2)
    start_and_join(lambda: io.BytesIO(b"zz").readinto(buf), lambda: bytes(buf))


def environment_race() -> None:
    """``os.environ`` is a mapping in Python over a dict of its own (``os`` is traced)."""
    os.environ.pop("LANECHECK_REVIEW_FLAG", None)

    def writer() -> None:
        os.environ["LANECHECK_REVIEW_FLAG"] = "1"

    start_and_join(writer, lambda: os.environ.get("LANECHECK_REVIEW_FLAG"))
    os.environ.pop("LANECHECK_REVIEW_FLAG", None)


class Base:
    limit = 1


def shadowed_on_a_subclass_race() -> None:
    """Read through an object of the subclass (found on ``Base``), then set on the subclass."""

    class Sub(Base):
        pass

    obj = Sub()

    def admin() -> None:
        Sub.limit = 5

    start_and_join(lambda: obj.limit, admin)


FOUND = [
    Races(id_counter_race, "count", ("self.id = next(_ids)",)),
    Races(zip_shared_race, "zip", ("lambda: next(pairs)",)),
    Races(format_map_race, "dict (whole) and dict['host']", ('"{host}".format_map(cfg)',)),
    Races(pformat_race, "list (whole) and list[0]", ("pprint.pformat(xs)",)),
    Races(reprlib_race, "list (whole) and list[0]", ("reprlib.repr(xs)",)),
    Races(getmembers_race, "Plain's fields (whole) and Plain.value", ("inspect.getmembers(p)",)),
    Races(getattribute_by_its_name_race, "Plain.value", ('p.__getattribute__("value")',)),
    Races(partial_called_race, "list (whole)", ("        record()",)),
    Races(methodcaller_race, "list (whole)", ('operator.methodcaller("append", 1)(events)',)),
    Races(inplace_function_race, "list (whole)", ("operator.iadd(xs, [2])",)),
    Races(inplace_dunder_race, "list (whole)", ("xs.__iadd__([2])",)),
    Races(bytearray_decode_race, "bytearray (whole)", ("buf.decode()",)),
    Races(bytearray_unpacked_race, "bytearray (whole)", ('struct.unpack("<i", buf)',)),
    Races(bytearray_hashed_race, "bytearray (whole)", ("hashlib.sha256(buf)",)),
    Races(local_slot_race, "Ctx.n", ("ctx.n = ctx.n + 1",)),
    Races(local_class_counter_race, "Ctx.created", ("Ctx.created = Ctx.created + 1",)),
    Races(shadowed_on_a_subclass_race, "Sub.limit", ("Sub.limit = 5",)),
    Races(pack_into_race, "bytearray[0] and bytearray (whole)", ('struct.pack_into("B", buf, 0, 7)',)),
    Races(readinto_race, "bytearray (whole)", ('io.BytesIO(b"zz").readinto(buf)',)),
    Races(environment_race, "dict[b'LANECHECK_REVIEW_FLAG']", ('os.environ["LANECHECK_REVIEW_FLAG"] = "1"',)),
]
PROVED = [
    bound_method_taken_outside_the_lock,
    id_counter_locked,
    enumerate_per_thread,
    bytearray_locked,
    local_namespaces_per_thread,
]
