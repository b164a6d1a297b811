"""State diagrams generated from a spec: the reachable graph projected onto one component.

Projecting every reachable transition onto, say, lane 0's status gives the
lane's state machine as the spec *actually* allows it — derived, not drawn, so
it cannot drift from the spec.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

from spec.language import Instance, Spec

Projection = Callable[[Any, Any], Hashable]


Edge = tuple[Hashable, str, Hashable]


def projected_edges(spec: Spec, constants: Any, project: Projection) -> tuple[Hashable, set[Edge]]:
    """(initial projected state, {(from, action, to)}) over every reachable transition that changes it."""
    inst = Instance(spec, constants)
    starts = inst.initial_states()
    seen = set(starts)
    queue = deque(starts)
    edges: set[Edge] = set()
    while queue:
        state = queue.popleft()
        before = project(constants, state)
        for t in inst.successors(state):
            after = project(constants, t.state)
            if after != before:
                edges.add((before, t.action.name, after))
            if t.state not in seen:
                seen.add(t.state)
                queue.append(t.state)
    return project(constants, starts[0]), edges


def mermaid_state_diagram(initial: Hashable, edges: set[Edge], title: str) -> str:
    labels: dict[tuple[Hashable, Hashable], list[str]] = {}
    for a, action, b in sorted(edges, key=str):
        labels.setdefault((a, b), []).append(action)
    lines = ["---", f"title: {title}", "---", "stateDiagram-v2", f"    [*] --> {_node(initial)}"]
    for (a, b), actions in sorted(labels.items(), key=str):
        lines.append(f"    {_node(a)} --> {_node(b)}: {' / '.join(actions)}")
    return "\n".join(lines) + "\n"


def _node(value: Hashable) -> str:
    text = str(value)
    return "".join(ch if ch.isalnum() else "_" for ch in text)
