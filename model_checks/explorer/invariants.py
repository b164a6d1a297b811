"""Checking a spec's invariants in a new state, remembering the verdicts of those that say what they read.

An invariant declared with ``reads=`` is a function of the constants and of
the values of the state variables it names, so its verdict on one tuple of
those values holds for every state that has them. A search meets the same
few values again and again (the workers' local states, the ready queue), so
such invariants keep a table from the values they read to their verdict and
are only evaluated on values not seen before: looking a tuple up costs a
fraction of evaluating a predicate that loops over lanes and processes.

Consecutive invariants whose read-sets are nested (one contains the other)
share one table keyed by the larger set: the same values decide both, so
sharing costs no table hits and saves lookups. The table keeps the first
violation of the group in declaration order, as evaluating them one by one
would find it.

A successor whose step left a group's variables as they were in its parent
is not even looked up: the parent satisfied every invariant.

An invariant without ``reads=`` is evaluated in every state, as is every
invariant when states are not records of named variables.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any

from spec.language import Invariant, InvariantFn, SpecError

Violated = tuple[str, str]  # (invariant name, reason)
Group = tuple[tuple[tuple[str, InvariantFn], ...], Callable[[Any], Any] | None, dict[Any, Any]]
_UNSEEN = object()


class InvariantChecker:
    """The invariants of one search, in declaration order, with a verdict table per group of hinted ones."""

    def __init__(self, invariants: tuple[Invariant, ...], constants: Any, sample: Any) -> None:
        self.constants = constants
        fields: tuple[str, ...] | None = getattr(type(sample), "_fields", None)
        if not isinstance(sample, tuple):
            fields = None
        # (members, the variables they read or None for "evaluate every time")
        groups: list[tuple[list[tuple[str, InvariantFn]], frozenset[str] | None]] = []
        for inv in invariants:
            reads = None if fields is None or inv.reads is None else frozenset(inv.reads)
            if reads is not None:
                unknown = sorted(reads - set(fields or ()))
                if unknown:
                    names = ", ".join(unknown)
                    raise SpecError(f"invariant {inv.name} reads {names}: not variables of the state")
            last = groups[-1][1] if groups else None
            if reads is not None and last is not None and (reads <= last or last <= reads):
                groups[-1][0].append((inv.name, inv.fn))
                groups[-1] = (groups[-1][0], last | reads)
            else:
                groups.append(([(inv.name, inv.fn)], reads))
        assert fields is not None or all(reads is None for _, reads in groups)
        order = fields or ()
        self.groups: list[Group] = [
            (tuple(members), None if reads is None else _projection(order, reads), {})
            for members, reads in groups
        ]

    def first_violated(self, state: Any, parent: Any = None) -> Violated | None:
        """The first invariant (in declaration order) that ``state`` violates, and why.

        ``parent``: a state that satisfies every invariant (the search only expands such
        states: it stops at the end of the layer where one is violated); a group that
        reads nothing the step changed holds in ``state`` as it did there.
        """
        for members, project, verdicts in self.groups:
            if project is None:
                bad = self._evaluate(members, state)
            else:
                values = project(state)
                if parent is not None and values == project(parent):
                    continue
                bad = verdicts.get(values, _UNSEEN)
                if bad is _UNSEEN:
                    bad = verdicts[values] = self._evaluate(members, state)
            if bad is not None:
                return bad
        return None

    def _evaluate(self, members: tuple[tuple[str, InvariantFn], ...], state: Any) -> Violated | None:
        c = self.constants
        for name, fn in members:
            reason = fn(c, state)
            if reason is not None:
                return name, reason
        return None


def _projection(fields: tuple[str, ...], reads: frozenset[str]) -> Callable[[Any], Any]:
    indices = [i for i, name in enumerate(fields) if name in reads]
    if not indices:
        return _nothing
    # itemgetter of one index gives the value itself, of several a tuple: either is a fine key.
    return itemgetter(*indices)


def _nothing(_state: Any) -> tuple[()]:
    return ()
