"""Every step a spec can take: for tests that look for one kind of transition, not a verdict."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from spec.language import Instance, Spec, Transition


def steps(spec: Spec, constants: Any) -> Iterator[tuple[Any, Transition]]:
    """Each reachable state with each step enabled in it, breadth first (no symmetry, no pruning);
    a caller that has found what it looks for may stop early."""
    inst = Instance(spec, constants)
    start = inst.initial_states()
    visited = set(start)
    todo = deque(start)
    while todo:
        state = todo.popleft()
        for t in inst.successors(state):
            yield state, t
            if t.state not in visited:
                visited.add(t.state)
                todo.append(t.state)
