"""The observable traces a spec configuration allows: its complete behaviours projected onto events.

A depth-first search over the spec's state graph computes, per state, the set of event sequences
from there to a state with no successor (memoised, so each state is expanded once). Internal
actions (``Admit``, ``StopCall``, ``Pop``, ``PopEmpty``, ``GiveUpDrain``) add no event.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Collection, Hashable
from dataclasses import dataclass, field
from typing import Any

from model_checks.designs.work_lane.link.scenario import EventKey, TraceKey, canonical
from spec import work_lane as wl
from spec.language import Instance, Transition

# A labelled transition of the state graph: (state, action name, process and parameters).
TransitionKey = tuple[Any, str, tuple[Hashable, ...]]


@dataclass
class SpecTraces:
    traces: set[TraceKey]  # canonical (workers renamed by first appearance)
    raw_traces: int  # before canonicalisation
    states: int
    labelled_transitions: set[TransitionKey] = field(default_factory=set)
    kinds: set[tuple[str, tuple[tuple[str, Any], ...]]] = field(default_factory=set)


def transition_event(t: Transition) -> EventKey:
    assert t.event is not None and t.fields is not None
    fields = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in t.fields.items()))
    return (str(t.process), t.event, fields)


def kind_of(t: Transition) -> tuple[str, tuple[tuple[str, Any], ...]]:
    """An action with its event fields, items aside (what a covering set must show)."""
    assert t.fields is not None
    return (
        t.action.name,
        tuple(sorted((k, len(v) if isinstance(v, list) else v) for k, v in t.fields.items() if k != "item")),
    )


class TooManyTraces(OverflowError):
    """The spec's trace set could not be enumerated within the bound (traces or seconds)."""


def spec_traces(
    constants: wl.Constants,
    max_traces: int = 2_000_000,
    observed: Collection[str] | None = None,
    time_limit: float | None = None,
) -> SpecTraces:
    """``observed``: project onto these events (the others count as internal); None = every event.

    The set can grow exponentially with the scenario: past ``max_traces`` traces in one state, or
    ``time_limit`` seconds, ``TooManyTraces`` says so instead of running on."""
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    inst = Instance(wl.SPEC, constants)
    labelled: set[TransitionKey] = set()
    kinds: set[tuple[str, tuple[tuple[str, Any], ...]]] = set()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))

    @functools.cache  # each state once: the graph is a DAG with many paths to a state
    def suffixes(state: Any) -> frozenset[tuple[EventKey, ...]]:
        out: set[tuple[EventKey, ...]] = set()
        successors = list(inst.successors(state))
        if not successors:
            if not inst.is_terminal(state):
                raise AssertionError(f"the spec deadlocks in {inst.describe(state)}")
            out.add(())
        for t in successors:
            rest = suffixes(t.state)
            if t.event is None or (observed is not None and t.event not in observed):
                out |= rest
            else:
                labelled.add((state, t.action.name, tuple(t.args)))
                kinds.add(kind_of(t))
                ev = transition_event(t)
                out.update((ev, *r) for r in rest)
            if len(out) > max_traces:
                raise TooManyTraces(f"more than {max_traces} traces: choose a smaller scenario")
        if deadline is not None and time.perf_counter() > deadline:
            raise TooManyTraces(
                f"the spec's trace set was not enumerated within {time_limit:g} s "
                f"({suffixes.cache_info().currsize:,} states done): choose a smaller scenario, or "
                "compare fewer events (--observe)"
            )
        return frozenset(out)

    try:
        raw: set[tuple[EventKey, ...]] = set()
        for s in inst.initial_states():
            raw |= suffixes(s)
    finally:
        sys.setrecursionlimit(limit)
    return SpecTraces({canonical(t) for t in raw}, len(raw), suffixes.cache_info().currsize, labelled, kinds)


def realised(
    constants: wl.Constants, trace: TraceKey, observed: Collection[str] | None = None
) -> tuple[set[TransitionKey], bool]:
    """Run one trace over the spec's state graph; the labelled transitions it can have used, and
    whether the spec allows it. Worker names are tried as given (the spec's are ``w0``..).
    ``observed`` as in ``spec_traces``: the trace holds only those events."""
    inst = Instance(wl.SPEC, constants)

    def silent(t: Transition) -> bool:
        return t.event is None or (observed is not None and t.event not in observed)

    def close(states: set[Any]) -> set[Any]:
        todo = list(states)
        seen = set(states)
        while todo:
            s = todo.pop()
            for t in inst.successors(s):
                if silent(t) and t.state not in seen:
                    seen.add(t.state)
                    todo.append(t.state)
        return seen

    current = close(set(inst.initial_states()))
    used: set[TransitionKey] = set()
    for ev in trace:
        nxt: set[Any] = set()
        for s in current:
            for t in inst.successors(s):
                if not silent(t) and transition_event(t) == ev:
                    used.add((s, t.action.name, tuple(t.args)))
                    nxt.add(t.state)
        if not nxt:
            return used, False
        current = close(nxt)
    return used, True
