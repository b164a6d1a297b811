"""Plain ``threading`` programs of the sixth outside review (session 39) whose shared data C code
reads (session 39): one thread reads a list, a dict, a ``bytearray`` or an object through a C
function or operator while another changes it, unlocked, and the read was not recorded, so each
racy program was proved race free. C functions not listed (``b"".join``, ``ascii``,
``operator.add``, ``hash.update(ba)``, ``int(ba)``, ``str.translate``); the containers inside the
ones handed (``outer == [[1, 2]]``, ``[1, 2] in outer``, ``sum(groups, [])``, ``any(groups)``,
``map(len, groups)``, ``dict(pairs)``); a call with ``*groups``; a field a format string reaches
(``"{0.x}".format(o)``); a generator expression made in one thread and run in another; a
``partial``'s keywords; an attribute the program keeps on a ``Thread``; a container's method
given to ``Future.add_done_callback``, which the pool's worker calls. Each racy program has a
locked twin that must stay proved, and the copies that read only the outer container
(``list(outer)``, ``dict(d)``, ``map`` of Python code) stay proved unlocked (``race_functions.DEPTH``).
"""

from __future__ import annotations

import array
import concurrent.futures
import contextlib
import functools
import hashlib
import io
import itertools
import operator
import threading
from collections.abc import Callable

from tests.harness.expected import Races
from tests.harness.program_threads import start_and_join

lock = threading.Lock()
Body = Callable[[contextlib.AbstractContextManager[object]], None]


def _programs(body: Body) -> tuple[Callable[[], None], Callable[[], None]]:
    """``body``'s racy program (its reader and writer unlocked) and its locked twin."""
    name = body.__name__.lstrip("_")

    def racy() -> None:
        body(contextlib.nullcontext())

    def locked() -> None:
        body(lock)

    racy.__name__ = racy.__qualname__ = f"{name}_race"
    locked.__name__ = locked.__qualname__ = f"{name}_locked"
    return racy, locked


def _read_while_changed(
    guard: contextlib.AbstractContextManager[object], read: Callable[[], object], change: Callable[[], object]
) -> None:
    out: list[object] = []

    def reader() -> None:
        with guard:
            out.append(read())

    def writer() -> None:
        with guard:
            change()

    start_and_join(reader, writer)


# ---------------------------------------------------------------- C functions not listed


def _bytes_join(guard: contextlib.AbstractContextManager[object]) -> None:
    parts = [b"a"]
    _read_while_changed(guard, lambda: b"".join(parts), lambda: parts.append(b"b"))


def _bytearray_join(guard: contextlib.AbstractContextManager[object]) -> None:
    parts = [b"a"]
    _read_while_changed(guard, lambda: bytearray(b"-").join(parts), lambda: parts.append(b"b"))


def _ascii_list(guard: contextlib.AbstractContextManager[object]) -> None:
    xs = [1]
    _read_while_changed(guard, lambda: ascii(xs), lambda: xs.append(2))


def _operator_add(guard: contextlib.AbstractContextManager[object]) -> None:
    a, b = [1], [2]
    _read_while_changed(guard, lambda: operator.add(a, b), lambda: a.append(3))


def _translate_table(guard: contextlib.AbstractContextManager[object]) -> None:
    table = {ord("a"): "b"}
    _read_while_changed(guard, lambda: "a".translate(table), lambda: table.__setitem__(ord("a"), "c"))


def _maketrans_dict(guard: contextlib.AbstractContextManager[object]) -> None:
    d = {"a": "b"}
    _read_while_changed(guard, lambda: str.maketrans(d), lambda: d.__setitem__("a", "c"))


def _hash_update(guard: contextlib.AbstractContextManager[object]) -> None:
    ba = bytearray(b"a")
    h = hashlib.sha256()
    _read_while_changed(guard, lambda: h.update(ba), lambda: ba.extend(b"b"))


def _stream_write(guard: contextlib.AbstractContextManager[object]) -> None:
    ba = bytearray(b"a")
    buf = io.BytesIO()
    _read_while_changed(guard, lambda: buf.write(ba), lambda: ba.extend(b"b"))


def _array_frombytes(guard: contextlib.AbstractContextManager[object]) -> None:
    ba = bytearray(b"\x01\x02")
    arr = array.array("b")
    _read_while_changed(guard, lambda: arr.frombytes(ba), lambda: ba.__setitem__(0, 9))


def _int_of_bytearray(guard: contextlib.AbstractContextManager[object]) -> None:
    ba = bytearray(b"1")
    _read_while_changed(guard, lambda: int(ba), lambda: ba.append(ord("2")))


class Obj:
    def __init__(self) -> None:
        self.x = 1


def _format_attr_field(guard: contextlib.AbstractContextManager[object]) -> None:
    o = Obj()
    _read_while_changed(guard, lambda: "{0.x}".format(o), lambda: setattr(o, "x", 2))  # noqa: UP030, UP032


# ---------------------------------------------------------------- the containers inside


def _chain_from_iterable(guard: contextlib.AbstractContextManager[object]) -> None:
    a, b = [1], [2]
    groups = [a, b]
    _read_while_changed(guard, lambda: list(itertools.chain.from_iterable(groups)), lambda: a.append(3))


def _sum_map_len(guard: contextlib.AbstractContextManager[object]) -> None:
    a, b = [1], [2]
    groups = [a, b]
    _read_while_changed(guard, lambda: sum(map(len, groups)), lambda: a.append(3))


def _reduce_add(guard: contextlib.AbstractContextManager[object]) -> None:
    a, b = [1], [2]
    groups = [a, b]
    _read_while_changed(guard, lambda: functools.reduce(operator.add, groups), lambda: a.append(3))


def _sum_lists(guard: contextlib.AbstractContextManager[object]) -> None:
    a, b = [1], [2]
    groups = [a, b]
    _read_while_changed(guard, lambda: sum(groups, []), lambda: a.append(3))  # noqa: RUF017


def _any_groups(guard: contextlib.AbstractContextManager[object]) -> None:
    a: list[int] = []
    groups = [a, [0]]
    _read_while_changed(guard, lambda: any(groups), lambda: a.append(3))


def _zip_star(guard: contextlib.AbstractContextManager[object]) -> None:
    a, b = [1], [2]
    groups = [a, b]
    _read_while_changed(guard, lambda: list(zip(*groups)), lambda: b.append(4))  # noqa: B905


def _union_star(guard: contextlib.AbstractContextManager[object]) -> None:
    a, b = {1}, {2}
    groups = [a, b]
    _read_while_changed(guard, lambda: set().union(*groups), lambda: a.add(3))


def _product_star(guard: contextlib.AbstractContextManager[object]) -> None:
    a, b = [1], [2]
    groups = [a, b]
    _read_while_changed(guard, lambda: list(itertools.product(*groups)), lambda: a.append(3))


def _eq_nested(guard: contextlib.AbstractContextManager[object]) -> None:
    a = [1]
    outer = [a]
    _read_while_changed(guard, lambda: outer == [[1, 2]], lambda: a.append(2))


def _in_nested(guard: contextlib.AbstractContextManager[object]) -> None:
    a = [1]
    outer = [a]
    _read_while_changed(guard, lambda: [1, 2] in outer, lambda: a.append(2))


def _count_nested(guard: contextlib.AbstractContextManager[object]) -> None:
    a = [1]
    outer = [a]
    _read_while_changed(guard, lambda: outer.count([1, 2]), lambda: a.append(2))


def _map_list(guard: contextlib.AbstractContextManager[object]) -> None:
    a = [1]
    outer = [a]
    _read_while_changed(guard, lambda: set(map(tuple, outer)), lambda: a.append(2))


def _starmap_pairs(guard: contextlib.AbstractContextManager[object]) -> None:
    p = [1, 2]
    pairs = [p]
    _read_while_changed(
        guard, lambda: list(itertools.starmap(operator.add, pairs)), lambda: p.__setitem__(1, 5)
    )


def _join_map_join(guard: contextlib.AbstractContextManager[object]) -> None:
    a = ["x"]
    outer = [a]
    _read_while_changed(guard, lambda: ",".join(map("".join, outer)), lambda: a.append("y"))


def _dict_of_pairs(guard: contextlib.AbstractContextManager[object]) -> None:
    p = [1, 2]
    pairs = [p]
    _read_while_changed(guard, lambda: dict(pairs), lambda: p.__setitem__(1, 3))  # type: ignore[arg-type]


# ---------------------------------------------------------------- made in one thread, used in another


def _genexpr_made_before(guard: contextlib.AbstractContextManager[object]) -> None:
    xs = [1, 2]
    gen = (x for x in xs)
    _read_while_changed(guard, lambda: list(gen), lambda: xs.append(3))


def _partial_keywords(guard: contextlib.AbstractContextManager[object]) -> None:
    p = functools.partial(int, base=2)
    _read_while_changed(guard, lambda: p("10"), lambda: p.keywords.__setitem__("base", 16))


def _thread_attribute(guard: contextlib.AbstractContextManager[object]) -> None:
    out: list[object] = []

    def tagged() -> None:
        with guard:
            out.append(getattr(threading.current_thread(), "tag", None))

    t = threading.Thread(target=tagged)
    t.start()
    with guard:
        t.tag = "x"  # type: ignore[attr-defined]
    t.join()


def _done_callbacks(read_after_shutdown: bool) -> None:
    seen: list[object] = []
    n = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        f = pool.submit(int, "1")
        f.add_done_callback(seen.append)  # called by the worker, after ``result()`` may return
        f.result()
        if not read_after_shutdown:
            n = len(seen)
    if read_after_shutdown:  # the pool's shutdown joined its worker: its callbacks ran
        n = len(seen)
    assert n in (0, 1), n


def done_callback_race() -> None:
    _done_callbacks(False)


def done_callback_after_shutdown() -> None:
    _done_callbacks(True)


bytes_join_race, bytes_join_locked = _programs(_bytes_join)
bytearray_join_race, bytearray_join_locked = _programs(_bytearray_join)
ascii_list_race, ascii_list_locked = _programs(_ascii_list)
operator_add_race, operator_add_locked = _programs(_operator_add)
translate_table_race, translate_table_locked = _programs(_translate_table)
maketrans_dict_race, maketrans_dict_locked = _programs(_maketrans_dict)
hash_update_race, hash_update_locked = _programs(_hash_update)
stream_write_race, stream_write_locked = _programs(_stream_write)
array_frombytes_race, array_frombytes_locked = _programs(_array_frombytes)
int_of_bytearray_race, int_of_bytearray_locked = _programs(_int_of_bytearray)
format_attr_field_race, format_attr_field_locked = _programs(_format_attr_field)
chain_from_iterable_race, chain_from_iterable_locked = _programs(_chain_from_iterable)
sum_map_len_race, sum_map_len_locked = _programs(_sum_map_len)
reduce_add_race, reduce_add_locked = _programs(_reduce_add)
sum_lists_race, sum_lists_locked = _programs(_sum_lists)
any_groups_race, any_groups_locked = _programs(_any_groups)
zip_star_race, zip_star_locked = _programs(_zip_star)
union_star_race, union_star_locked = _programs(_union_star)
product_star_race, product_star_locked = _programs(_product_star)
eq_nested_race, eq_nested_locked = _programs(_eq_nested)
in_nested_race, in_nested_locked = _programs(_in_nested)
count_nested_race, count_nested_locked = _programs(_count_nested)
map_list_race, map_list_locked = _programs(_map_list)
starmap_pairs_race, starmap_pairs_locked = _programs(_starmap_pairs)
join_map_join_race, join_map_join_locked = _programs(_join_map_join)
dict_of_pairs_race, dict_of_pairs_locked = _programs(_dict_of_pairs)
genexpr_made_before_race, genexpr_made_before_locked = _programs(_genexpr_made_before)
partial_keywords_race, partial_keywords_locked = _programs(_partial_keywords)
thread_attribute_race, thread_attribute_locked = _programs(_thread_attribute)


# ---------------------------------------------------------------- what reads only the outer container


def copy_of_nested_unlocked() -> None:
    """``list(outer)``, ``tuple(outer)``, ``zip(outer)`` copy references: a change to an inner list
    races with none of them (depth 1)."""
    a = [1]
    outer = [a]
    _read_while_changed(
        contextlib.nullcontext(), lambda: (list(outer), tuple(outer), list(zip(outer))), lambda: a.append(2)
    )


def dict_copy_unlocked() -> None:
    """``dict(d)`` copies a mapping's references (its values are not unpacked, unlike pairs)."""
    a = [1]
    d = {"a": a}
    _read_while_changed(contextlib.nullcontext(), lambda: dict(d), lambda: a.append(2))


def map_of_python_code_unlocked() -> None:
    """``map`` of Python code: the function is traced, and this one reads nothing of the items."""
    a = [1]
    outer = [a]
    _read_while_changed(contextlib.nullcontext(), lambda: list(map(lambda g: 0, outer)), lambda: a.append(2))


def format_without_fields_unlocked() -> None:
    """``"{0}".format(o)`` formats the object (its default ``repr``), reaching no field of it."""
    o = Obj()
    _read_while_changed(contextlib.nullcontext(), lambda: "{0}".format(o), lambda: setattr(o, "x", 2))  # noqa: UP030, UP032


def compare_flat_unlocked() -> None:
    """``xs == [1]`` and ``1 in xs`` of lists of numbers read the lists alone: an inner list
    of another list changed at once races with neither."""
    xs = [1]
    a = [1]
    other = [a]
    _read_while_changed(
        contextlib.nullcontext(),
        lambda: (xs == [1], 1 in xs, other.count(1)),  # type: ignore[arg-type]
        lambda: a.append(2),
    )


FOUND = [
    Races(done_callback_race, "list (whole)", ("            n = len(seen)",)),
    Races(bytes_join_race, "list (whole)", ('lambda: b"".join(parts)',)),
    Races(bytearray_join_race, "list (whole)", ('lambda: bytearray(b"-").join(parts)',)),
    Races(ascii_list_race, "list (whole)", ("lambda: ascii(xs)",)),
    Races(operator_add_race, "list (whole)", ("lambda: operator.add(a, b)",)),
    Races(translate_table_race, "dict[97] and dict (whole)", ('lambda: "a".translate(table)',)),
    Races(maketrans_dict_race, "dict['a'] and dict (whole)", ("lambda: str.maketrans(d)",)),
    Races(hash_update_race, "bytearray (whole)", ("lambda: h.update(ba)",)),
    Races(stream_write_race, "bytearray (whole)", ("lambda: buf.write(ba)",)),
    Races(array_frombytes_race, "bytearray (whole)", ("lambda: arr.frombytes(ba)",)),
    Races(int_of_bytearray_race, "bytearray (whole)", ("lambda: int(ba)",)),
    Races(format_attr_field_race, "Obj.x", ('lambda: "{0.x}".format(o)',)),
    Races(chain_from_iterable_race, "list (whole)", ("lambda: list(itertools.chain.from_iterable(groups))",)),
    Races(sum_map_len_race, "list (whole)", ("lambda: sum(map(len, groups))",)),
    Races(reduce_add_race, "list (whole)", ("lambda: functools.reduce(operator.add, groups)",)),
    Races(sum_lists_race, "list (whole)", ("lambda: sum(groups, [])",)),
    Races(any_groups_race, "list (whole)", ("lambda: any(groups)",)),
    Races(zip_star_race, "list (whole)", ("lambda: list(zip(*groups))",)),
    Races(union_star_race, "set[3] and set (whole)", ("lambda: set().union(*groups)",)),
    Races(product_star_race, "list (whole)", ("lambda: list(itertools.product(*groups))",)),
    Races(eq_nested_race, "list (whole)", ("lambda: outer == [[1, 2]]",)),
    Races(in_nested_race, "list (whole)", ("lambda: [1, 2] in outer",)),
    Races(count_nested_race, "list (whole)", ("lambda: outer.count([1, 2])",)),
    Races(map_list_race, "list (whole)", ("lambda: set(map(tuple, outer))",)),
    Races(starmap_pairs_race, "list (whole)", ("lambda: list(itertools.starmap(operator.add, pairs))",)),
    Races(join_map_join_race, "list (whole)", ('lambda: ",".join(map("".join, outer))',)),
    Races(dict_of_pairs_race, "list (whole)", ("lambda: dict(pairs)",)),
    Races(genexpr_made_before_race, "list (whole)", ("lambda: list(gen)",)),
    Races(partial_keywords_race, "dict['base'] and partial.keywords", ('lambda: p("10")',)),
    Races(
        thread_attribute_race,
        "Thread.tag",
        ('t.tag = "x"', 'getattr(threading.current_thread(), "tag", None)'),
    ),
]
PROVED = [
    done_callback_after_shutdown,
    bytes_join_locked,
    bytearray_join_locked,
    ascii_list_locked,
    operator_add_locked,
    translate_table_locked,
    maketrans_dict_locked,
    hash_update_locked,
    stream_write_locked,
    array_frombytes_locked,
    int_of_bytearray_locked,
    format_attr_field_locked,
    chain_from_iterable_locked,
    sum_map_len_locked,
    reduce_add_locked,
    sum_lists_locked,
    any_groups_locked,
    zip_star_locked,
    union_star_locked,
    product_star_locked,
    eq_nested_locked,
    in_nested_locked,
    count_nested_locked,
    map_list_locked,
    starmap_pairs_locked,
    join_map_join_locked,
    dict_of_pairs_locked,
    genexpr_made_before_locked,
    partial_keywords_locked,
    thread_attribute_locked,
    copy_of_nested_unlocked,
    dict_copy_unlocked,
    map_of_python_code_unlocked,
    format_without_fields_unlocked,
    compare_flat_unlocked,
]
