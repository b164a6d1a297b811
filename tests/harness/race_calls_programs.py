"""Plain ``threading`` programs whose shared data is reached through a call, a view, a pattern or
formatting (tests/harness/test_patched_catalogue.py): each has one unsynchronised access, and each was
proved race free before session 36, by an outside review's count."""

from __future__ import annotations

import array
import operator
from collections.abc import Callable

from tests.harness.expected import Races
from tests.harness.program_threads import start_and_join
from tests.harness.race_scopes import Box

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


# What each program gives (tests/harness/test_patched_catalogue.py): each racy one was proved race
# free before session 36 (left open by session 35's review, or found by session 36's).
FOUND = [
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
