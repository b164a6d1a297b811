"""The state fingerprint's hot paths in C (``_fingerprint_hot.c``) do what the Python they replace
does (``rt/reducers.py``, ``rt/seeds.py``, ``rt/dict_versions.py``, ``rt/encoder.py``):

* the reducer returns the Python reducer's tuple for every kind it lists, its head the very same
  object (the pickler memoises by identity, so both write the same bytes), and hands the Python
  reducer what it does not list, what its reading cannot take (a slot not set, a bounded deque)
  and every object that existed before the search;
* the three checks (seeded objects' inputs, dict versions, list and set items) answer as the
  Python ones on unchanged objects and on each kind of change;
* at every state of a search both paths write the same digest, and a search explores as many
  states either way."""

from __future__ import annotations

import functools
import itertools
import json
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any, NamedTuple

import pytest

from model_checks.harness import check, examples
from model_checks.harness.rt import dict_versions, encoder, frames, reducers
from model_checks.harness.rt import fingerprint as fp
from model_checks.harness.rt import seeds as seeds_module
from model_checks.harness.rt.native import NATIVE, NATIVE_WHY
from model_checks.harness.rt.objects import LockState
from model_checks.harness.rt.records import Hooks
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.stateful import StatefulResult, check_states
from tests.harness.fingerprint_paths import python_paths

pytestmark = [
    pytest.mark.skipif(NATIVE is None, reason=f"no C module: {NATIVE_WHY}"),
    pytest.mark.timeout(120),
]


class Plain:
    def __init__(self, items: list[int]) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)


class Slotted:
    __slots__ = ("a", "b")
    a: object
    b: object


class OneSlot:
    __slots__ = ("only",)

    def __init__(self) -> None:
        self.only = [1]


def _compiled_instance() -> Any:
    """An ``Atomic`` of the harness (a compiled class where the core is built): made by a
    program under ``check``, kept alive with its execution."""
    made: list[object] = []

    def program(rt: Any) -> None:
        made.append(rt.atomic_int(0))

    check(program, max_executions=1)
    return made[0]


def _compiled_with_dict() -> object:
    atomic = _compiled_instance()
    atomic.__orig_class__ = type(atomic)  # (as ``Atomic[int](...)`` sets it: its dict is made)
    assert isinstance(atomic.__dict__, dict)
    return atomic


class Pair(NamedTuple):  # an instance with a built-in base (tuple), read with its fields
    left: int
    right: object


def _closure() -> Any:
    kept = [1]

    def get() -> list[int]:
        return kept

    return get


def _empty_cell() -> Any:
    def outer() -> Any:
        def inner() -> object:
            return late  # type: ignore[has-type]

        return inner.__closure__[0]  # type: ignore[index]
        late = 1

    return outer()


def _slotted(a: object) -> Slotted:
    s = Slotted()
    s.a, s.b = a, [2]
    return s


# (name, an object of the kind, whether the C reducer reduces it itself)
CASES: list[tuple[str, Callable[[], object], bool]] = [
    ("instance", lambda: Plain([1, 2]), True),
    ("instance with slots", lambda: _slotted("x"), True),
    ("instance with a slot not set", Slotted, False),
    ("instance with a tuple base", lambda: Pair(1, [2]), True),
    ("instance with one slot", lambda: OneSlot(), True),
    ("instance of a compiled class, its dict never made", _compiled_instance, True),
    ("instance of a compiled class with its dict", _compiled_with_dict, True),
    ("bound method", lambda: Plain([]).__len__, True),
    ("partial", lambda: functools.partial(max, 1, key=abs), True),
    ("empty-slot marker", lambda: frames.NULL, True),
    ("harness object", Hooks, True),
    ("cell", lambda: _closure().__closure__[0], True),
    ("empty cell", _empty_cell, True),
    ("controlled object's model", lambda: LockState(7, "lock"), True),
    ("unbounded deque", lambda: deque([1, (2,)]), True),
    ("bounded deque", lambda: deque([1], maxlen=3), False),
    ("function of code under test (with its module's data)", _closure, True),
    ("function of the standard library", lambda: json.dumps, True),
    ("builtin method (not listed)", lambda: [].append, False),
]


def _python_reduce(x: object) -> Any:
    t = type(x)
    r = reducers._REDUCERS.get(t) or reducers._reducer(t)
    return r(x)


def _c_reducer(pre: set[int] | None = None) -> tuple[Any, list[object]]:
    """The C reducer over every listed type, its fallback recording what it was handed."""
    handed: list[object] = []

    def fallback(x: object) -> Any:
        handed.append(x)
        return _python_reduce(x)

    table: dict[type, tuple[Any, ...]] = {}
    for _, build, _ in CASES:
        t = type(build())
        entry = reducers.native_entry(t, reducers._reducer(t))
        if entry is not None:
            table[t] = entry
    assert NATIVE is not None
    return NATIVE.Reducer(table, pre, fallback, reducers._K), handed


def test_the_entry_kinds_are_numbered_as_the_c_module_numbers_them() -> None:
    assert NATIVE is not None
    named = ("INSTANCE", "ATTRS", "CONST", "CELL", "MODEL", "DEQUE", "FUNCTION")
    assert named == NATIVE.REDUCER_KINDS
    assert [getattr(reducers, f"{n}_ENTRY") for n in named] == list(range(len(named)))


@pytest.mark.parametrize("name,build,in_c", CASES, ids=[c[0] for c in CASES])
def test_the_c_reducer_writes_what_the_python_one_writes(
    name: str, build: Callable[[], object], in_c: bool
) -> None:
    x = build()
    reduce, handed = _c_reducer()
    want = _python_reduce(x)  # (first: a function's code is then known to the C reducer)
    got = reduce(x)
    assert got == want, name
    if in_c:  # the head: one shared object, or (built per object) the same objects in it
        assert got[1] is want[1] or all(a is b for a, b in zip(got[1], want[1], strict=True)), name
    assert (handed == []) == in_c, (name, handed)


def test_an_object_that_existed_before_the_search_goes_to_the_python_reducer() -> None:
    # (the Python reducer may seed it: written by reference from then on)
    old, new = Plain([1]), Plain([2])
    reduce, handed = _c_reducer(pre={id(old)})
    assert reduce(old) == _python_reduce(old) and reduce(new) == _python_reduce(new)
    assert handed == [old]


def test_an_error_of_a_reading_reaches_the_pickler() -> None:
    class Exploding:
        __slots__ = ("a", "b")

    def explode(self: Exploding) -> object:
        raise KeyError("a")  # not AttributeError: no fallback, an error

    # a data descriptor of the class's, run by the reading (since session 40 a ``__getattribute__``
    # of the class's is not: the program's hook, which the fingerprint must not run)
    name = "a"  # (set on the class by name: mypy forbids assigning a slot's name on the class)
    setattr(Exploding, name, property(explode))

    assert NATIVE is not None
    entry = reducers.native_entry(Exploding, reducers._reducer(Exploding))
    assert entry is not None and entry[0] == reducers.INSTANCE_ENTRY
    table = {Exploding: entry}
    reduce = NATIVE.Reducer(table, None, _python_reduce, reducers._K)
    with pytest.raises(KeyError):
        reduce(Exploding())
    with pytest.raises(ValueError, match="malformed"):
        NATIVE.Reducer({Plain: (reducers.CONST_ENTRY,) * 3}, None, _python_reduce, reducers._K)(Plain([]))


# each: (name, what is checked, a change to it); the checks must agree before and after
def _function() -> Any:
    def f(x: list[int] = []) -> list[int]:  # noqa: B006 - the default is what changes
        return x

    return f


def _changes() -> list[tuple[str, Callable[[], object], Callable[[Any], None]]]:
    def set_cell(g: Any) -> None:
        g.__closure__[0].cell_contents = [9]

    def empty_cell(g: Any) -> None:
        del g.__closure__[0].cell_contents

    return [
        ("a function's defaults", _function, lambda f: setattr(f, "__defaults__", ([5],))),
        ("a function's keyword defaults", _function, lambda f: setattr(f, "__kwdefaults__", {"y": 1})),
        ("a function's code", _function, lambda f: setattr(f, "__code__", (lambda x=None: x).__code__)),
        ("a function's dict", _function, lambda f: setattr(f, "__dict__", {"tag": 1})),
        ("a cell's contents", _closure, set_cell),
        ("a cell emptied", _closure, empty_cell),
        ("an instance's dict", lambda: Plain([1]), lambda p: setattr(p, "__dict__", {"items": []})),
        ("an instance's class", lambda: Plain([1]), lambda p: setattr(p, "__class__", _Other)),
        ("a slot", lambda: _slotted(1), lambda s: setattr(s, "a", 2)),
    ]


class _Other:
    pass


@pytest.mark.parametrize("name,build,change", _changes(), ids=[c[0] for c in _changes()])
def test_the_seeded_objects_check_answers_as_the_python_one(
    name: str, build: Callable[[], object], change: Callable[[Any], None]
) -> None:
    made = build()
    fp.begin_search()
    try:
        seeds = seeds_module._SEEDS[0]
        assert seeds is not None
        fp.encode([made])  # seeds it (and what it reaches)
        assert seeds.checked, name
        args = (seeds.getters, seeds.checked, seeds.flat)
        assert NATIVE is not None
        c = NATIVE.same_readings(*args, seeds_module._FUNCTION_INPUTS)
        assert c is True and seeds_module._same_readings_in_python(*args) is True, name
        change(made)
        c = NATIVE.same_readings(*args, seeds_module._FUNCTION_INPUTS)
        assert c is False and seeds_module._same_readings_in_python(*args) is False, name
    finally:
        fp.end_search()


def test_the_seeded_objects_check_propagates_an_unexpected_error() -> None:
    def broken(x: object) -> tuple[object, ...]:
        raise KeyError("not a reading error")

    assert NATIVE is not None
    with pytest.raises(KeyError):
        NATIVE.same_readings([broken], [object()], [None, None], seeds_module._FUNCTION_INPUTS)
    # a reading error (an emptied cell, a slot not set) is "changed", as in Python
    assert NATIVE.same_readings([lambda x: x.missing], [object()], [None], None) is False
    # lists out of step are "changed", never read past their ends
    assert NATIVE.same_readings([lambda x: (x, x)], [1], [1], None) is False


def test_dict_versions_answer_as_the_python_views() -> None:
    d: dict[str, int] = {"a": 1}
    cls = type("Limits", (), {"LIMIT": 1})
    objects: list[Any] = [d, cls]
    reducers._r_class(cls)  # (keeps a view of the class's namespace version)
    views = [dict_versions._version_view(d), reducers._CLASSES[cls][0]]
    versions = [v.value for v in views]  # type: ignore[union-attr]

    def both() -> tuple[bool, bool]:
        assert NATIVE is not None
        return (
            NATIVE.same_versions(objects, versions),
            dict_versions._same_versions_in_python(objects, views, versions),  # type: ignore[arg-type]
        )

    assert both() == (True, True)
    d["a"] = 2
    assert both() == (False, False)
    versions[0] = views[0].value  # type: ignore[union-attr]
    assert both() == (True, True)
    cls.LIMIT = 2  # type: ignore[attr-defined]
    assert both() == (False, False)
    with pytest.raises(TypeError):
        NATIVE.same_versions([object()], [0])  # type: ignore[union-attr]


def test_list_and_set_items_answer_as_the_python_check() -> None:
    a, b = object(), object()
    seqs: list[Any] = [[a, b], {a}]
    lengths = [2, 1]
    items: list[object] = list(itertools.chain.from_iterable(seqs))

    def both() -> tuple[bool, bool]:
        assert NATIVE is not None
        return NATIVE.same_items(seqs, lengths, items), encoder._same_items_in_python(seqs, lengths, items)

    assert both() == (True, True)
    seqs[0][1] = a  # an item replaced
    assert both() == (False, False)
    seqs[0][1] = b
    seqs[1].add(b)  # a set grown
    assert both() == (False, False)
    seqs[1].discard(b)
    seqs[0].append(b)  # a list grown
    assert both() == (False, False)


def _same_digest_both_ways(
    record: list[Hashable], monkeypatch: pytest.MonkeyPatch
) -> Callable[[Execution], Hashable | None]:
    """At each state: the digest with the C paths, then with the Python paths (a section of
    their own: the C reducer is installed when a section is built), which must be equal."""

    def both(ex: Execution) -> Hashable | None:
        fp.fingerprint(ex)  # (seeds what this state newly reaches)
        in_c = fp.fingerprint(ex)
        with monkeypatch.context() as m:
            python_paths(m)
            seeds = seeds_module._SEEDS[0]
            assert seeds is not None
            seeds.section = None  # rebuilt with the Python reducer
            in_python = fp.fingerprint(ex)
        seeds.section = None
        assert in_c == in_python
        record.append(in_c)
        return in_c

    return both


@pytest.mark.parametrize(
    "program",
    [examples.bounded_buffer(1, 2, 1, 1), examples.handoff(use_while=True), examples.counter(2, locked=True)],
    ids=["bounded-buffer", "handoff", "counter"],
)
def test_every_state_of_a_search_has_one_digest_in_c_and_in_python(
    program: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    record: list[Hashable] = []
    result = check_states(program, fingerprint_fn=_same_digest_both_ways(record, monkeypatch))
    assert isinstance(result, StatefulResult) and result.verdict == "exhaustive"
    assert len(record) >= 5


def test_every_state_of_the_work_lane_stop_drain_search_has_one_digest_both_ways(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the scenario the C paths were made for: deques, named tuples, partials, bound methods,
    # cells, controlled objects' models, harness objects (its first 150 executions). (Imported
    # here: a global of this module is read by the other cases' fingerprints, and the CLI's
    # modules hold objects whose state is hidden.)
    from model_checks.commands.explore import build_scenario

    program = build_scenario("work-lane/stop-drain-races-posts", for_states=True)
    record: list[Hashable] = []
    both = _same_digest_both_ways(record, monkeypatch)
    result = check_states(program, fingerprint_fn=both, max_executions=150)
    assert result.failure is None and len(set(record)) > 100


def test_a_search_explores_as_many_states_with_the_python_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    program = examples.bounded_buffer(1, 2, 2, 1)
    in_c = check_states(program)
    python_paths(monkeypatch)
    in_python = check_states(program)
    assert isinstance(in_c, StatefulResult) and isinstance(in_python, StatefulResult)
    assert in_c.verdict == in_python.verdict == "exhaustive" and in_c.outcomes == in_python.outcomes
    assert in_c.states == in_python.states


def test_a_function_of_new_code_goes_to_the_python_reducer_which_teaches_the_c_one() -> None:
    space: dict[str, Any] = {}
    exec(compile("def fresh():\n    return 1\n", "<fresh>", "exec"), space)
    fresh = space["fresh"]
    reduce, handed = _c_reducer()
    first = reduce(fresh)
    assert handed == [fresh] and fresh.__code__ in reducers._CODE_HEADS
    assert reduce(fresh) == first == _python_reduce(fresh) and handed == [fresh]
