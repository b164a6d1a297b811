"""The observable traces a spec configuration allows: its complete behaviours projected onto events.

The enumeration is the generic one (``model_checks.spec_behaviours``); this module adds what the
link checks read besides the traces: the labelled transitions and the kinds of step seen. Internal
actions (``Admit``, ``StopCall``, ``Pop``, ``PopEmpty``, ``GiveUpDrain``) add no event.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable
from dataclasses import dataclass, field
from typing import Any

from model_checks.designs.work_lane.link.scenario import EventKey, TraceKey
from model_checks.spec_behaviours import TooManyTraces, behaviours, canonical, closure, event_of
from spec import work_lane as wl
from spec.language import Instance, Transition

# A labelled transition of the state graph: (state, action name, process and parameters).
TransitionKey = tuple[Any, str, tuple[Hashable, ...]]

__all__ = [
    "SpecTraces",
    "TooManyTraces",
    "TransitionKey",
    "kind_of",
    "realised",
    "spec_traces",
    "transition_event",
]


@dataclass
class SpecTraces:
    traces: set[TraceKey]  # canonical (workers renamed by first appearance)
    raw_traces: int  # before canonicalisation
    states: int
    labelled_transitions: set[TransitionKey] = field(default_factory=set)
    kinds: set[tuple[str, tuple[tuple[str, Any], ...]]] = field(default_factory=set)


transition_event: Callable[[Transition], EventKey] = event_of  # the link modules' name for it


def kind_of(t: Transition) -> tuple[str, tuple[tuple[str, Any], ...]]:
    """An action with its event fields, items aside (what a covering set must show)."""
    assert t.fields is not None
    return (
        t.action.name,
        tuple(sorted((k, len(v) if isinstance(v, list) else v) for k, v in t.fields.items() if k != "item")),
    )


def spec_traces(
    constants: wl.Constants,
    max_traces: int = 2_000_000,
    observed: Collection[str] | None = None,
    time_limit: float | None = None,
) -> SpecTraces:
    """``observed``: project onto these events (the others count as internal); None = every event.

    The set can grow exponentially with the scenario: past ``max_traces`` traces in one state, or
    ``time_limit`` seconds, ``TooManyTraces`` says so instead of running on."""
    labelled: set[TransitionKey] = set()
    kinds: set[tuple[str, tuple[tuple[str, Any], ...]]] = set()

    def kept(state: Any, t: Transition) -> None:
        labelled.add((state, t.action.name, tuple(t.args)))
        kinds.add(kind_of(t))

    found = behaviours(
        wl.SPEC,
        constants,
        observed,
        max_traces=max_traces,
        time_limit=time_limit,
        hint="choose a smaller scenario, or compare fewer events (--observe)",
        kept=kept,
    )
    return SpecTraces({canonical(t) for t in found.traces}, len(found.traces), found.states, labelled, kinds)


def realised(
    constants: wl.Constants, trace: TraceKey, observed: Collection[str] | None = None
) -> tuple[set[TransitionKey], bool]:
    """Run one trace over the spec's state graph; the labelled transitions it can have used, and
    whether the spec allows it. Worker names are tried as given (the spec's are ``w0``..).
    ``observed`` as in ``spec_traces``: the trace holds only those events."""
    inst = Instance(wl.SPEC, constants)

    def silent(t: Transition) -> bool:
        return t.event is None or (observed is not None and t.event not in observed)

    current = closure(inst, inst.initial_states(), silent)
    used: set[TransitionKey] = set()
    for ev in trace:
        nxt: set[Any] = set()
        for s in current:
            for t in inst.successors(s):
                if not silent(t) and transition_event(t) == ev:
                    used.add((s, t.action.name, tuple(t.args)))
                    nxt.add(t.state)
        if not nxt:
            return used, False
        current = closure(inst, nxt, silent)
    return used, True
