"""Why a spec trace is never produced by the reference: named classes, computed, not written by hand.

Every spec-only trace of a comparison (check 2) is put in the first class whose predicate holds.
A class is an ordering the design allows and the reference never shows, with the reference code
that serialises it. A spec-only trace that no class explains is ``UNEXPLAINED``; the tests fail on
it, so a change in the reference (or the harness) that adds or removes spec-only traces shows up
as a failing test and a stale table in docs/conformance.md, never as a silently wrong document.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from model_checks.designs.work_lane.link.scenario import TraceKey

UNEXPLAINED = "unexplained"


@dataclass(frozen=True)
class TraceClass:
    name: str
    ordering: str  # what the spec allows and the reference never logs
    why: str  # the reference code that serialises it
    holds: Callable[[TraceKey], bool]


def _discard_before_take(trace: TraceKey) -> bool:
    """Stop(discard) drops a lane (or returns) while that lane's work item is still in the ready
    queue: some ``submit`` of the lane has no ``take`` yet at the ``discard``/``stop_end``."""
    owed: Counter[object] = Counter()
    for _thread, event, fields in trace:
        lane = dict(fields).get("lane")
        if event == "submit":
            owed[lane] += 1
        elif event == "take":
            owed[lane] -= 1
        elif event == "discard" and owed[lane] > 0:
            return True
        elif event == "stop_end":
            return dict(fields).get("mode") == "discard" and bool(+owed)
    return False


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
