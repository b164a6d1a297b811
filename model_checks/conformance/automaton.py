"""The streaming search memoised: a lazily built deterministic automaton over canonical checker states.

A streaming checker (``streamed.Checker``) holds the set of spec states consistent with the
events so far, plus what its binding learned (scripts, ...). Its step is a function of that
configuration and the event, so it can be memoised — once equal configurations meet again.
In a real trace they do not meet as they are: item ids are new with every post and counters
(posts settled, messages processed) only grow. They meet once *renamed*:

* an ``Item`` (a datum the spec only copies and compares for equality: a posted item) becomes
  a register, numbered by first occurrence in the configuration;
* a ``Clock`` (an integer the spec only increments and compares with the clocks of its own
  group: a producer's post count and its script's positions) is kept relative to the least
  clock of its group; the group's base is a register.

The design says where these are (``MemoBinding.freeze`` wraps them); everything else is kept
exactly. The canonical configuration is interned (an integer id), and the automaton caches
(id, event with its items named by register) -> (next id, how the next registers come from
the current ones and the event's items). After warm-up an event is a key and a dict lookup;
on a miss the real checker is brought to the current configuration (``thaw``), takes the
event, and the new transition is learned. Rejections, words and pending work always come
from the real checker, so a verdict reads the same as the spec engine's.

Sound when the declarations hold (the spec is data-independent in its items and shift-
invariant in each clock group) and the renaming is exact (``decanon(canon(c)) == c``).
``tests/conformance/test_memo_*.py`` checks it against the unmemoised search on valid and
mutated traces. A transition that binds a new process or unit is not cached (the checker's
action instances change with it), and the caches are cleared when they hold ``limit``
configurations, so memory is bounded on any trace (by that many configurations, each the size
of the live states).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from spec.language import Function


class Item(NamedTuple):
    """A datum in a frozen configuration: renamed to a register."""

    value: Hashable


class Clock(NamedTuple):
    """A counter in a frozen configuration: kept relative to its ``group``'s least value."""

    group: Hashable
    value: int


class _Reg(NamedTuple):  # an item, canonically: the register that holds it
    register: int


class _Rel(NamedTuple):  # a clock, canonically: its group (by position) and its offset
    group: int
    offset: int


class _Set(NamedTuple):  # a frozenset, canonically: its members in the order of their shapes
    members: tuple[Any, ...]


class MemoBinding(Protocol):
    """What a design tells the automaton about its checker."""

    # The event fields that carry items (one item, or a list of them).
    item_fields: frozenset[str]

    def freeze(self, checker: Any) -> Hashable:
        """The checker's whole configuration as a value, ``Item``s and ``Clock``s wrapped."""
        ...

    def thaw(self, checker: Any, frozen: Any) -> None:
        """Put the checker in the configuration ``frozen`` (as ``freeze`` gave it)."""
        ...

    def binding(self, checker: Any) -> Hashable:
        """What the checker has bound (processes, units): a transition that changes it is not cached."""
        ...


# -------------------------------------------------------------------------- canonical form


class _Canon:
    """One pass over a frozen configuration: items to registers, clocks to offsets."""

    def __init__(self, bases: dict[Hashable, int]) -> None:
        self.items: list[Hashable] = []
        self.index: dict[Hashable, int] = {}
        self.bases = bases
        self.groups: list[Hashable] = []
        self.group_index: dict[Hashable, int] = {}

    def walk(self, x: Any) -> Any:
        t = type(x)
        if t is Item:
            i = self.index.get(x.value)
            if i is None:
                i = self.index[x.value] = len(self.items)
                self.items.append(x.value)
            return _Reg(i)
        if t is Clock:
            g = self.group_index.get(x.group)
            if g is None:
                g = self.group_index[x.group] = len(self.groups)
                self.groups.append(x.group)
            return _Rel(g, x.value - self.bases[x.group])
        if t is Function:
            return Function(x.domain(), [self.walk(v) for v in x.values()])
        if t is frozenset:
            # Members in an order that does not depend on the registers' values: by their shape.
            members = list(x) if len(x) < 2 else sorted(x, key=lambda m: repr(_shape(m, self.bases)))
            return _Set(tuple([self.walk(m) for m in members]))
        if isinstance(x, tuple):
            walked = [self.walk(v) for v in x]
            return t._make(walked) if hasattr(t, "_make") else tuple(walked)
        return x


def _shape(x: Any, bases: Mapping[Hashable, int]) -> Any:
    """``x`` with its items anonymous and its clocks relative: the order of a set's members."""
    t = type(x)
    if t is Item:
        return "?"
    if t is Clock:
        return (x.group, x.value - bases[x.group])
    if t is Function:
        return tuple((k, _shape(v, bases)) for k, v in x.items())
    if t is frozenset:
        return tuple(sorted(repr(_shape(m, bases)) for m in x))
    if isinstance(x, tuple):
        return tuple(_shape(v, bases) for v in x)
    return x


def _bases(x: Any, out: dict[Hashable, int]) -> None:
    t = type(x)
    if t is Clock:
        low = out.get(x.group)
        if low is None or x.value < low:
            out[x.group] = x.value
    elif t is Item:
        return
    elif t is Function:
        for v in x.values():
            _bases(v, out)
    elif t is frozenset or isinstance(x, tuple):
        for v in x:
            _bases(v, out)


def canon(frozen: Any) -> tuple[Any, tuple[Hashable, ...], tuple[Hashable, ...], tuple[int, ...]]:
    """(canonical form, items by register, clock groups by position, each group's base)."""
    bases: dict[Hashable, int] = {}
    _bases(frozen, bases)
    c = _Canon(bases)
    form = c.walk(frozen)
    groups = tuple(c.groups)
    return (form, groups), tuple(c.items), groups, tuple(bases[g] for g in groups)


def decanon(form: Any, items: tuple[Hashable, ...], bases: tuple[int, ...]) -> Any:
    """The configuration ``canon`` read ``form`` from, given its registers."""
    shape, groups = form
    return _back(shape, items, groups, bases)


def _back(x: Any, items: tuple[Hashable, ...], groups: tuple[Hashable, ...], bases: tuple[int, ...]) -> Any:
    t = type(x)
    if t is _Reg:
        return Item(items[x.register])
    if t is _Rel:
        return Clock(groups[x.group], bases[x.group] + x.offset)
    if t is Function:
        return Function(x.domain(), [_back(v, items, groups, bases) for v in x.values()])
    if t is _Set:
        return frozenset(_back(m, items, groups, bases) for m in x.members)
    if isinstance(x, tuple):
        walked = [_back(v, items, groups, bases) for v in x]
        return t._make(walked) if hasattr(t, "_make") else tuple(walked)
    return x


# -------------------------------------------------------------------------- the automaton

# Configurations held at most (each with its outgoing transitions): the caches' bound.
LIMIT = 4_096


@dataclass
class _Edge:
    target: int
    items: tuple[int, ...]  # per next register: >= 0 a current register, < 0 the event's -1 - i th item
    bases: tuple[tuple[int, int], ...]  # per next group: (the current group, its base's change)


class Automaton:
    """The interned canonical configurations of one trace and the transitions learned between
    them; cleared when ``limit`` configurations are held (``generation`` counts the clearings)."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self.ids: dict[Any, int] = {}
        self.forms: list[Any] = []
        self.edges: dict[Hashable, _Edge] = {}
        self.generation = 0
        self.hits = 0
        self.misses = 0

    def intern(self, form: Any) -> int:
        found = self.ids.get(form)
        if found is None:
            if len(self.forms) >= self.limit:
                self.clear()
            found = self.ids[form] = len(self.forms)
            self.forms.append(form)
        return found

    def clear(self) -> None:
        self.ids.clear()
        self.forms.clear()
        self.edges.clear()
        self.generation += 1


class MemoChecker:
    """A ``streamed.Checker`` that steps an ``Automaton`` and the real checker only on a miss."""

    def __init__(self, checker: Any, binding: MemoBinding, automaton: Automaton | None = None) -> None:
        self.checker = checker
        self.memo = binding
        self.auto = automaton if automaton is not None else Automaton()
        self.item_fields = binding.item_fields
        self._learn()

    def _learn(self) -> None:
        """Read the real checker's configuration (it is current) as the automaton's state."""
        form, items, groups, bases = canon(self.memo.freeze(self.checker))
        self.state = self.auto.intern(form)
        self.items = items
        self.index = {v: i for i, v in enumerate(items)}
        self.groups = groups
        self.bases = bases
        self.current = True  # the real checker is in this configuration
        self.bound = self.memo.binding(self.checker)

    def _sync(self) -> None:
        """Bring the real checker to the automaton's configuration (after hits)."""
        if not self.current:
            form = self.auto.forms[self.state]
            self.memo.thaw(self.checker, decanon(form, self.items, self.bases))
            self.current = True

    def _key(self, ev: Mapping[str, Any]) -> tuple[Hashable, list[Hashable]]:
        """The event with its items named by register (or by first occurrence among its new ones)."""
        fresh: list[Hashable] = []
        parts: list[Hashable] = [self.state]
        index = self.index
        item_fields = self.item_fields
        for k, v in ev.items():
            if k == "seq":
                continue
            if k in item_fields:
                v = _named(v, index, fresh)
            parts.append((k, v))
        return tuple(parts), fresh

    def step(self, ev: dict[str, Any]) -> None:
        key, fresh = self._key(ev)
        try:
            edge = self.auto.edges.get(key)
        except TypeError:  # an unhashable field value: the real checker judges it
            key, edge = None, None
        if edge is not None:
            self.auto.hits += 1
            old, bases = self.items, self.bases
            items = tuple([old[i] if i >= 0 else fresh[-1 - i] for i in edge.items])
            self.items = items
            self.index = {v: i for i, v in enumerate(items)}
            self.bases = tuple([bases[g] + d for g, d in edge.bases])
            self.state = edge.target
            self.groups = self.auto.forms[edge.target][1]
            self.current = False
            return
        self.auto.misses += 1
        self._sync()
        before_index, before_groups, before_bases = self.index, self.groups, self.bases
        generation, bound = self.auto.generation, self.bound
        self.checker.step(ev)  # Rejected / Malformed propagate with the real checker's words
        self._learn()
        # Not learned: a step that bound a process or unit (the checker's actions changed with
        # it), or one across a clearing of the caches (``key`` names a configuration id of before).
        if key is None or self.bound != bound or self.auto.generation != generation:
            return
        edge = _edge_of(self, before_index, before_groups, before_bases, fresh)
        if edge is not None:
            self.auto.edges[key] = edge

    # -- the rest of the Checker protocol: the real checker, brought up to date ----------------

    @property
    def complete(self) -> bool:
        self._sync()
        return bool(self.checker.complete)

    def finish(self, complete: bool) -> None:
        self._sync()
        self.checker.finish(complete)

    def pending(self) -> tuple[dict[str, Any], list[str]]:
        self._sync()
        result: tuple[dict[str, Any], list[str]] = self.checker.pending()
        return result

    def describe(self) -> list[dict[str, Any]]:
        self._sync()
        result: list[dict[str, Any]] = self.checker.describe()
        return result


def _named(v: Any, index: Mapping[Hashable, int], fresh: list[Hashable]) -> Hashable:
    if type(v) is list:
        return tuple([_named(x, index, fresh) for x in v])
    i = index.get(v)
    if i is not None:
        return ("r", i)
    if v in fresh:
        return ("n", fresh.index(v))
    fresh.append(v)
    return ("n", len(fresh) - 1)


def _edge_of(
    m: MemoChecker,
    before_index: Mapping[Hashable, int],
    before_groups: tuple[Hashable, ...],
    before_bases: tuple[int, ...],
    fresh: list[Hashable],
) -> _Edge | None:
    """How the registers after the step come from those before and the event's new items; None
    when an item comes from neither (then the step is not a function of the shape: not cached)."""
    items = []
    for v in m.items:
        i = before_index.get(v)
        if i is None:
            if v not in fresh:
                return None
            i = -1 - fresh.index(v)
        items.append(i)
    position = {g: i for i, g in enumerate(before_groups)}
    bases = []
    for g, base in zip(m.groups, m.bases, strict=True):
        i = position.get(g)
        if i is None:  # a group new to the configuration: its clocks may come from another's
            return None
        bases.append((i, base - before_bases[i]))
    return _Edge(m.state, tuple(items), tuple(bases))


def memoised(
    make: Callable[[dict[str, Any]], Any], binding: MemoBinding, limit: int = LIMIT
) -> Callable[[dict[str, Any]], MemoChecker]:
    """A checker factory whose checkers step through an automaton of their own (one per trace)."""

    def make_memo(config: dict[str, Any]) -> MemoChecker:
        return MemoChecker(make(config), binding, Automaton(limit))

    return make_memo


__all__ = ["Automaton", "Clock", "Item", "MemoBinding", "MemoChecker", "canon", "decanon", "memoised"]
