"""Why a spec trace is never produced by the reference: named classes, computed, not written by hand.

Every spec-only trace of a comparison (check 2) is put in the first class whose predicate holds.
A class is an ordering the design allows and the reference never shows, with the reference code
that serialises it. A spec-only trace that no class explains is ``UNEXPLAINED``; the tests fail on
it, so a change in the reference (or the harness) that adds or removes spec-only traces shows up
as a failing test and a stale table in docs/conformance.md, never as a silently wrong document.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

from model_checks.designs.work_lane.link.scenario import EventKey, TraceKey

UNEXPLAINED = "unexplained"
# A class's predicate read event by event (a monitor): a state is True or False once the class is
# decided (the rest of the trace does not matter) and any other hashable value while it is open;
# a trace still open at its end is not in the class. A monitor, not a function of whole traces,
# so that the class can be run over the spec's trace automaton (``class_bound.py``: which spec
# steps lie only on traces of the class) as well as over one trace.
Step = Callable[[Hashable, EventKey], Hashable]


@dataclass(frozen=True)
class TraceClass:
    name: str
    ordering: str  # what the spec allows and the reference never logs
    why: str  # the reference code that serialises it
    start: Hashable  # the monitor's state before the first event
    step: Step

    def holds(self, trace: TraceKey) -> bool:
        state = self.start
        for ev in trace:
            state = self.step(state, ev)
            if state is True or state is False:
                return state
        return False


def _discard_before_take(owed: Hashable, ev: EventKey) -> Hashable:
    """Stop(discard) drops a lane (or returns) while that lane's work item is still in the ready
    queue: some ``submit`` of the lane has no ``take`` yet at the ``discard``/``stop_end``.
    ``owed``: (lane, submits not taken yet) for each lane where that is not zero."""
    _thread, event, fields = ev
    if event not in ("submit", "take", "discard", "stop_end"):
        return owed
    assert isinstance(owed, tuple)
    counts = Counter(dict(owed))
    lane = dict(fields).get("lane")
    if event == "discard":
        return counts[lane] > 0 or owed
    if event == "stop_end":
        return dict(fields).get("mode") == "discard" and bool(+counts)
    counts[lane] += 1 if event == "submit" else -1
    return tuple(sorted((k, n) for k, n in counts.items() if n))


CLASSES: tuple[TraceClass, ...] = (
    TraceClass(
        "discard-before-take",
        "Stop(discard) drops a lane's items, or returns, while the lane's work item is still in "
        "the ready queue (no worker has taken it)",
        "`WorkerScheduler.stop` calls `WorkerPool.wait_quiescent()` before `_discard_queued()`, "
        "and quiescence needs an empty ready queue: a worker must first take the work item (and "
        "give up the drain, since admission is closed). The spec's `Discard` needs only idle "
        "workers and `StopEndDiscard` clears the ready queue itself, so it also allows Stop to "
        "run before any `take`. The reference is more serialised than the design here; nothing "
        "it does is outside the spec.",
        (),
        _discard_before_take,
    ),
)


def classify(trace: TraceKey, classes: Iterable[TraceClass] = CLASSES) -> str:
    for c in classes:
        if c.holds(trace):
            return c.name
    return UNEXPLAINED


def class_counts(traces: Iterable[TraceKey]) -> dict[str, int]:
    """Spec-only traces per class name, in the order of ``CLASSES`` (``UNEXPLAINED`` last)."""
    counts = Counter(classify(t) for t in traces)
    order = [c.name for c in CLASSES] + [UNEXPLAINED]
    return {name: counts[name] for name in order if counts[name]}
