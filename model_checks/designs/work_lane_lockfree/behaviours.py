"""The behaviours the lock-free comparison (``refinement.py``) reads: every complete behaviour of a
spec configuration projected onto the kept events (enumerated by ``model_checks.spec_behaviours``),
and the replay of one trace over a spec to where it stops being allowed.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from model_checks.spec_behaviours import Event, Trace, canonical, closure, event_of
from model_checks.spec_behaviours import behaviours as enumerate_behaviours
from spec.language import Instance, Spec, Transition

__all__ = ["Event", "Trace", "accepts", "behaviours", "canonical"]


def behaviours(
    spec: Spec,
    constants: Any,
    keep: Collection[str],
    max_traces: int = 1_000_000,
    time_limit: float | None = None,
) -> set[Trace]:
    """The sequences of kept events of every complete behaviour (ending where nothing is enabled).

    A cycle in the state graph (a behaviour that need not end) or a deadlock is an error: the
    comparison needs every behaviour to be a finite sequence."""
    return enumerate_behaviours(spec, constants, keep, max_traces=max_traces, time_limit=time_limit).traces


def accepts(spec: Spec, constants: Any, trace: Trace) -> int | None:
    """Replay ``trace`` (every event the spec logs, workers named as in the spec) over the spec:
    None when some behaviour logs exactly that sequence to its end, else the index of the
    first event no behaviour allows after the events before it (``len(trace)`` when the whole
    trace is a prefix of behaviours but none ends there)."""
    inst = Instance(spec, constants)

    def silent(t: Transition) -> bool:
        return t.event is None

    current = closure(inst, inst.initial_states(), silent)
    for i, ev in enumerate(trace):
        nxt = {
            t.state for s in current for t in inst.successors(s) if t.event is not None and event_of(t) == ev
        }
        if not nxt:
            return i
        current = closure(inst, nxt, silent)
    ends = any(not any(True for _ in inst.successors(s)) for s in current)
    return None if ends else len(trace)
