"""Growing a streaming search (``search.TraceSearch``) as its trace reveals more: a process when a
thread first shows a role, units (actors, lanes, mailboxes) when an event first names them, and
the script entries the live states can no longer read, dropped so that memory stays bounded.

A design's state is a ``NamedTuple`` whose components are ``Function``s: what joins, joins each
state in the value every behaviour would give it, so the search goes on as if it had been there
from the start.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, overload

from model_checks.conformance.binding import grown, with_entry
from model_checks.conformance.search import Miss, TraceSearch
from spec.function import Function

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

C = TypeVar("C", bound="DataclassInstance")  # a spec's frozen constants
S = TypeVar("S")
V = TypeVar("V")


def add_process(search: TraceSearch, constants: Any, local: str, name: Hashable, start: Any) -> None:
    """Bind process ``name`` (the constants already list it): every state's ``local`` function
    (``producer``, ``worker``, ...) maps it to ``start``, where a process begins."""
    search.rebind(constants, lambda s: s._replace(**{local: with_entry(getattr(s, local), name, start)}))


def joined(s: Any, new: tuple[int, ...], start: Mapping[str, Any]) -> Any:
    """``s`` with the units ``new`` in each of its functions named in ``start``, mapped to its value there."""
    return s._replace(**{name: grown(getattr(s, name), new, value) for name, value in start.items()})


def add_units(search: TraceSearch, constants: C, count: str, index: int, start: Mapping[str, Any]) -> C:
    """Units up to ``index`` join: the constants' ``count`` grows to ``index + 1`` and every state
    holds the new units as ``start`` says (each function's value for a unit never named).
    Returns the new constants; nothing changes when ``index`` is below the count already."""
    old = getattr(constants, count)
    if index < old:
        return constants
    new = tuple(range(old, index + 1))
    grown_constants = dataclasses.replace(constants, **{count: index + 1})
    search.rebind(grown_constants, lambda s: joined(s, new, start))
    return grown_constants


class UnitNames:
    """The units a trace names (any number its header allows) as the spec's units 0, 1, 2, ... in
    the order the trace first names them.

    A state holds its per-unit functions over every unit from 0 up, so a trace that named unit
    65,535 alone would make each state hold 65,536 entries of each (a second per event). Every
    spec here treats its units alike: each starts as every other does, and no action compares two
    units' numbers. So the renaming is exact (a behaviour of one naming is a behaviour of the
    other), and a state holds only the units the trace has named. Words say the trace's numbers
    (``traced``)."""

    def __init__(self, field: str, count: str, start: Mapping[str, Any]) -> None:
        self.field = field  # the event field naming a unit
        self.count = count  # the constants' count of units
        self.start = start  # each per-unit function's value for a unit never named
        self._spec: dict[int, int] = {}
        self._trace: list[int] = []

    def spec_event(self, search: TraceSearch, constants: C, ev: dict[str, Any]) -> tuple[C, dict[str, Any]]:
        """``(constants, ev)`` in the spec's names: a unit named for the first time joins the
        constants (returned) and every state of ``search``."""
        unit = ev.get(self.field)
        if type(unit) is not int:
            return constants, ev
        named = self._spec.get(unit)
        if named is None:
            named = self._spec[unit] = len(self._trace)
            self._trace.append(unit)
            constants = add_units(search, constants, self.count, named, self.start)
        return constants, ev if named == unit else {**ev, self.field: named}

    def spec_unit(self, unit: int) -> int | None:
        """The spec's name of the trace's ``unit``; None when the trace has not named it."""
        return self._spec.get(unit)

    @overload
    def traced(self, unit: int) -> int: ...

    @overload
    def traced(self, unit: None) -> None: ...

    def traced(self, unit: int | None) -> int | None:
        """The trace's number of the spec's ``unit`` (None stays None: a process holding no unit)."""
        return None if unit is None else self._trace[unit]

    def traced_function(self, f: Function[int, V]) -> Function[int, V]:
        """A per-unit function of a state over the trace's numbers, in their order (for words)."""
        pairs = sorted(f.items(), key=lambda entry: self._trace[entry[0]])
        return Function([self._trace[u] for u, _ in pairs], [v for _, v in pairs])

    def traced_state(
        self, s: S, per_unit: Iterable[str], queues: Iterable[str], held: Mapping[str, int]
    ) -> S:
        """A state (a ``NamedTuple``) with every unit in the trace's numbers, for words: its
        ``per_unit`` functions keyed by them, its ``queues`` of units renumbered, and in each
        function of ``held`` (a process's local tuples) the item at that index."""
        t = self.traced

        def renumbered(local: tuple[Any, ...], at: int) -> tuple[Any, ...]:
            return (*local[:at], t(local[at]), *local[at + 1 :])

        changes: dict[str, Any] = {name: self.traced_function(getattr(s, name)) for name in per_unit}
        changes.update({name: tuple(t(u) for u in getattr(s, name)) for name in queues})
        for name, at in held.items():
            f = getattr(s, name)
            changes[name] = f.with_values(renumbered(local, at) for local in f.values())
        traced: S = s._replace(**changes)  # type: ignore[attr-defined]
        return traced

    def in_trace_order(self, units: Iterable[int]) -> list[int]:
        """The spec's ``units`` in the order of their trace numbers (words list units so)."""
        return sorted(units, key=self._trace.__getitem__)

    def traced_miss(self, miss: Miss) -> Miss:
        """``miss`` with the unit of the step the spec could take in the trace's numbers."""
        unit = miss.fields.get(self.field)
        if type(unit) is not int:
            return miss
        return dataclasses.replace(miss, fields={**miss.fields, self.field: self._trace[unit]})


def forget_read(script: dict[int, Any], states: Iterable[S], position: Callable[[S], int]) -> None:
    """Drop the entries of ``script`` (k -> the k-th step of one process) that no live state can
    read again: those before every state's ``position`` in it (a script of one entry is kept)."""
    if len(script) > 1:
        low = min(position(s) for s in states)
        for k in [k for k in script if k < low]:
            del script[k]


__all__ = ["UnitNames", "add_process", "add_units", "forget_read", "joined"]
