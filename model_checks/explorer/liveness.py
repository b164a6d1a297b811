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


# How many entries into a fair component are tried for the shortest lasso: the nearest ones, so
# that a huge component costs a bounded number of cycle searches.
ENTRIES_TRIED = 64


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

    def lasso_cycle(self, component: list[int], entry: int, visit: set[int] | None = None) -> list[int]:
        """A fair cycle from ``entry`` through the component and back: per fair process it visits a
        state where that process is disabled or takes one of its steps, and (``visit``) it passes
        through one of those states. Each goal is reached by the nearest way still open (greedy,
        so short, not always the shortest)."""
        g = self.graph
        assert g.enabled is not None and g.dst is not None and g.proc is not None
        members = set(component)
        # Per fair process: its bit and the states of the component where it is disabled (a visit
        # there, or one of its steps, makes the cycle fair to it).
        open_bits = {
            bit: {v for v in component if not (g.enabled[v] >> bit) & 1}
            for bit in range(len(g.processes))
            if (self.fair_mask >> bit) & 1
        }
        must = set(visit) if visit else None

        def reached(v: int, bit: int | None) -> None:
            nonlocal must
            if bit is not None:
                open_bits.pop(bit, None)
            for b in [b for b, where in open_bits.items() if v in where]:
                del open_bits[b]
            if must is not None and v in must:
                must = None

        def wanted(v: int, bit: int) -> bool:
            return (
                bit in open_bits
                or any(v in where for where in open_bits.values())
                or (must is not None and v in must)
            )

        reached(entry, None)
        cycle = [entry]
        while open_bits or must is not None:
            steps = self._steps(cycle[-1], wanted, members)
            assert steps, "fair_component() promised every goal inside the component"
            for v, bit in steps:
                cycle.append(v)
                reached(v, bit)
        back = self._steps(cycle[-1], lambda v, _: v == entry, members)
        cycle.extend(v for v, _ in back)
        return cycle

    def _steps(
        self, start: int, goal: Callable[[int, int], bool], members: set[int]
    ) -> list[tuple[int, int]]:
        """The fewest steps (state reached, process bit) inside ``members`` from ``start`` to a step
        ``goal(dst, bit)`` accepts; empty when there is none."""
        g = self.graph
        assert g.dst is not None and g.proc is not None
        parent: dict[int, tuple[int, int]] = {start: (-1, -1)}
        queue = deque([start])
        while queue:
            v = queue.popleft()
            for e in g.edges(v):
                w, bit = g.dst[e], g.proc[e]
                if w not in members:
                    continue
                if goal(w, bit):
                    path = [(w, bit)]
                    at = v
                    while at != start:
                        before, b = parent[at]
                        path.append((at, b))
                        at = before
                    path.reverse()
                    return path
                if w not in parent:
                    parent[w] = (v, bit)
                    queue.append(w)
        return []

    def shortest_lasso(
        self, component: list[int], prefix_len: Callable[[int], int], visit: set[int] | None = None
    ) -> tuple[int, int, list[int]]:
        """(steps, entry, cycle): the entry into the component whose prefix plus fair cycle is the
        shortest lasso found. Entries are tried nearest first, stopping once no nearer one can win
        (a cycle takes two steps at least) or after ``ENTRIES_TRIED`` of them."""
        best: tuple[int, int, list[int]] | None = None
        for tried, entry in enumerate(sorted(component, key=prefix_len)):
            if best is not None and (tried >= ENTRIES_TRIED or prefix_len(entry) + 2 > best[0]):
                break
            cycle = self.lasso_cycle(component, entry, visit)
            total = prefix_len(entry) + len(cycle) - 1
            if best is None or total < best[0]:
                best = (total, entry, cycle)
        assert best is not None, "a component has a state"
        return best

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
        held = f"{prop.name} ({prop.doc})" if prop.doc else prop.name
        # The shortest lasso wins: stuttering in a bad state (its depth in steps) or a prefix plus a
        # fair cycle through a bad state; on a tie, the stutter and then Tarjan's order.
        found: tuple[int, Violation] | None = None
        stuck = min((v for v in bad if oracle.can_stutter(v)), key=lambda v: graph.depth[v], default=None)
        if stuck is not None:
            found = (
                graph.depth[stuck],
                Violation(
                    "liveness",
                    prop.name,
                    f"stays forever in a state where {held} does not hold",
                    graph.path_to(stuck),
                    [stuck],
                    stutter=True,
                ),
            )
        for component in strongly_connected_components(n, oracle.successors, range(n)):
            visit = bad_set.intersection(component)
            if not visit or not oracle.fair_component(component):
                continue
            steps, entry, cycle = oracle.shortest_lasso(component, lambda v: graph.depth[v], visit)
            if found is None or steps < found[0]:
                reason = f"a fair loop keeps returning to a state where {held} does not hold"
                found = (steps, Violation("liveness", prop.name, reason, graph.path_to(entry), cycle))
        return found[1] if found is not None else None
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
    # As for <>[]: the shortest lasso, the stutter winning a tie.
    shortest: tuple[int, Violation] | None = None
    stuck = min((v for v in region if oracle.can_stutter(v)), key=lambda v: len(prefix(v)), default=None)
    if stuck is not None:
        shortest = (
            len(prefix(stuck)) - 1,
            Violation(
                "liveness",
                prop.name,
                f"{reason} — the system stops with it unmet",
                prefix(stuck),
                [stuck],
                stutter=True,
            ),
        )
    for component in strongly_connected_components(n, oracle.successors, region):
        if oracle.fair_component(component):
            steps, entry, cycle = oracle.shortest_lasso(component, lambda v: len(prefix(v)) - 1)
            if shortest is None or steps < shortest[0]:
                why = f"{reason} — a fair loop avoids it forever"
                shortest = (steps, Violation("liveness", prop.name, why, prefix(entry), cycle))
    return shortest[1] if shortest is not None else None
