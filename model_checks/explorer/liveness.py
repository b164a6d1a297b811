"""Liveness under weak fairness, by strongly connected components of the state graph.

A behaviour violates ``P ~> Q`` when it reaches a ``P /\\ ~Q`` state and then
stays in ``~Q`` forever *fairly*; it violates ``<>[]Q`` when it visits ``~Q``
states infinitely often, fairly. An infinite suffix inside a finite graph
ends in a strongly connected component (SCC), or stutters in one state.

With weak fairness per process, a component admits a fair infinite path iff,
for every fair process, the component either contains a state where that
process is disabled or contains one of its steps: the cycle that visits every
state and edge of the component is then fair. If the condition fails for a
component it fails for every cycle inside it, so maximal components suffice.
Stuttering forever in a state is fair iff no fair process is enabled there.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from model_checks.explorer.search import Graph, Violation
from spec.language import EventuallyAlways, Instance, LeadsTo, Property


def strongly_connected_components(
    n: int, succ: Callable[[int], Iterable[int]], members: Iterable[int]
) -> list[list[int]]:
    """Tarjan's algorithm, iterative, over the sub-graph induced by ``members``."""
    allowed = set(members)
    index = {}
    low = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in sorted(allowed):
        if root in index:
            continue
        work: list[tuple[int, Any]] = [(root, iter([t for t in succ(root) if t in allowed]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter([t for t in succ(w) if t in allowed])))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                out.append(component)
    return out


class FairnessOracle:
    """Answers "does this set of states admit a fair infinite behaviour?" for one graph."""

    def __init__(self, graph: Graph, fair_procs: set[Hashable]) -> None:
        assert graph.enabled is not None and graph.dst is not None and graph.proc is not None
        self.graph = graph
        self.fair_mask = 0
        for i, p in enumerate(graph.processes):
            if p in fair_procs:
                self.fair_mask |= 1 << i

    def successors(self, v: int) -> Iterable[int]:
        g = self.graph
        assert g.dst is not None
        return (g.dst[e] for e in g.edges(v))

    def can_stutter(self, v: int) -> bool:
        assert self.graph.enabled is not None
        return self.graph.enabled[v] & self.fair_mask == 0

    def fair_component(self, component: list[int]) -> bool:
        g = self.graph
        assert g.enabled is not None and g.dst is not None and g.proc is not None
        members = set(component)
        if len(component) < 2:
            return False  # self-loops are not stored: staying put is stuttering, see can_stutter
        disabled_somewhere = 0
        taken = 0
        for v in component:
            disabled_somewhere |= ~g.enabled[v] & self.fair_mask
            for e in g.edges(v):
                if g.dst[e] in members:
                    taken |= 1 << g.proc[e]
        return (disabled_somewhere | taken) & self.fair_mask == self.fair_mask

    def lasso_cycle(self, component: list[int], entry: int) -> list[int]:
        """A cycle from ``entry`` through the component that is fair: it visits, per fair process,
        a state where it is disabled or one of its steps, then returns to ``entry``."""
        g = self.graph
        assert g.enabled is not None and g.dst is not None and g.proc is not None
        members = set(component)
        targets: list[tuple[str, int, int]] = []  # (kind, process bit, state or edge)
        for bit in range(len(g.processes)):
            if not (self.fair_mask >> bit) & 1:
                continue
            disabled_at = next((v for v in component if not (g.enabled[v] >> bit) & 1), None)
            if disabled_at is not None:
                targets.append(("state", bit, disabled_at))
                continue
            edge = next(
                (e for v in component for e in g.edges(v) if g.proc[e] == bit and g.dst[e] in members), None
            )
            assert edge is not None, "fair_component() promised a step of every fair process"
            targets.append(("edge", bit, edge))
        cycle = [entry]
        for kind, _, target in targets:
            goal = target if kind == "state" else self._edge_source(target)
            cycle.extend(self._path(cycle[-1], goal.__eq__, members)[1:])
            if kind == "edge":
                cycle.append(g.dst[target])
        back = self._path(cycle[-1], lambda v: v == entry, members, allow_empty=False)
        cycle.extend(back[1:])
        return cycle

    def _edge_source(self, edge: int) -> int:
        g = self.graph
        assert g.offsets is not None
        lo, hi = 0, len(g.offsets) - 2
        while lo < hi:  # the last state whose first edge is at or before ``edge``
            mid = (lo + hi + 1) // 2
            if g.offsets[mid] <= edge:
                lo = mid
            else:
                hi = mid - 1
        while g.offsets[lo + 1] <= edge:
            lo += 1
        return lo

    def _path(
        self, start: int, goal: Callable[[int], bool], members: set[int], allow_empty: bool = True
    ) -> list[int]:
        if allow_empty and goal(start):
            return [start]
        parent: dict[int, int] = {start: -1}
        queue = deque([start])
        while queue:
            v = queue.popleft()
            for w in self.successors(v):
                if w not in members:
                    continue
                if goal(w):
                    path = [w, v]
                    while parent[path[-1]] != -1:
                        path.append(parent[path[-1]])
                    path.reverse()
                    return path
                if w not in parent:
                    parent[w] = v
                    queue.append(w)
        raise AssertionError("no path inside a strongly connected component")


def check_property(inst: Instance, graph: Graph, prop: Property) -> Violation | None:
    """Look for a fair behaviour that violates ``prop``; return it as a lasso."""
    c = inst.constants
    oracle = FairnessOracle(graph, inst.fair_processes())
    n = len(graph.states)
    if isinstance(prop, EventuallyAlways):
        bad = [v for v in range(n) if not prop.q(c, graph.states[v])]
        if not bad:
            return None
        bad_set = set(bad)
        for v in bad:
            if oracle.can_stutter(v):
                return Violation(
                    "liveness",
                    prop.name,
                    f"stays forever where {prop.doc or prop.name} fails",
                    graph.path_to(v),
                    [v],
                    stutter=True,
                )
        for component in strongly_connected_components(n, oracle.successors, range(n)):
            entry = next((v for v in component if v in bad_set), None)
            if entry is not None and oracle.fair_component(component):
                cycle = oracle.lasso_cycle(component, entry)
                return Violation(
                    "liveness",
                    prop.name,
                    f"a fair loop keeps returning to a state where {prop.doc or prop.name} fails",
                    graph.path_to(entry),
                    cycle,
                )
        return None
    assert isinstance(prop, LeadsTo)
    not_q = {v for v in range(n) if not prop.q(c, graph.states[v])}
    starts = [v for v in not_q if prop.p(c, graph.states[v])]
    if not starts:
        return None
    # Every ~Q state reachable from a P /\ ~Q state without passing through Q.
    region: dict[int, int] = {}
    queue: deque[int] = deque()
    for v in sorted(starts, key=lambda v: graph.depth[v]):
        if v not in region:
            region[v] = -1
            queue.append(v)
    while queue:
        v = queue.popleft()
        for w in oracle.successors(v):
            if w in not_q and w not in region:
                region[w] = v
                queue.append(w)

    def prefix(v: int) -> list[int]:
        inner = [v]
        while region[inner[-1]] != -1:
            inner.append(region[inner[-1]])
        inner.reverse()
        return graph.path_to(inner[0])[:-1] + inner

    reason = prop.doc or f"{prop.name}: P holds but Q never follows"
    for v in sorted(region, key=lambda v: graph.depth[v]):
        if oracle.can_stutter(v):
            return Violation(
                "liveness",
                prop.name,
                f"{reason} — the system stops with it unmet",
                prefix(v),
                [v],
                stutter=True,
            )
    for component in strongly_connected_components(n, oracle.successors, region):
        if oracle.fair_component(component):
            entry = min(component, key=lambda v: len(prefix(v)))
            cycle = oracle.lasso_cycle(component, entry)
            return Violation(
                "liveness", prop.name, f"{reason} — a fair loop avoids it forever", prefix(entry), cycle
            )
    return None
