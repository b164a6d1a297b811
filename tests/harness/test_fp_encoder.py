"""The state fingerprint's C-pickler encoder and its seeded objects (``rt/fingerprint.py``).

The encoder must identify two states only when the Python walk (``walk_fingerprint``) does, and
the seeded objects (written by reference, their readings cached between dumps) must never hide
a change: each case below changes one thing that a seeded object's cached reading depends on,
and checks that the digest changes — and, with ``_Seeds.refresh`` switched off, that it would
not have (so the case really exercises the check it names)."""

from __future__ import annotations

import itertools
import sys
import types
from collections.abc import Callable, Hashable, Iterator
from typing import Any

import pytest

from model_checks.harness import check, examples
from model_checks.harness.rt import fingerprint as fp
from model_checks.harness.rt import frames
from model_checks.harness.rt import seeds as seeds_module
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.stateful import StatefulResult, check_states

pytestmark = pytest.mark.skipif(not frames.readable(), reason="CPython 3.11 frame layout")


class Box:
    def __init__(self, items: list[int]) -> None:
        self.items = items


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a: object, b: object) -> None:
        self.a = a
        self.b = b


class Tagged:
    LIMIT = 1


def _closure() -> Callable[[], list[int]]:
    kept: list[int] = []

    def get() -> list[int]:
        return kept

    return get


@pytest.fixture
def seeded() -> Iterator[None]:
    """A search whose pre-existing objects are the ones each case built before it."""
    fp.begin_search()
    yield
    fp.end_search()


def _twice(x: object) -> bytes:
    # the first dump seeds what it meets, the second writes it by reference
    fp.encode(x)
    return fp.encode(x)


def _cases() -> list[tuple[str, Callable[[], object], Callable[[Any], None], bool]]:
    """(name, build the pre-existing object, change it in place, whether only a seeded
    object's check can see the change — the others change a container, which the C pickler
    reads again in every dump)."""

    def defaults() -> object:
        def f(x: list[int] = []) -> None:  # noqa: B006 - the mutable default is the point
            pass

        return f

    def swap_cell(g: Any) -> None:
        g.__closure__[0].cell_contents = [9]

    def module() -> object:
        m = types.ModuleType("lanecheck_fp_case")
        exec(compile("N = 0\ndef bump():\n    global N\n    N += 1\n", "<fp-case>", "exec"), m.__dict__)
        return m.bump

    def a_class() -> object:
        return type("Limited", (), {"LIMIT": 1})

    return [
        (
            "a list mutated through an unchanged instance",
            lambda: Box([1]),
            lambda b: b.items.append(2),
            False,
        ),
        (
            "an instance's __dict__ replaced",
            lambda: Box([1]),
            lambda b: setattr(b, "__dict__", {"items": [2]}),
            True,
        ),
        ("an instance's class changed", lambda: Box([1]), lambda b: setattr(b, "__class__", Tagged), True),
        ("a slot rebound", lambda: Slotted([1], 2), lambda s: setattr(s, "a", [5]), True),
        ("a function's default list mutated", defaults, lambda f: f.__defaults__[0].append(1), False),
        ("a function's defaults replaced", defaults, lambda f: setattr(f, "__defaults__", ([1],)), True),
        ("a list in a closure mutated", _closure, lambda g: g().append(1), False),
        ("a cell rebound", _closure, swap_cell, True),
        ("a module global advanced", module, lambda bump: bump(), True),
        ("a class attribute changed", a_class, lambda c: setattr(c, "LIMIT", 2), True),
        ("a counter advanced", lambda: (Box([]), itertools.count(3)), lambda bc: next(bc[1]), False),
        ("a property's getter replaced", lambda: property(len), lambda p: p.__init__(repr), True),
    ]


_IDS = [c[0] for c in _cases()]


@pytest.mark.parametrize("name,build,change,needs_check", _cases(), ids=_IDS)
def test_a_change_under_a_seeded_object_is_seen(
    name: str, build: Callable[[], object], change: Callable[[Any], None], needs_check: bool
) -> None:
    made = build()
    fp.begin_search()
    try:
        state = ([made], "rest")
        before = _twice(state)
        assert fp.encode(state) == before  # same state, same digest
        change(made)
        assert fp.encode(state) != before, name
        after = _twice(state)  # (what the change newly reaches is seeded by now)
        assert after != before, name
        assert fp.encode(state) == after
    finally:
        fp.end_search()


@pytest.mark.parametrize("name,build,change,needs_check", _cases(), ids=_IDS)
def test_without_the_check_the_change_would_be_missed(
    name: str,
    build: Callable[[], object],
    change: Callable[[Any], None],
    needs_check: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With ``_Seeds.refresh`` off, exactly the changes that need a seeded object's check are
    missed: so each case above really exercises that check (or the re-reading of containers)."""
    made = build()
    fp.begin_search()
    try:
        state = ([made], "rest")
        before = _twice(state)
        monkeypatch.setattr(fp._Seeds, "refresh", lambda self: None)
        change(made)
        missed = fp.encode(state) == before
    finally:
        fp.end_search()
    assert missed == needs_check, name


def test_identity_and_equality(seeded: None) -> None:
    shared: list[int] = []
    assert fp.encode(([shared, shared],)) != fp.encode(([[], []],))  # aliasing is state
    assert fp.encode(([[1], {"a": (2, 3.5)}],)) == fp.encode(([[1], {"a": (2, 3.5)}],))
    assert fp.encode([1]) != fp.encode([True]) != fp.encode([1.0])
    assert fp.encode([0.0]) != fp.encode([-0.0])
    with pytest.raises(fp.Opaque):
        fp.encode([i for i in range(2)])  # (a list: fine)
        fp.encode(i for i in range(2))  # a generator's state is hidden
    it = iter([1, 2, 3])
    first = fp.encode(it)
    next(it)
    assert fp.encode(it) != first


def _both(record: list[tuple[Hashable, Hashable]]) -> Callable[[Execution], Hashable | None]:
    def both(ex: Execution) -> Hashable | None:
        walked = fp.walk_fingerprint(ex)
        encoded = fp.fingerprint(ex)
        record.append((walked, encoded))
        return encoded

    return both


@pytest.mark.parametrize(
    "program",
    [
        examples.bounded_buffer(1, 2, 1, 1),
        examples.counter(2, locked=True),
        examples.handoff(use_while=True),
        examples.lock_order(inverted=False),
    ],
    ids=["bounded-buffer", "counter", "handoff", "lock-order"],
)
def test_the_encoder_identifies_what_the_walk_identifies(program: Any) -> None:
    record: list[tuple[Hashable, Hashable]] = []
    result = check_states(program, fingerprint_fn=_both(record))
    assert isinstance(result, StatefulResult)
    plain = check(program, strategy="dfs")
    assert result.verdict == plain.verdict == "exhaustive" and result.outcomes == plain.outcomes
    walk_of: dict[Hashable, Hashable] = {}
    for walked, encoded in record:
        assert walked is not None and encoded is not None
        # never two different walked states under one digest (no conflation)
        assert walk_of.setdefault(encoded, walked) == walked
    # and the digests separate hardly more than the walk does (the first dumps of a search
    # write an object before and after it is seeded)
    walked_states = len({w for w, _ in record})
    assert walked_states <= len(walk_of) <= walked_states + 10, (walked_states, len(walk_of))


def test_a_search_explores_as_many_states_as_with_the_walk() -> None:
    program = examples.bounded_buffer(1, 2, 2, 1)
    fast = check_states(program)
    walked = check_states(program, fingerprint_fn=fp.walk_fingerprint)
    assert isinstance(fast, StatefulResult) and isinstance(walked, StatefulResult)
    assert fast.verdict == walked.verdict == "exhaustive" and fast.outcomes == walked.outcomes
    assert walked.states <= fast.states <= walked.states + 10, (walked.states, fast.states)


class Node:
    def __init__(self, nxt: Node | None) -> None:
        self.nxt = nxt


def test_a_heap_deeper_than_the_pickler_may_recurse_is_refused_by_it_not_crashed() -> None:
    # ``fingerprint`` then walks it in Python (``walk_fingerprint``), whose recursion is not on
    # the C stack
    chain: Node | None = None
    for _ in range(2_000):
        chain = Node(chain)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(4_000)
    try:
        with pytest.raises(RecursionError):
            fp.encode(chain)
    finally:
        sys.setrecursionlimit(limit)
    sys.setrecursionlimit(20_000)  # as ``walk_fingerprint`` does
    try:
        assert fp._Canon().value(chain)
    finally:
        sys.setrecursionlimit(limit)


def test_objects_a_caller_froze_are_still_pre_existing() -> None:
    """``gc.get_objects`` lists no frozen object: under a caller's ``gc.freeze`` the search would
    seed nothing and write every state in full. ``begin_search`` unfreezes to list them (and
    freezes again)."""
    import gc

    kept = Box([1])
    gc.freeze()
    try:
        assert all(x is not kept for x in gc.get_objects())  # what the search has to work around
        fp.begin_search()
        seeds = seeds_module._SEEDS[0]
        assert seeds is not None and id(kept) in seeds.pre
        assert gc.get_freeze_count() > 0  # the caller's freeze stands
    finally:
        fp.end_search()
        gc.unfreeze()


def test_the_state_search_freezes_what_existed_before_it_only_while_it_runs() -> None:
    import gc

    seen: list[int] = []

    def program(rt: Any) -> object:
        seen.append(gc.get_freeze_count())
        return examples.counter(2, locked=True)(rt)

    result = check_states(program)
    assert result.verdict == "exhaustive" and seen and min(seen) > 0
    assert gc.get_freeze_count() == 0
