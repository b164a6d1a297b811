"""Every complete behaviour of a spec configuration, projected onto the events it logs.

A depth-first search over the state graph computes, per state, the set of event sequences from
there to a state with no successor (memoised, so each state is expanded once). Steps whose event
is not kept add nothing. Exhaustive: a configuration too large to enumerate raises
``TooManyTraces`` instead of answering from part of it. Generic: any spec, any constants; the
designs' trace comparisons (spec against reference, one spec against another) build on it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Collection, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from spec.language import Instance, Spec, Transition

Event = tuple[str, str, tuple[tuple[str, Hashable], ...]]  # (thread, event, sorted fields)
Trace = tuple[Event, ...]
F = TypeVar("F")


class TooManyTraces(OverflowError):
    """The behaviours could not be enumerated within the bound (traces per state, or seconds)."""


def event_of(t: Transition) -> Event:
    """A logged step as a comparable value: lists in its fields become tuples."""
    assert t.event is not None and t.fields is not None
    fields = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in t.fields.items()))
    return (str(t.process), t.event, fields)


def canonical(trace: Iterable[tuple[str, str, F]]) -> tuple[tuple[str, str, F], ...]:
    """Workers are interchangeable: rename them ``w0``, ``w1``.. in order of first appearance."""
    names: dict[str, str] = {}
    out: list[tuple[str, str, F]] = []
    for thread, event, fields in trace:
        if thread.startswith("w"):
            thread = names.setdefault(thread, f"w{len(names)}")
        out.append((thread, event, fields))
    return tuple(out)


@dataclass(frozen=True)
class Behaviours:
    traces: set[Trace]
    states: int  # states expanded: every state some behaviour passes


def behaviours(
    spec: Spec,
    constants: Any,
    keep: Collection[str] | None,
    *,
    max_traces: int,
    time_limit: float | None = None,
    hint: str = "use a smaller configuration",
    kept: Callable[[Any, Transition], None] | None = None,
) -> Behaviours:
    """The sequences of kept events (``keep`` None: every event) of every complete behaviour
    (ending where nothing is enabled); ``kept(state, transition)`` is told of each kept step of
    the graph, once. ``hint`` ends the ``TooManyTraces`` message: what the caller can do instead.

    A cycle in the state graph (a behaviour that need not end) or a deadlock is an error: a
    comparison of trace sets needs every behaviour to be a finite sequence."""
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    inst = Instance(spec, constants)
    memo: dict[Any, frozenset[Trace]] = {}
    on_path: set[Any] = set()

    def suffixes(state: Any) -> frozenset[Trace]:
        got = memo.get(state)
        if got is not None:
            return got
        if state in on_path:
            raise ValueError(f"{spec.name}: the state graph has a cycle at {inst.describe(state)}")
        on_path.add(state)
        out: set[Trace] = set()
        successors = list(inst.successors(state))
        if not successors:
            if not inst.is_terminal(state):
                raise ValueError(f"{spec.name} deadlocks in {inst.describe(state)}")
            out.add(())
        for t in successors:
            rest = suffixes(t.state)
            if t.event is None or (keep is not None and t.event not in keep):
                out |= rest
            else:
                if kept is not None:
                    kept(state, t)
                ev = event_of(t)
                out.update((ev, *r) for r in rest)
            if len(out) > max_traces:
                raise TooManyTraces(f"more than {max_traces:,} traces from one state: {hint}")
        if deadline is not None and time.perf_counter() > deadline:
            raise TooManyTraces(f"not enumerated within {time_limit:g} s ({len(memo):,} states done): {hint}")
        on_path.discard(state)
        frozen = frozenset(out)
        memo[state] = frozen
        return frozen

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        found: set[Trace] = set()
        for s in inst.initial_states():
            found |= suffixes(s)
    finally:
        sys.setrecursionlimit(limit)
    return Behaviours(found, len(memo))


def closure(inst: Instance, states: Iterable[Any], silent: Callable[[Transition], bool]) -> set[Any]:
    """``states`` and every state reachable from them by ``silent`` steps alone."""
    seen = set(states)
    todo = list(seen)
    while todo:
        for t in inst.successors(todo.pop()):
            if silent(t) and t.state not in seen:
                seen.add(t.state)
                todo.append(t.state)
    return seen
