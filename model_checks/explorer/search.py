"""Exhaustive breadth-first exploration of a spec's state space.

Breadth-first order makes the first violation a *shortest* one; within the
layer where it appears, the search finishes the layer and keeps, for every
state, the parent that reached it with the fewest context switches, so the
counterexample reported is the shortest one with (greedily) fewest switches.

States are numbered in discovery order, which is also expansion order, so
the state graph needed for liveness is stored as two flat arrays indexed by
per-state offsets instead of a list of lists.
"""

from __future__ import annotations

import gc
import time
from array import array
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from spec.language import Emitted, Instance

HOLDS, VIOLATED, INCOMPLETE = "holds", "violated", "incomplete"


@dataclass
class Options:
    symmetry: bool = False
    liveness: bool = True
    deadlock: bool = True
    max_states: int | None = None
    max_depth: int | None = None
    time_limit: float | None = None
    progress: Callable[[int, int, int], None] | None = None  # (states, transitions, depth)


@dataclass
class Stats:
    states: int = 0
    transitions: int = 0
    depth: int = 0
    seconds: float = 0.0
    action_names: list[str] = field(default_factory=list)
    fired: list[int] = field(default_factory=list)  # firings per action, in declaration order
    constrained: int = 0  # states the state constraint kept from being expanded

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds > 0 else float(self.states)

    @property
    def coverage(self) -> dict[str, int]:
        """Action name -> how many transitions it produced."""
        return dict(zip(self.action_names, self.fired, strict=True))

    def unfired(self) -> list[str]:
        return [name for name, n in self.coverage.items() if n == 0]


@dataclass
class Violation:
    kind: str  # "invariant" | "deadlock" | "liveness"
    name: str  # the invariant or property, or "Deadlock"
    reason: str
    path: list[int]  # state ids from an initial state to the violating state
    cycle: list[int] | None = None  # for liveness: state ids of the loop (starting where path ends)
    stutter: bool = False  # for liveness: the behaviour ends stuttering at the last state


@dataclass
class Graph:
    """What a search leaves behind: every distinct state and, if kept, every transition."""

    states: list[Any]
    parent: array  # type: ignore[type-arg]
    depth: array  # type: ignore[type-arg]
    switches: array  # type: ignore[type-arg]
    last_proc: array  # type: ignore[type-arg]
    offsets: array | None  # type: ignore[type-arg]  # edges of state i: offsets[i] .. offsets[i+1]
    dst: array | None  # type: ignore[type-arg]
    proc: array | None  # type: ignore[type-arg]
    enabled: list[int] | None  # bit mask of processes enabled in each state
    processes: list[Hashable]

    def edges(self, i: int) -> range:
        assert self.offsets is not None
        return range(self.offsets[i], self.offsets[i + 1])

    def path_to(self, i: int) -> list[int]:
        path = [i]
        while self.parent[path[-1]] >= 0:
            path.append(self.parent[path[-1]])
        path.reverse()
        return path


@dataclass
class Outcome:
    verdict: str
    stats: Stats
    violation: Violation | None
    graph: Graph
    incomplete_reason: str | None = None
    notes: list[str] = field(default_factory=list)


def search(inst: Instance, options: Options) -> Outcome:
    """Explore every reachable state of ``inst``; check invariants and deadlock; keep the graph."""
    # States are acyclic immutable values: the cyclic garbage collector only burns time
    # rescanning the ever-growing seen-set, so it is paused for the search.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _search(inst, options)
    finally:
        if was_enabled:
            gc.enable()


def _search(inst: Instance, options: Options) -> Outcome:
    started = time.perf_counter()
    c = inst.constants
    spec = inst.spec
    canon = spec.symmetry_fn if options.symmetry else None
    constraint = spec.constraint_fn
    terminal = spec.terminal_fn
    invariants = [(inv.name, inv.fn) for inv in spec.invariants]
    keep_graph = options.liveness and not options.symmetry and bool(spec.properties)

    processes: list[Hashable] = []
    proc_index: dict[Hashable, int] = {}
    bound: list[tuple[int, Callable[..., Any], list[tuple[tuple[Hashable, ...], int]]]] = []
    with_procs: list[tuple[tuple[Hashable, ...], int]]
    for a_index, (action, instances) in enumerate(inst.bound):
        with_procs = []
        for args in instances:
            if args[0] not in proc_index:
                proc_index[args[0]] = len(processes)
                processes.append(args[0])
            with_procs.append((args, proc_index[args[0]]))
        bound.append((a_index, action.fn, with_procs))
    names = [action.name for action, _ in inst.bound]
    fired = [0] * len(names)  # per action index: cheaper in the hot loop than a dict by name

    states: list[Any] = []
    seen: dict[Any, int] = {}
    parent = array("q")
    depth = array("i")
    switches = array("i")
    last_proc = array("i")
    offsets = array("q", [0]) if keep_graph else None
    dst = array("q") if keep_graph else None
    proc = array("i") if keep_graph else None
    enabled: list[int] | None = [] if keep_graph else None
    stats = Stats(action_names=names, fired=fired)
    graph = Graph(states, parent, depth, switches, last_proc, offsets, dst, proc, enabled, processes)

    def check(state: Any) -> tuple[str, str] | None:
        for name, fn in invariants:
            reason = fn(c, state)
            if reason is not None:
                return name, reason
        return None

    violations: list[Violation] = []
    for s0 in inst.initial_states():
        key = canon(c, s0) if canon else s0
        if key in seen:
            continue
        seen[key] = len(states)
        states.append(key)
        parent.append(-1)
        depth.append(0)
        switches.append(0)
        last_proc.append(-1)
        bad = check(key)
        if bad:
            violations.append(Violation("invariant", bad[0], bad[1], [len(states) - 1]))
    if violations:
        stats.states = len(states)
        stats.seconds = time.perf_counter() - started
        return Outcome(VIOLATED, stats, violations[0], graph)

    incomplete: str | None = None
    frontier_start, frontier_end = 0, len(states)
    current_depth = 0
    transitions = 0
    check_every = 2048
    while frontier_start < frontier_end:
        if options.max_depth is not None and current_depth >= options.max_depth:
            left = frontier_end - frontier_start
            incomplete = f"depth bound {options.max_depth} reached with {left} states unexpanded"
            break
        layer_violations: list[tuple[int, Violation]] = []
        for i in range(frontier_start, frontier_end):
            state = states[i]
            if constraint is not None and not constraint(c, state):
                stats.constrained += 1
                if offsets is not None:
                    offsets.append(len(dst))  # type: ignore[arg-type]
                    enabled.append(0)  # type: ignore[union-attr]
                continue
            d1 = depth[i] + 1
            sw_i = switches[i]
            lp_i = last_proc[i]
            mask = 0
            n_succ = 0
            for a_index, fn, calls in bound:
                for args, pid in calls:
                    result = fn(c, state, *args)
                    if result is None:
                        continue
                    if type(result) is Emitted:
                        result = result.state
                    n_succ += 1
                    fired[a_index] += 1
                    key = canon(c, result) if canon else result
                    j = seen.get(key)
                    sw = sw_i + (1 if lp_i >= 0 and lp_i != pid else 0)
                    if j is None:
                        j = len(states)
                        seen[key] = j
                        states.append(key)
                        parent.append(i)
                        depth.append(d1)
                        switches.append(sw)
                        last_proc.append(pid)
                        bad = check(key)
                        if bad:
                            layer_violations.append((j, Violation("invariant", bad[0], bad[1], [])))
                    elif depth[j] == d1 and sw < switches[j]:
                        parent[j] = i
                        switches[j] = sw
                        last_proc[j] = pid
                    if j != i:
                        # A step that changes nothing is stuttering: it neither enables nor
                        # discharges weak fairness (WF_vars needs a vars-changing step).
                        mask |= 1 << pid
                        if dst is not None:
                            dst.append(j)
                            proc.append(pid)  # type: ignore[union-attr]
            transitions += n_succ
            if offsets is not None:
                offsets.append(len(dst))  # type: ignore[arg-type]
                enabled.append(mask)  # type: ignore[union-attr]
            if n_succ == 0 and options.deadlock and not (terminal is not None and terminal(c, state)):
                layer_violations.append(
                    (
                        i,
                        Violation(
                            "deadlock", "Deadlock", "no action is enabled and the system is not done", []
                        ),
                    )
                )
            if i % check_every == 0:
                if options.progress is not None:
                    options.progress(len(states), transitions, current_depth)
                if options.time_limit is not None and time.perf_counter() - started > options.time_limit:
                    incomplete = f"time limit {options.time_limit:g}s reached"
                if options.max_states is not None and len(states) > options.max_states:
                    incomplete = f"state bound {options.max_states} reached"
                if incomplete:
                    break
        if layer_violations:
            # Shortest first, then the fewest context switches on the way there.
            j, violation = min(layer_violations, key=lambda jv: (depth[jv[0]], switches[jv[0]], jv[0]))
            violation.path = graph.path_to(j)
            stats.states, stats.transitions, stats.depth = len(states), transitions, depth[j]
            stats.seconds = time.perf_counter() - started
            return Outcome(VIOLATED, stats, violation, graph)
        if incomplete:
            break
        frontier_start, frontier_end = frontier_end, len(states)
        current_depth += 1

    stats.states, stats.transitions = len(states), transitions
    stats.depth = max(depth) if len(depth) else 0
    stats.seconds = time.perf_counter() - started
    if incomplete is None and stats.constrained:
        incomplete = f"the state constraint kept {stats.constrained} states from being expanded"
    if incomplete is not None:
        return Outcome(INCOMPLETE, stats, None, graph, incomplete_reason=incomplete)
    return Outcome(HOLDS, stats, None, graph)
