"""Plain ``threading`` programs whose shared data is reached through a call, a view, a pattern,
formatting, a generator or a property (tests/harness/test_patched_catalogue.py): each has one
unsynchronised access, and each was proved race free before session 35 or 36, by an outside
review's count."""

from __future__ import annotations

import array
import operator
import time
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterator

from tests.harness.expected import Races
from tests.harness.program_threads import start_and_join
from tests.harness.race_scopes import Box, Config, limit_set_while_read

# ---------------------------------------------------------------- session 36: what a review left open


def dict_view_race() -> None:
    """A view made before the threads reads its dict when iterated."""
    d = {"a": 1}
    keys = d.keys()

    def reader() -> None:
        assert list(keys)

    def writer() -> None:
        d["b"] = 2

    start_and_join(reader, writer)


def match_race() -> None:
    """``match`` on a shared list reads it (its length, its items)."""
    items = [1, 2]

    def reader() -> None:
        match items:
            case [_, _]:
                pass

    def writer() -> None:
        items.append(3)

    start_and_join(reader, writer)


def match_mapping_race() -> None:
    """A mapping pattern reads the dict's keys."""
    d = {"a": 1}

    def reader() -> None:
        match d:
            case {"a": _}:
                pass

    def writer() -> None:
        d["a"] = 2

    start_and_join(reader, writer)


def operator_setitem_race() -> None:
    d = {"a": 0}

    def writer() -> None:
        operator.setitem(d, "a", 1)

    def reader() -> None:
        assert d["a"] in (0, 1)

    start_and_join(writer, reader)


def object_setattr_race() -> None:
    box = Box()

    def writer() -> None:
        object.__setattr__(box, "value", 5)

    def reader() -> None:
        assert box.value in (0, 5)

    start_and_join(writer, reader)


def array_item_race() -> None:
    counts = array.array("i", [0, 0])

    def inc() -> None:
        counts[0] += 1

    start_and_join(inc, inc)


# ---------------------------------------------------------------- session 36: a third review's finds


def _reader_and_appender(read: Callable[[list[int]], object]) -> None:
    items = [1]
    start_and_join(lambda: read(items), lambda: items.append(2))


def slot_method_race() -> None:
    items = [0]
    start_and_join(lambda: items.__setitem__(0, 1), lambda: items[0])


def argument_of_a_method_race() -> None:
    copied: list[int] = []
    _reader_and_appender(lambda items: copied.extend(items))


def method_handed_as_key_race() -> None:
    d = {"a": 1, "b": 2}

    def writer() -> None:
        d["a"] = 3

    start_and_join(lambda: max(["a", "b"], key=d.__getitem__), writer)


def nested_container_race() -> None:
    inner = [1]
    outer = [inner]
    start_and_join(lambda: str(outer), lambda: inner.append(2))


def percent_format_race() -> None:
    _reader_and_appender(lambda items: "%s" % (items,))  # noqa: UP031


def f_string_race() -> None:
    _reader_and_appender(lambda items: f"{items}")


def str_format_race() -> None:
    _reader_and_appender(lambda items: "{}".format(items))  # noqa: UP032


def storing_a_reference_reads_nothing() -> None:
    """Race free: ``outer.append(inner)`` and ``list(outer)`` take references to ``inner`` and
    read nothing of it, while another thread appends to it."""
    inner: list[int] = [1]
    outer: list[list[int]] = []

    def keep() -> None:
        outer.append(inner)
        list([inner])

    start_and_join(keep, lambda: inner.append(2))


# ---------------------------------------------------------------- found by an outside review


def sleep_then_lost_update() -> None:
    """A sleep before an unlocked read-modify-write: the sleep orders nothing (was proved)."""
    counter = [0]

    def inc() -> None:
        time.sleep(0.01)
        v = counter[0]
        counter[0] = v + 1

    start_and_join(inc, inc)
    assert counter[0] == 2


def star_call_race() -> None:
    """``f(*xs)`` reads the list while another thread writes an item of it."""
    xs = [1, 2]

    def reader() -> None:
        assert max(*xs) >= 1

    def writer() -> None:
        xs[0] = 5

    start_and_join(reader, writer)


def compare_race() -> None:
    xs, ys = [1], [1]

    def reader() -> None:
        assert (xs == ys) in (True, False)

    def writer() -> None:
        xs.append(2)

    start_and_join(reader, writer)


def ordered_dict_move_race() -> None:
    od = OrderedDict(a=1, b=2, c=3)

    def mover() -> None:
        od.move_to_end("a")

    def reader() -> None:
        assert next(iter(od)) in ("a", "b")

    start_and_join(mover, reader)


def shared_generator() -> None:
    def numbers() -> Iterator[int]:
        n = 0
        while True:
            n += 1
            yield n

    gen = numbers()
    start_and_join(lambda: next(gen), lambda: next(gen))


def class_data_through_instance() -> None:
    """A class attribute written through the class, read through an instance (``self.limit``)."""
    c = Config()
    limit_set_while_read(lambda: c.limit)


class Temperature:
    def __init__(self) -> None:
        self._celsius = 0

    @property
    def celsius(self) -> int:
        return self._celsius

    @celsius.setter
    def celsius(self, value: int) -> None:
        self._celsius = value


def property_race() -> None:
    """A property read and set by two threads: the race is on the field its code touches."""
    t = Temperature()

    def writer() -> None:
        t.celsius = 5

    def reader() -> None:
        assert t.celsius in (0, 5)

    start_and_join(writer, reader)


def whole_and_key() -> None:
    """``len(d)`` against an insert of another key: the whole dict and the key overlap."""
    d = {"a": 1}

    def reader() -> None:
        assert len(d) >= 1

    def writer() -> None:
        d["b"] = 2

    start_and_join(reader, writer)


def join_and_zip_race() -> None:
    """``", ".join(words)`` and ``zip(a, words)`` read the list whole while another thread appends."""
    words = ["a"]
    other = ["x"]

    def reader() -> None:
        assert ", ".join(words) and list(zip(other, words, strict=False))

    def writer() -> None:
        words.append("b")

    start_and_join(reader, writer)


def generator_send_race() -> None:
    def echo() -> Generator[int, int, None]:
        got = 0
        while True:
            got = yield got

    gen = echo()
    next(gen)
    start_and_join(lambda: gen.send(1), lambda: gen.send(2))


# What each program gives (tests/harness/test_patched_catalogue.py): each racy one was proved race
# free before session 35 or 36 (found by session 35's review, left open by it, or found by 36's).
FOUND = [
    # found by session 35's review
    Races(sleep_then_lost_update, "list[0]"),
    Races(star_call_race, "list[0] and list (whole)"),
    Races(compare_race, "list (whole)"),
    Races(ordered_dict_move_race, "OrderedDict (whole)"),
    Races(shared_generator, "generator shared_generator.<locals>.numbers"),
    Races(class_data_through_instance, "Config.limit"),
    Races(property_race, "Temperature._celsius"),
    Races(whole_and_key, "dict['b'] and dict (whole)"),
    Races(join_and_zip_race, "list (whole)"),
    Races(generator_send_race, "generator generator_send_race.<locals>.echo"),
    # left open by session 35's review, or found by session 36's
    Races(dict_view_race, "dict['b'] and dict (whole)"),
    Races(match_race, "list (whole)"),
    Races(match_mapping_race, "dict['a'] and dict (whole)"),
    Races(operator_setitem_race, "dict['a']"),
    Races(object_setattr_race, "Box.value"),
    Races(array_item_race, "array[0]"),
    Races(slot_method_race, "list[0] and list (whole)"),
    Races(argument_of_a_method_race, "list (whole)"),
    Races(method_handed_as_key_race, "dict['a'] and dict (whole)"),
    Races(nested_container_race, "list (whole)"),
    Races(percent_format_race, "list (whole)"),
    Races(f_string_race, "list (whole)"),
    Races(str_format_race, "list (whole)"),
]
PROVED = [storing_a_reference_reads_nothing]
