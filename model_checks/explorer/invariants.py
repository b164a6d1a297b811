"""Checking a spec's invariants in a new state, remembering the verdicts of those that say what they read.

An invariant declared with ``reads=`` is a function of the constants and of
the values of the state variables it names, so its verdict on one tuple of
those values holds for every state that has them. A search meets the same
few values again and again (the workers' local states, the ready queue), so
each such invariant keeps a table from the values it read to its verdict
and is only evaluated on values it has not seen. Looking a tuple up costs a
fraction of evaluating a predicate that loops over lanes and processes.

An invariant without ``reads=`` is evaluated in every state, as is every
invariant of a state that is not a record of named variables.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any

from spec.language import Invariant, InvariantFn, SpecError

Violated = tuple[str, str]  # (invariant name, reason)
_UNSEEN = object()


class InvariantChecker:
    """The invariants of one search, in declaration order, with a verdict table per hinted one."""

    def __init__(self, invariants: tuple[Invariant, ...], constants: Any, sample: Any) -> None:
        self.constants = constants
        fields: tuple[str, ...] | None = getattr(type(sample), "_fields", None)
        if not isinstance(sample, tuple):
            fields = None
        self.plan: list[tuple[str, InvariantFn, Callable[[Any], Any] | None, dict[Any, Any]]] = []
        for inv in invariants:
            project: Callable[[Any], Any] | None = None
            if inv.reads is not None and fields is not None:
                unknown = [name for name in inv.reads if name not in fields]
                if unknown:
                    names = ", ".join(unknown)
                    raise SpecError(f"invariant {inv.name} reads {names}: not variables of the state")
                project = _projection(tuple(fields.index(name) for name in inv.reads))
            self.plan.append((inv.name, inv.fn, project, {}))

    def first_violated(self, state: Any) -> Violated | None:
        """The first invariant (in declaration order) that ``state`` violates, and why."""
        c = self.constants
        for name, fn, project, verdicts in self.plan:
            if project is None:
                reason = fn(c, state)
            else:
                values = project(state)
                reason = verdicts.get(values, _UNSEEN)
                if reason is _UNSEEN:
                    reason = verdicts[values] = fn(c, state)
            if reason is not None:
                return name, reason
        return None


def _projection(indices: tuple[int, ...]) -> Callable[[Any], Any]:
    if not indices:
        return _nothing
    # itemgetter of one index gives the value itself, of several a tuple: either is a fine key.
    return itemgetter(*indices)


def _nothing(_state: Any) -> tuple[()]:
    return ()
