"""Turning a path of state ids into the steps a person reads: who did what, and what changed."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from spec.language import Instance, Transition


@dataclass(frozen=True)
class Step:
    number: int
    process: Hashable
    action: str
    args: tuple[Hashable, ...]  # the action's parameters after the process
    event: str | None
    fields: Mapping[str, Any] | None
    changes: dict[str, tuple[Any, Any]]  # variable -> (before, after), as shown to a person
    state: Any  # the state after the step (actual, not a symmetry representative)

    def as_json(self) -> dict[str, Any]:
        return {
            "n": self.number,
            "process": str(self.process),
            "action": self.action,
            "args": [str(a) for a in self.args],
            "event": self.event,
            "fields": dict(self.fields) if self.fields is not None else None,
            "changes": {k: {"before": b, "after": a} for k, (b, a) in self.changes.items()},
        }


@dataclass(frozen=True)
class Counterexample:
    initial: Any
    steps: list[Step]
    loop_start: int | None = None  # index in ``steps`` where the repeating part begins (liveness)
    stutter: bool = False  # the behaviour ends by stuttering forever in its last state

    @property
    def length(self) -> int:
        return len(self.steps)

    @property
    def context_switches(self) -> int:
        return sum(1 for a, b in zip(self.steps, self.steps[1:], strict=False) if a.process != b.process)


def replay_path(
    inst: Instance, canonical_path: list[int], states: list[Any], canon: Any
) -> list[tuple[Any, Transition | None]]:
    """Re-execute a path of (possibly symmetry-reduced) states from real initial states.

    Each step picks, from the actual current state, a successor whose canonical
    form is the next state on the path, so the steps shown are real ones.
    """
    c = inst.constants

    def key(s: Any) -> Any:
        return canon(c, s) if canon is not None else s

    first = states[canonical_path[0]]
    start = next(s for s in inst.initial_states() if key(s) == first)
    out: list[tuple[Any, Transition | None]] = [(start, None)]
    current = start
    for target_id in canonical_path[1:]:
        target = states[target_id]
        chosen = next((t for t in inst.successors(current) if key(t.state) == target), None)
        if chosen is None:
            raise AssertionError("counterexample path is not a behaviour of the spec (explorer bug)")
        out.append((chosen.state, chosen))
        current = chosen.state
    return out


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """What changed, variable by variable; a function's change is shown key by key (``status[0]``)."""
    changes: dict[str, tuple[Any, Any]] = {}
    for name, new in after.items():
        old = before.get(name)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            for k in new:
                if old.get(k) != new[k]:
                    changes[f"{name}[{k}]"] = (old.get(k), new[k])
        else:
            changes[name] = (old, new)
    return changes


def build(
    inst: Instance,
    path: list[tuple[Any, Transition | None]],
    loop_start: int | None = None,
    stutter: bool = False,
) -> Counterexample:
    steps: list[Step] = []
    before = inst.describe(path[0][0])
    for number, (state, transition) in enumerate(path[1:], start=1):
        assert transition is not None
        after = inst.describe(state)
        changes = diff(before, after)
        steps.append(
            Step(
                number=number,
                process=transition.process,
                action=transition.action.name,
                args=transition.args[1:],
                event=transition.event,
                fields=transition.fields,
                changes=changes,
                state=state,
            )
        )
        before = after
    return Counterexample(path[0][0], steps, loop_start, stutter)


def counterexample_events(cx: Counterexample) -> list[dict[str, Any]]:
    """The trace a correct logger would have written along a counterexample."""
    labelled = [s for s in cx.steps if s.event is not None]
    return [
        {"seq": n, "thread": str(s.process), "event": s.event, **dict(s.fields or {})}
        for n, s in enumerate(labelled, start=1)
    ]
