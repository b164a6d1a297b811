"""What an exploration leaves behind: its verdict, figures, violation and state graph.

Kept apart from ``search.py`` so that the one-process and the multi-process
searches (``parallel.py``) share these types without importing each other.
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

HOLDS, VIOLATED, INCOMPLETE = "holds", "violated", "incomplete"


@dataclass
class Stats:
    states: int = 0  # distinct states found
    transitions: int = 0  # steps taken, to a new state or not
    depth: int = 0  # the greatest BFS depth reached (steps from an initial state)
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


__all__ = ["HOLDS", "INCOMPLETE", "VIOLATED", "Graph", "Outcome", "Stats", "Violation"]
