"""Every complete behaviour of a spec configuration, projected onto the events it logs.

A depth-first search over the state graph computes, per state, the set of event sequences
from there to a state with no successor (memoised, so each state is expanded once). Steps
whose event is not kept add nothing. Exhaustive: a configuration too large to enumerate
raises ``TooManyTraces`` instead of answering from part of it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Collection, Hashable
from typing import Any

from spec.language import Instance, Spec, Transition

Event = tuple[str, str, tuple[tuple[str, Hashable], ...]]  # (thread, event, sorted fields)
Trace = tuple[Event, ...]


class TooManyTraces(OverflowError):
    """The behaviours could not be enumerated within the bound (traces per state, or seconds)."""


def event_of(t: Transition) -> Event:
    assert t.event is not None and t.fields is not None
    fields = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in t.fields.items()))
    return (str(t.process), t.event, fields)


def behaviours(
    spec: Spec,
    constants: Any,
    keep: Collection[str],
    max_traces: int = 1_000_000,
    time_limit: float | None = None,
) -> set[Trace]:
    """The sequences of kept events of every complete behaviour (ending where nothing is enabled).

    A cycle in the state graph (a behaviour that need not end) or a deadlock is an error: the
    comparison needs every behaviour to be a finite sequence."""
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
            if t.event is None or t.event not in keep:
                out |= rest
            else:
                ev = event_of(t)
                out.update((ev, *r) for r in rest)
            if len(out) > max_traces:
                raise TooManyTraces(
                    f"more than {max_traces:,} behaviours from one state: use a smaller configuration"
                )
        if deadline is not None and time.perf_counter() > deadline:
            raise TooManyTraces(f"not enumerated within {time_limit:g} s ({len(memo):,} states done)")
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
    return found


def canonical(trace: Trace) -> Trace:
    """Workers renamed ``w0``, ``w1`` ... by first appearance: they are interchangeable in both specs."""
    names: dict[str, str] = {}
    out = []
    for thread, name, fields in trace:
        if thread.startswith("w"):
            thread = names.setdefault(thread, f"w{len(names)}")
        out.append((thread, name, fields))
    return tuple(out)


def accepts(spec: Spec, constants: Any, trace: Trace) -> int | None:
    """Replay ``trace`` (every event the spec logs, workers named as in the spec) over the spec:
    None when some behaviour logs exactly that sequence to its end, else the index of the
    first event no behaviour allows after the events before it (``len(trace)`` when the whole
    trace is a prefix of behaviours but none ends there)."""
    inst = Instance(spec, constants)

    def close(states: set[Any]) -> set[Any]:
        todo, seen = list(states), set(states)
        while todo:
            for t in inst.successors(todo.pop()):
                if t.event is None and t.state not in seen:
                    seen.add(t.state)
                    todo.append(t.state)
        return seen

    current = close(set(inst.initial_states()))
    for i, ev in enumerate(trace):
        nxt = {
            t.state for s in current for t in inst.successors(s) if t.event is not None and event_of(t) == ev
        }
        if not nxt:
            return i
        current = close(nxt)
    ends = any(not any(True for _ in inst.successors(s)) for s in current)
    return None if ends else len(trace)
