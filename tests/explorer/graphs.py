"""Random small transition systems written in the spec language, and a brute-force oracle for them."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations

from hypothesis import strategies as st

from model_checks.explorer.check import CheckResult
from spec.language import WF, EventuallyAlways, LeadsTo, Spec, SpecBuilder


@dataclass(frozen=True)
class Graph:
    n: int
    init: frozenset[int]
    edges: frozenset[tuple[int, str, int]]  # (source, process, target)
    bad: frozenset[int]  # states where the invariant fails
    q: frozenset[int]  # states where Q holds (liveness)
    p: frozenset[int]  # states where P holds (leads-to)
    terminal: frozenset[int]
    processes: tuple[str, ...]
    fair: tuple[str, ...]


@st.composite
def graphs(draw: st.DrawFn, max_states: int = 6) -> Graph:
    n = draw(st.integers(1, max_states))
    procs = ("a", "b", "c")[: draw(st.integers(1, 3))]
    state = st.integers(0, n - 1)
    edges = draw(st.frozensets(st.tuples(state, st.sampled_from(procs), state), max_size=3 * n))
    init = draw(st.frozensets(state, min_size=1, max_size=2))
    subset = st.frozensets(state)
    fair = tuple(p for p in procs if draw(st.booleans()))
    return Graph(n, init, edges, draw(subset), draw(subset), draw(subset), draw(subset), procs, fair)


def as_spec(g: Graph) -> Spec:
    b = SpecBuilder("random-graph")

    def procs(c: Graph) -> tuple[str, ...]:
        return c.processes

    def targets(c: Graph) -> range:
        return range(c.n)

    def fair(c: Graph) -> tuple[str, ...]:
        return c.fair

    b.init(lambda c: sorted(c.init))

    def Move(c: Graph, s: int, p: str, t: int) -> int | None:
        return t if (s, p, t) in c.edges else None

    b.action(procs, targets, event="move")(Move)

    def Safe(c: Graph, s: int) -> str | None:
        return f"state {s} is bad" if s in c.bad else None

    b.invariant(Safe)
    b.terminal(lambda c, s: s in c.terminal)
    b.fairness(WF(fair))
    b.property(EventuallyAlways("EventuallyAlwaysQ", lambda c, s: s in c.q))
    b.property(LeadsTo("PLeadsToQ", lambda c, s: s in c.p, lambda c, s: s in c.q))
    return b.spec


# ----------------------------------------------------------------------------- brute force


def successors(g: Graph, s: int) -> set[tuple[str, int]]:
    return {(p, t) for (src, p, t) in g.edges if src == s}


def reachable(g: Graph) -> dict[int, int]:
    """State -> BFS depth, by the textbook algorithm."""
    depth = {s: 0 for s in g.init}
    queue = deque(sorted(g.init))
    while queue:
        s = queue.popleft()
        for _, t in sorted(successors(g, s)):
            if t not in depth:
                depth[t] = depth[s] + 1
                queue.append(t)
    return depth


def first_safety_violation(g: Graph) -> tuple[str, int] | None:
    """(kind, length of the shortest counterexample) for invariant or deadlock, else None."""
    depth = reachable(g)
    candidates: list[tuple[int, int, str]] = []
    for s, d in depth.items():
        if s in g.bad:
            candidates.append((d, 0, "invariant"))
        if not successors(g, s) and s not in g.terminal:
            candidates.append((d, 1, "deadlock"))
    if not candidates:
        return None
    # Shortest first; at equal length the invariant, whose state was checked on arrival,
    # is found before the deadlock, which shows only when its state is expanded.
    d, _, kind = min(candidates)
    return kind, d


def _strongly_connected(g: Graph, members: frozenset[int]) -> bool:
    start = next(iter(members))
    for direction in (0, 1):
        seen = {start}
        stack = [start]
        while stack:
            v = stack.pop()
            for src, _, t in g.edges:
                a, b = (src, t) if direction == 0 else (t, src)
                if a == v and b in members and b not in seen and src != t:
                    seen.add(b)
                    stack.append(b)
        if seen != members:
            return False
    return True


def _enabled(g: Graph, s: int) -> set[str]:
    return {p for (src, p, t) in g.edges if src == s and t != s}


def _fair_set(g: Graph, members: frozenset[int]) -> bool:
    """Some fair infinite behaviour stays in exactly these states forever."""
    if len(members) == 1:
        (s,) = members
        return not (_enabled(g, s) & set(g.fair))
    if not _strongly_connected(g, members):
        return False
    for p in g.fair:
        disabled = any(p not in _enabled(g, v) for v in members)
        taken = any(src in members and t in members and src != t and q == p for src, q, t in g.edges)
        if not (disabled or taken):
            return False
    return True


def _subsets(states: list[int]) -> Iterator[frozenset[int]]:
    for k in range(1, len(states) + 1):
        for combo in combinations(states, k):
            yield frozenset(combo)


def eventually_always_fails(g: Graph) -> bool:
    reach = sorted(reachable(g))
    return any(_fair_set(g, m) and (m - g.q) for m in _subsets(reach))


def leads_to_fails(g: Graph) -> bool:
    reach = reachable(g)
    starts = {s for s in reach if s in g.p and s not in g.q}
    region = set(starts)
    stack = list(starts)
    while stack:
        v = stack.pop()
        for _, t in successors(g, v):
            if t not in g.q and t not in region:
                region.add(t)
                stack.append(t)
    return any(_fair_set(g, m) for m in _subsets(sorted(region)))


def assert_matches_brute_force(result: CheckResult, g: Graph) -> None:
    """A safety check of ``g``: every reachable state when none is bad, else the shortest way to one."""
    expected = first_safety_violation(g)
    if expected is None:
        assert result.verdict == "holds"
        assert result.stats.states == len(reachable(g))
    else:
        kind, length = expected
        assert result.verdict == "violated"
        assert result.violation is not None and result.counterexample is not None
        assert (result.violation.kind, result.counterexample.length) == (kind, length)


def assert_same_search(got: CheckResult, expected: CheckResult) -> None:
    """Two ways of searching one state space: the same verdict, states, transitions and depth."""
    assert got.verdict == expected.verdict
    assert (got.stats.states, got.stats.transitions, got.stats.depth) == (
        expected.stats.states,
        expected.stats.transitions,
        expected.stats.depth,
    )
