"""What the layer-by-layer searches share: each process's report on a layer, the decision taken
from all of them, and the outcome built from the last ones.

Both the forked processes (``parallel.py``) and the Ray driver (``ray/engine.py``) run the same
loop: every process expands its share of a layer, reports it (``Report``), and ``Layers.go_on``
decides from every report whether to expand the next layer or stop with a verdict. Among forked
processes each one decides for itself, so the decision must follow from the reports alone: the
same facts give the same decision in every process.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from model_checks.explorer.outcome import HOLDS, INCOMPLETE, VIOLATED, Graph, Outcome, Stats, Violation
from model_checks.explorer.partition import Found, Partition

if TYPE_CHECKING:
    from model_checks.explorer.search import Options

Best = tuple[tuple[int, int, int], str, str, str]  # (rank key, kind, property name, reason)


@dataclass
class Report:
    """What one process says about itself at the end of a layer (small: pickled)."""

    states: int
    frontier: int
    transitions: int
    constrained: int
    fired: list[int]
    best: Best | None
    incomplete: str | None

    @classmethod
    def of(cls, part: Partition, frontier: int, found: list[Found], incomplete: str | None) -> Report:
        """A partition's report: its counts, and the first of ``found`` in rank order."""
        best = None
        if found:
            first = min(found, key=part.rank_of)
            _, kind, name, reason = first
            best = (part.rank_of(first), kind, name, reason)
        return cls(
            states=len(part.states),
            frontier=frontier,
            transitions=part.transitions,
            constrained=part.constrained,
            fired=list(part.fired),
            best=best,
            incomplete=incomplete,
        )


class Layers:
    """The search's position (``depth``: the layer the reports describe) and its verdict so far.

    ``timed_from``: check ``options.time_limit`` between layers against the time since then; only
    where one process decides for all (Ray's driver): forked processes' clocks would disagree.
    ``progress``: whether this process reports progress (one of them does)."""

    def __init__(self, options: Options, *, timed_from: float | None = None, progress: bool = True) -> None:
        self.options = options
        self.timed_from = timed_from
        self.progress = options.progress if progress else None
        self.depth = 0
        self.deepest = 0  # the last layer that had states
        self.verdict: str | None = None
        self.reason: str | None = None
        self.best: Best | None = None

    def go_on(self, reports: list[Report]) -> bool:
        """Whether to expand layer ``depth``; if not, ``verdict`` says why (None: every state
        was expanded), with ``reason`` (incomplete) or ``best`` (violated)."""
        options = self.options
        frontier = sum(r.frontier for r in reports)
        if frontier:
            self.deepest = self.depth
        self.best = min((r.best for r in reports if r.best is not None), default=None)
        if self.best is not None:
            self.verdict = VIOLATED
            return False
        reason = next((r.incomplete for r in reports if r.incomplete), None)
        total = sum(r.states for r in reports)
        if reason is None and options.max_states is not None and total > options.max_states:
            reason = f"state bound {options.max_states} reached"
        limit, since = options.time_limit, self.timed_from
        if reason is None and limit is not None and since is not None and time.perf_counter() - since > limit:
            reason = f"time limit {limit:g}s reached"
        if reason is not None:
            self.verdict, self.reason = INCOMPLETE, reason
            return False
        if frontier == 0:
            return False
        if self.progress is not None:
            self.progress(total, sum(r.transitions for r in reports), self.depth)
        if options.max_depth is not None and self.depth >= options.max_depth:
            self.verdict = INCOMPLETE
            self.reason = f"depth bound {options.max_depth} reached with {frontier} states unexpanded"
            return False
        return True

    def outcome(
        self, reports: list[Report], action_names: list[str], started: float, path: Callable[[int], list[Any]]
    ) -> Outcome:
        """The search's outcome from the last layer's reports; ``path(gid)`` gives the states
        from an initial state to the violating one (asked only for a violation)."""
        stats = Stats(
            states=sum(r.states for r in reports),
            transitions=sum(r.transitions for r in reports),
            depth=self.deepest,
            action_names=action_names,
            fired=[sum(counts) for counts in zip(*(r.fired for r in reports), strict=True)],
            constrained=sum(r.constrained for r in reports),
        )
        verdict, reason = self.verdict, self.reason
        if verdict is None and stats.constrained:
            verdict = INCOMPLETE
            reason = f"the state constraint kept {stats.constrained} states from being expanded"
        if verdict == VIOLATED:
            assert self.best is not None
            (depth, _, gid), kind, name, why = self.best
            states = path(gid)
            stats.depth = depth
            stats.seconds = time.perf_counter() - started
            graph = path_graph(states, list(range(-1, len(states) - 1)))
            return Outcome(VIOLATED, stats, Violation(kind, name, why, list(range(len(states)))), graph)
        stats.seconds = time.perf_counter() - started
        if verdict == INCOMPLETE:
            return Outcome(INCOMPLETE, stats, None, path_graph([], []), incomplete_reason=reason)
        return Outcome(HOLDS, stats, None, path_graph([], []))


def path_graph(states: list[Any], parents: list[int]) -> Graph:
    """A graph holding only a counterexample's path (the processes keep no full graph)."""
    n = len(states)
    return Graph(
        states=states,
        parent=array("q", parents),
        depth=array("i", range(n)),
        switches=array("i", [0] * n),
        last_proc=array("i", [-1] * n),
        offsets=None,
        dst=None,
        proc=None,
        enabled=None,
        processes=[],
    )
