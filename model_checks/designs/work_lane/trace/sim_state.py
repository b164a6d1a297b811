"""The state the fast engine simulates: one state of the spec in normal form, and how it is shown.

``SimState`` holds the variables and the internal steps that are placed rather
than searched (StopCall, GiveUpDrain, see ``fast``); ``sim_stop`` adds the Stop
events, ``fast.Sim`` the lanes' and workers' events.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections import defaultdict, deque
from typing import Any, Self, TypeVar

from model_checks.conformance.reader import clip
from model_checks.conformance.verdict import Rejected
from model_checks.designs.work_lane.trace.parse import Config, Event

IDLE, SCHEDULED, DRAINING = 0, 1, 2
STATUS_NAMES = ("Idle", "Scheduled", "Draining")
RUNNING, CLOSING, STOPPING, STOPPED = 0, 1, 2, 3
PHASE_NAMES = ("Running", "Closing", "Stopping", "Stopped")
TOOK, DRAIN, OWES = 0, 1, 2
PC_NAMES = ("took", "drain", "owes")
SHOWN_CHARS = 200


def show(item: Any) -> str:
    """An item for a message: JSON, cut short when long (the verdict's states keep it whole)."""
    return clip(json.dumps(item, ensure_ascii=False), SHOWN_CHARS)


def show_items(items: Any) -> str:
    return clip("[" + ", ".join(show(i) for i in items) + "]", 4 * SHOWN_CHARS)


# Why a work item taken is still held, when the pool is full: giving it up undrained is
# Stop(discard)'s, which takes effect at its stop_begin (the trace format), not before.
NO_GIVE_UP = " (none gives its work item up undrained before a stop_begin discard)"


def in_a_drain(ev: Event) -> str:
    """Why a Stop's ``stop_begin`` cannot come from a thread inside one of its drains."""
    return (
        f"stop_begin {ev['mode']} by {ev['thread']}, which is inside its drain (after its drain_begin, "
        "before its drain_end): Stop called from a callback is rejected (stop_rejected in_callback), "
        "as it would wait for itself"
    )


class SimState(ABC):
    """One possible state of the spec (in normal form), updated in place by each event."""

    __slots__ = (
        "budget",
        "cap",
        "drainer",
        "ineligible",
        "lanes",
        "mode",
        "n_workers",
        "p_owes",
        "phase",
        "queue",
        "ready",
        "ready_cap",
        "status",
        "stopper",
        "workers",
    )

    def __init__(self, config: Config) -> None:
        self.lanes = config.lanes
        self.n_workers = config.workers
        self.cap = config.lane_capacity
        self.budget = config.max_per_drain
        self.ready_cap = config.ready_capacity
        # Per-lane state exists only for the lanes the trace names (a header may declare 65,536).
        self.queue: defaultdict[int, deque[Any]] = defaultdict(deque)
        self.status: defaultdict[int, int] = defaultdict(int)  # IDLE
        self.ready: deque[int] = deque()
        # thread -> [pc, lane, invoked, hand, may_stop]; only threads holding a work item
        self.workers: dict[str, list[Any]] = {}
        # lane -> the thread draining it (its worker at DRAIN): at most one per lane. An index of
        # ``workers``, so that a step about one lane costs the same however many threads hold work.
        self.drainer: dict[int, str] = {}
        self.p_owes: dict[str, int] = {}  # producer thread -> lane it must submit
        self.phase = RUNNING
        self.mode: str | None = None
        self.stopper: str | None = None
        self.ineligible: set[str] | None = None  # after StopCall: threads that cannot have been admitted

    def clone(self) -> Self:
        cls = type(self)
        other = cls.__new__(cls)
        for name in SimState.__slots__:  # the subclasses add steps, no variables
            setattr(other, name, getattr(self, name))
        other.queue = defaultdict(deque, {lane: deque(q) for lane, q in self.queue.items()})
        other.status = defaultdict(int, self.status)
        other.ready = deque(self.ready)
        other.workers = {t: list(w) for t, w in self.workers.items()}
        other.drainer = dict(self.drainer)
        other.p_owes = dict(self.p_owes)
        other.ineligible = set(self.ineligible) if self.ineligible is not None else None
        return other

    # ------------------------------------------------------------------ internal steps

    def stop_call(self, mode: str) -> None:
        """StopCall (anonymous until stop_begin names its thread): admission closes, nothing else."""
        self.phase = CLOSING
        self.mode = mode
        self.ineligible = set(self.p_owes)

    def give_up(self) -> None:
        """GiveUpDrain for every worker that took a work item but did not begin draining it (at
        stop_begin discard: Stop takes effect there)."""
        for t in [t for t, w in self.workers.items() if w[0] == TOOK]:
            del self.workers[t]

    def discarding(self) -> bool:
        """Stop(discard) has begun (its stop_begin): no drain begins, a take is given up at once."""
        return self.mode == "discard" and self.phase == STOPPING

    # ------------------------------------------------------------------ events

    @abstractmethod
    def step(self, ev: Event) -> list[Self] | None:
        """Apply ``ev``; None when this state was updated in place, else the states it became."""

    def _branch(self, ev: Event) -> list[Self]:
        """StopCall must have happened before ``ev`` but its mode is not known yet: try both."""
        other = self.clone()
        self.stop_call("drain")
        other.stop_call("discard")
        return taken([self, other], ev)

    # ------------------------------------------------------------------ reporting

    def describe(self) -> dict[str, Any]:
        phase = PHASE_NAMES[self.phase] + (f"({self.mode})" if self.mode else "")
        return {
            "phase": phase,
            "queue": {str(lane): list(self.queue[lane]) for lane in self._named()},
            "status": {str(lane): STATUS_NAMES[self.status[lane]] for lane in self._named()},
            "ready": list(self.ready),
            "workers": {
                t: f"{PC_NAMES[w[0]]} lane {w[1]} invoked={w[2]}"
                + (f" holding {show(w[3])}" if w[3] is not None else "")
                for t, w in sorted(self.workers.items())
            },
            "owed_submissions": {t: lane for t, lane in sorted(self.p_owes.items())},
        }

    def _named(self) -> list[int]:
        """The lanes the trace has named so far (the others are Idle and empty)."""
        return sorted(set(self.queue) | set(self.status))

    def pending(self) -> dict[str, Any]:
        items: dict[str, list[Any]] = {}
        for lane, q in sorted(self.queue.items()):
            drainer = self.drainer.get(lane)
            hand = self.workers[drainer][3] if drainer is not None else None
            held = [hand] if hand is not None else []
            if held or q:
                items[str(lane)] = held + list(q)
        owed = {t: lane for t, lane in self.p_owes.items()}
        owed.update({t: w[1] for t, w in self.workers.items() if w[0] == OWES})
        out: dict[str, Any] = {"items": items, "submissions": dict(sorted(owed.items()))}
        if self.phase in (CLOSING, STOPPING):
            # Closing: a Stop took effect, its stop_begin not logged yet, its mode a branch's guess
            out["stop"] = stop_phrase(self.mode, self.stopper)
        return out


def stop_phrase(mode: str | None, stopper: str | None) -> str:
    """A prefix's Stop in progress in words: its mode only once its ``stop_begin`` (by ``stopper``)
    said it (a ``stop_rejected``'s mode is the refused call's own; the second review, F7)."""
    if stopper is None:
        return "a Stop in progress (its stop_begin not logged yet)"
    return f"Stop({mode}) in progress by {stopper}"


S = TypeVar("S", bound=SimState)


def taken(sims: list[S], ev: Event) -> list[S]:
    """The states ``sims`` become by ``ev``, from those that take it; the first rejection when none
    does."""
    out: list[S] = []
    first: Rejected | None = None
    for sim in sims:
        try:
            more = sim.step(ev)
        except Rejected as problem:
            first = first or problem
            continue
        out.extend(more if more is not None else [sim])
    if not out:
        assert first is not None
        raise first
    return out
