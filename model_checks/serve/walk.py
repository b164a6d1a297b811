"""A path in a URL -> the states along it: which successor was taken at each step.

A path is the index of the chosen successor at each step (``3.0.1``), among the steps enabled in
the state before it, in the spec's declaration order (``Instance.successors``); ``init`` picks the
initial state when the spec has several. A path that does not fit the spec (malformed, or stale:
written against another version of it) is refused with ``BadPath``, naming the step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from model_checks.explorer.counterexample import diff
from spec.language import Instance, Invariant, Transition

MAX_STEPS = 10_000  # a longer path is no review link: refuse it before replaying anything
SEPARATOR = "."


class BadPath(ValueError):
    """A path that is not a behaviour of the spec; ``step`` is the 1-based step at fault (0: init)."""

    def __init__(self, message: str, step: int | None = None) -> None:
        super().__init__(message)
        self.step = step


@dataclass(frozen=True)
class Walk:
    """The states along a path: ``states[0]`` initial, ``steps[i]`` led to ``states[i + 1]``."""

    init: int
    path: tuple[int, ...]
    states: list[Any]
    steps: list[Transition]

    @property
    def state(self) -> Any:
        return self.states[-1]


def parse(text: str | None) -> tuple[int, ...]:
    """``"3.0.1"`` -> ``(3, 0, 1)``; empty or absent -> ``()``."""
    if not text:
        return ()
    tokens = text.split(SEPARATOR)
    if len(tokens) > MAX_STEPS:
        raise BadPath(f"the path has {len(tokens)} steps; at most {MAX_STEPS:,} are replayed")
    indices: list[int] = []
    for number, token in enumerate(tokens, start=1):
        # ASCII digits only (int() would take "٣" and " 3"); a dozen digits is past any state's successors
        if not (token.isascii() and token.isdigit() and len(token) <= 12):
            raise BadPath(f"step {number}: {token!r} is not a successor's index (a number from 0)", number)
        indices.append(int(token))
    return tuple(indices)


def encode(path: tuple[int, ...] | list[int]) -> str:
    return SEPARATOR.join(str(i) for i in path)


def parse_init(text: str | None) -> int:
    if text is None or text == "":
        return 0
    if not (text.isascii() and text.isdigit() and len(text) <= 12):
        raise BadPath(f"init: {text!r} is not an initial state's index (a number from 0)", 0)
    return int(text)


def replay(instance: Instance, init: int, path: tuple[int, ...]) -> Walk:
    """The states along ``path`` from initial state ``init``; ``BadPath`` names the first step at fault."""
    initial = instance.initial_states()
    if init >= len(initial):
        raise BadPath(f"init: the spec has {len(initial)} initial state(s), so {init} names none", 0)
    states = [initial[init]]
    steps: list[Transition] = []
    for number, index in enumerate(path, start=1):
        enabled = list(instance.successors(states[-1]))
        if index >= len(enabled):
            where = f"the state after step {number - 1}" if number > 1 else "the initial state"
            have = f"0..{len(enabled) - 1}" if enabled else "none: no action is enabled there"
            raise BadPath(
                f"step {number}: {index} is not a successor of {where} (its successors: {have})", number
            )
        steps.append(enabled[index])
        states.append(enabled[index].state)
    return Walk(init, path, states, steps)


@dataclass(frozen=True)
class Verdict:
    """One invariant in the current state: ``reason`` is None when it holds."""

    name: str
    doc: str
    reason: str | None

    @property
    def holds(self) -> bool:
        return self.reason is None


def invariants(instance: Instance, state: Any) -> list[Verdict]:
    """Every invariant of the spec in ``state``, in declaration order."""
    failing: dict[str, str] = {inv.name: why for inv, why in instance.violated_invariants(state)}
    spec_invariants: tuple[Invariant, ...] = instance.spec.invariants
    return [Verdict(inv.name, inv.doc, failing.get(inv.name)) for inv in spec_invariants]


def deadlocked(instance: Instance, state: Any, enabled: list[Transition]) -> bool:
    """No step enabled, and not a state where the system is legitimately done."""
    return not enabled and not instance.is_terminal(state)


def changes(instance: Instance, walk: Walk) -> Mapping[str, tuple[Any, Any]]:
    """What the last step changed (variable, or ``name[key]`` for one entry of a function)."""
    if len(walk.states) < 2:
        return {}
    return diff(instance.describe(walk.states[-2]), instance.describe(walk.states[-1]))


def label(transition: Transition) -> str:
    """A step as a person reads it: the process, then its observable event and fields, or the
    internal action's name."""
    head = f"{transition.process}: "
    if transition.event is None:
        return head + transition.action.name
    fields = ", ".join(f"{k}={v}" for k, v in (transition.fields or {}).items())
    return head + transition.event + (f" ({fields})" if fields else "")


def signature(transition: Transition) -> str:
    """The action with its parameters, as the spec declares it: ``Take(w0)``."""
    return f"{transition.action.name}({', '.join(str(a) for a in transition.args)})"
