"""Traces generated from the spec: projections of behaviours onto their labelled steps.

``covering_behaviours`` returns complete behaviours of a configuration (each
ends in a terminal state, so after ``stop_end`` when the configuration stops)
that together fire every labelled action with every combination of its event
fields (items aside); ``random_walk`` gives one random behaviour.
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Hashable, Iterable, Iterator
from pathlib import Path
from typing import Any

from spec import work_lane as wl
from spec.language import Instance, Spec, Transition

Event = dict[str, Any]


def project(transitions: Iterable[Transition]) -> list[Event]:
    """The trace events of a behaviour: its labelled steps, numbered from seq 1."""
    events: list[Event] = []
    for t in transitions:
        if t.event is None or t.fields is None:
            continue
        events.append({"seq": len(events) + 1, "thread": str(t.process), "event": t.event, **dict(t.fields)})
    return events


def header(constants: wl.Constants) -> Event:
    return {"trace": "lanecheck", "version": 1, "design": "work-lane", "config": constants.header()}


def lines(constants: wl.Constants, events: Iterable[Event]) -> Iterator[str]:
    yield json.dumps(header(constants))
    for ev in events:
        yield json.dumps(ev)


def signature(t: Transition) -> tuple[Hashable, ...]:
    """What a covering set must show at least once: the action and its event fields (items aside)."""
    assert t.fields is not None
    fields = tuple(
        sorted((k, len(v) if isinstance(v, list) else v) for k, v in t.fields.items() if k != "item")
    )
    return (t.action.name, fields)


def random_walk(
    spec: Spec, constants: wl.Constants, rng: random.Random, max_steps: int = 10_000
) -> list[Transition]:
    inst = Instance(spec, constants)
    state = rng.choice(inst.initial_states())
    path: list[Transition] = []
    for _ in range(max_steps):
        options = list(inst.successors(state))
        if not options:
            break
        t = rng.choice(options)
        path.append(t)
        state = t.state
    return path


def covering_behaviours(spec: Spec, constants: wl.Constants) -> list[list[Transition]]:
    """Complete behaviours that together cover every labelled (action, event fields) pair reachable."""
    inst = Instance(spec, constants)
    init = inst.initial_states()
    index: dict[Any, int] = {}
    parent: list[tuple[int, Transition] | None] = []
    states: list[Any] = []
    first_edge: dict[tuple[Hashable, ...], tuple[int, Transition]] = {}
    for s in init:
        if s not in index:
            index[s] = len(states)
            states.append(s)
            parent.append(None)
    queue = deque(range(len(states)))
    while queue:
        i = queue.popleft()
        for t in inst.successors(states[i]):
            if t.event is not None:
                first_edge.setdefault(signature(t), (i, t))
            if t.state not in index:
                index[t.state] = len(states)
                states.append(t.state)
                parent.append((i, t))
                queue.append(index[t.state])

    def path_to(i: int) -> list[Transition]:
        out: list[Transition] = []
        while parent[i] is not None:
            j, t = parent[i]  # type: ignore[misc]
            out.append(t)
            i = j
        out.reverse()
        return out

    def complete(state: Any) -> list[Transition]:
        if not any(True for _ in inst.successors(state)):
            return []
        seen = {state}
        back: dict[Any, tuple[Any, Transition]] = {}
        frontier = deque([state])
        while frontier:
            s = frontier.popleft()
            if (inst.is_terminal(s) and not any(True for _ in inst.successors(s))) or (
                inst.is_terminal(s) and s.phase == wl.STOPPED
            ):
                out: list[Transition] = []
                while s != state:
                    s, t = back[s]
                    out.append(t)
                out.reverse()
                return out
            for t in inst.successors(s):
                if t.state not in seen:
                    seen.add(t.state)
                    back[t.state] = (s, t)
                    frontier.append(t.state)
        return []

    behaviours: list[list[Transition]] = []
    covered: set[tuple[Hashable, ...]] = set()
    for sig in sorted(first_edge, key=repr):
        if sig in covered:
            continue
        i, t = first_edge[sig]
        path = [*path_to(i), t]
        path += complete(t.state)
        covered.update(signature(x) for x in path if x.event is not None)
        behaviours.append(path)
    return behaviours


def export(directory: Path, spec: Spec, constants: wl.Constants, name: str = "trace") -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for n, behaviour in enumerate(covering_behaviours(spec, constants), start=1):
        path = directory / f"{name}-{n:03d}.jsonl"
        path.write_text("\n".join(lines(constants, project(behaviour))) + "\n", encoding="utf-8")
        written.append(path)
    return written
