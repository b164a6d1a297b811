"""Which observable spec steps lie only on traces of a spec-only class: a bound on what any
strategy can cover (issue 16).

A class of ``classify.py`` is an ordering the spec allows and the reference never logs (its
reason is in the reference's code, and the exhaustive comparisons of docs/conformance.md show it).
A spec step — an edge of the trace automaton — that lies *only* on complete traces of such a
class can therefore never be realised: the comparison's coverage counts an edge only when a
complete implementation trace through it is accepted, and every such trace is in the class.

The steps that remain are found on the product of the automaton with the classes' monitors
(``TraceClass.step``): a product node is (automaton state, monitor states); it is *good* when
some complete trace from it ends outside every class (an accepting automaton state, no monitor
decided "in"); an edge (q, event) counts when a good node reached from the start with automaton
state q takes it to a good node. The automaton has no cycles (``TraceAutomaton.count`` refuses
them), so this is one memoised depth-first pass.

The result is an upper bound on the steps the reference can realise, *given* that it never logs a
trace of the class; ``reachable.py`` measures the reachable steps themselves where its search
ends, and its tests check that they never leave this bound.
"""

from __future__ import annotations

import sys
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

from model_checks.designs.work_lane.link.classify import CLASSES, TraceClass
from model_checks.designs.work_lane.link.scenario import EventKey
from model_checks.designs.work_lane.link.trace_automaton import TraceAutomaton, good_edges

Edge = tuple[Any, EventKey]  # (automaton state, event), as ``TraceAutomaton.live_edges``
Monitors = tuple[Hashable, ...]  # each class's monitor state


def steps_outside(automaton: TraceAutomaton, classes: Sequence[TraceClass] = CLASSES) -> set[Edge]:
    """The live edges of ``automaton`` that lie on some complete trace in none of ``classes``."""
    live = automaton.live_edges_cached()
    good: dict[tuple[Any, Monitors], bool] = {}

    def step(m: Monitors, ev: EventKey) -> Monitors:
        return tuple(s if s is False else c.step(s, ev) for c, s in zip(classes, m, strict=True))

    def is_good(q: Any, m: Monitors) -> bool:
        known = good.get((q, m))
        if known is not None:
            return known
        if any(s is True for s in m):  # decided "in a class": every completion is in it
            result = False
        else:
            result = automaton.accepting(q)
            for ev, nxt in automaton.edges(q).items():
                if (q, ev) in live and is_good(nxt, step(m, ev)):
                    result = True
        good[(q, m)] = result
        return result

    def successors(node: tuple[Any, Monitors]) -> Iterator[tuple[EventKey, tuple[Any, Monitors]]]:
        q, m = node
        for ev, nxt in automaton.edges(q).items():
            if (q, ev) in live:
                yield ev, (nxt, step(m, ev))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))  # one level per event of the longest trace
    try:
        start = (automaton.start, tuple(c.start for c in classes))
        if not is_good(*start):
            return set()
        return {(q, ev) for (q, _m), ev in good_edges(start, successors, lambda node: is_good(*node))}
    finally:
        sys.setrecursionlimit(limit)
