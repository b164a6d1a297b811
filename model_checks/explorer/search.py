"""Exhaustive breadth-first exploration of a spec's state space.

Breadth-first order makes the first violation a *shortest* one; within the
layer where it appears, the search finishes the layer and keeps, for every
state, the parent that reached it with the fewest context switches, so the
counterexample reported is the shortest one with (greedily) fewest switches.

States are numbered in discovery order, which is also expansion order, so
the state graph needed for liveness is stored as two flat arrays indexed by
per-state offsets instead of a list of lists.

The expansion itself (the hot loop, the seen-set) is ``partition.py``; which
actions are worth calling in a state is ``dispatch.py``; a search shared by
several processes is ``parallel.py``.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from model_checks.explorer.outcome import HOLDS, INCOMPLETE, VIOLATED, Graph, Outcome, Stats, Violation
from model_checks.explorer.partition import Found, Partition
from spec.language import Instance


@dataclass
class Options:
    symmetry: bool = False
    liveness: bool = True
    deadlock: bool = True
    max_states: int | None = None
    max_depth: int | None = None
    time_limit: float | None = None
    progress: Callable[[int, int, int], None] | None = None  # (states, transitions, depth)
    workers: int = 1  # processes sharing the search (more than one: no state graph, so no liveness)
    pc_hints: bool = True  # call only the actions a state's program counters allow (off: all)

    def __post_init__(self) -> None:
        """Refuse bounds that cannot mean anything (``ValueError`` naming the field)."""
        for name, low in (("max_states", 1), ("max_depth", 0)):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < low):
                raise ValueError(f"{name} must be an integer of at least {low}, not {value!r}")
        if self.time_limit is not None and not (
            isinstance(self.time_limit, int | float) and 0 <= self.time_limit < math.inf
        ):
            raise ValueError(f"time_limit must be a finite number of seconds >= 0, not {self.time_limit!r}")
        if not isinstance(self.workers, int) or isinstance(self.workers, bool) or self.workers < 1:
            raise ValueError(f"workers must be an integer of at least 1, not {self.workers!r}")


def search(inst: Instance, options: Options) -> Outcome:
    """Explore every reachable state of ``inst``; check invariants and deadlock; keep the graph.

    With ``options.workers > 1`` the states are split between that many processes
    (``model_checks.explorer.parallel``), which keep no graph: liveness needs one process.
    """
    if options.workers < 1:
        raise ValueError(f"workers must be at least 1, not {options.workers}")
    # States are acyclic immutable values: the cyclic garbage collector only burns time
    # rescanning the ever-growing seen-set, so it is paused for the search.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        if options.workers > 1:
            from model_checks.explorer.parallel import search_parallel

            return search_parallel(inst, options)
        return _search(inst, options)
    finally:
        if was_enabled:
            gc.enable()


def _search(inst: Instance, options: Options) -> Outcome:
    part = Partition(inst, options)
    names = part.dispatch.names
    stats = Stats(action_names=names, fired=part.fired)
    graph = Graph(
        part.states,
        part.parent,
        part.depth,
        part.switches,
        part.last_proc,
        part.offsets,
        part.dst,
        part.proc,
        part.enabled,
        part.dispatch.processes,
    )

    def finish(verdict: str, found: Found | None = None, reason: str | None = None) -> Outcome:
        stats.states, stats.transitions = len(part.states), part.transitions
        stats.constrained = part.constrained
        stats.seconds = time.perf_counter() - part.started
        if found is None:
            stats.depth = max(part.depth) if len(part.depth) else 0
            return Outcome(verdict, stats, None, graph, incomplete_reason=reason)
        j, kind, name, why = found
        stats.depth = part.depth[j]
        return Outcome(verdict, stats, Violation(kind, name, why, graph.path_to(j)), graph)

    initial = part.seed()
    if initial:
        return finish(VIOLATED, min(initial, key=part.rank_of))
    incomplete: str | None = None
    frontier_start, frontier_end = 0, len(part.states)
    current_depth = 0
    while frontier_start < frontier_end:
        if options.max_depth is not None and current_depth >= options.max_depth:
            left = frontier_end - frontier_start
            incomplete = f"depth bound {options.max_depth} reached with {left} states unexpanded"
            break
        found, incomplete = part.expand(frontier_start, frontier_end, current_depth)
        if found:
            return finish(VIOLATED, min(found, key=part.rank_of))
        if incomplete:
            break
        frontier_start, frontier_end = frontier_end, len(part.states)
        current_depth += 1
    if incomplete is None and part.constrained:
        incomplete = f"the state constraint kept {part.constrained} states from being expanded"
    if incomplete is not None:
        return finish(INCOMPLETE, reason=incomplete)
    return finish(HOLDS)


__all__ = ["HOLDS", "INCOMPLETE", "VIOLATED", "Graph", "Options", "Outcome", "Stats", "Violation", "search"]
