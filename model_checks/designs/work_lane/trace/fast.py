"""The work-lane fast path: a direct simulation of the spec in a lazy normal form.

The spec's internal steps are placed canonically instead of being searched:

* ``Pop`` happens just before the ``invoke`` of its item, unless a ``post`` ok
  on a full lane needs the room: then the drainer of that lane pops first.
  Popping earlier only frees capacity; nothing else can observe it.
* ``PopEmpty`` is decided at ``drain_end``: a drain that stops before its
  budget must have seen its lane empty after its last invoke (``may_stop``).
* ``Admit`` happens just before its ``post``; ``StopCall`` as late as
  possible: just before the first event that needs the scheduler out of
  Running (``post`` invalid_state, ``stop_rejected`` stop_in_progress,
  ``stop_begin``, a ``take`` that needs a worker to have given up). Producers
  idle at that point (and threads not seen yet) may have been admitted before
  it; that choice is settled at their next post. Until ``stop_begin`` names
  the mode, both modes are simulated (at most two states).
* ``GiveUpDrain`` happens as soon as Stop(discard) is in effect.

Every later placement only enables steps that the earlier one disables, so a
trace has a behaviour of the spec iff it has one in this normal form; the
generic search (``spec_engine``) is the reference, and the two are tested
against each other (tests/conformance/test_differential.py).
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

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


class Sim:
    """One possible state of the spec (in normal form), updated in place by each event."""

    __slots__ = (
        "budget",
        "cap",
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
        self.p_owes: dict[str, int] = {}  # producer thread -> lane it must submit
        self.phase = RUNNING
        self.mode: str | None = None
        self.stopper: str | None = None
        self.ineligible: set[str] | None = None  # after StopCall: threads that cannot have been admitted

    def clone(self) -> Sim:
        other = Sim.__new__(Sim)
        for name in Sim.__slots__:
            setattr(other, name, getattr(self, name))
        other.queue = defaultdict(deque, {lane: deque(q) for lane, q in self.queue.items()})
        other.status = defaultdict(int, self.status)
        other.ready = deque(self.ready)
        other.workers = {t: list(w) for t, w in self.workers.items()}
        other.p_owes = dict(self.p_owes)
        other.ineligible = set(self.ineligible) if self.ineligible is not None else None
        return other

    # ------------------------------------------------------------------ internal steps

    def stop_call(self, mode: str) -> None:
        """StopCall (anonymous until stop_begin names its thread)."""
        self.phase = CLOSING
        self.mode = mode
        self.ineligible = set(self.p_owes)
        if mode == "discard":
            self.give_up()

    def give_up(self) -> None:
        """GiveUpDrain for every worker that took a work item but did not begin draining it."""
        for t in [t for t, w in self.workers.items() if w[0] == TOOK]:
            del self.workers[t]

    def discarding(self) -> bool:
        return self.mode == "discard" and (self.phase == CLOSING or self.phase == STOPPING)

    # ------------------------------------------------------------------ events

    def step(self, ev: Event) -> list[Sim] | None:
        """Apply ``ev``; None when this state was updated in place, else the states it became."""
        return STEPS[ev["event"]](self, ev)

    def _branch(self, ev: Event) -> list[Sim]:
        """StopCall must have happened before ``ev`` but its mode is not known yet: try both."""
        other = self.clone()
        self.stop_call("drain")
        other.stop_call("discard")
        out: list[Sim] = []
        first: Rejected | None = None
        for sim in (self, other):
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

    def post(self, ev: Event) -> list[Sim] | None:
        lane = ev["lane"]
        if lane is None:
            if self.ineligible is not None:
                self.ineligible.add(ev["thread"])
            return None  # PostInvalidHandle: any phase, nothing changes
        result = ev["result"]
        thread = ev["thread"]
        phase = self.phase
        if result == "invalid_state":
            if phase == RUNNING:
                return self._branch(ev)
            assert self.ineligible is not None
            self.ineligible.add(thread)
            return None
        if phase != RUNNING:
            if phase != CLOSING:
                raise Rejected(
                    7,
                    f"post {show(ev['item'])} to lane {lane} is {result} after stop_begin: "
                    "once Stop has begun every post is invalid_state",
                )
            assert self.ineligible is not None
            if thread in self.ineligible:
                raise Rejected(
                    7,
                    f"post {show(ev['item'])} to lane {lane} is {result}, but Stop had already taken effect "
                    f"(the stop_rejected/invalid_state seen earlier) and {thread} was not in the middle of a "
                    "post then: this post must be invalid_state",
                )
            self.ineligible.add(thread)
        queue = self.queue[lane]
        if result == "capacity_exceeded":
            if len(queue) < self.cap:
                raise Rejected(
                    6,
                    f"post {show(ev['item'])} to lane {lane} is capacity_exceeded but the lane holds only "
                    f"{len(queue)} of {self.cap} items {show_items(queue)}",
                )
            return None
        # result == "ok"
        if len(queue) >= self.cap and not self._pop_for_room(lane):
            raise Rejected(
                6,
                f"post {show(ev['item'])} to lane {lane} is ok but the lane is full: "
                f"it holds {show_items(queue)} "
                f"(lane_capacity {self.cap}) and no drainer could have popped one yet",
            )
        reserve = self.status[lane] == IDLE
        if ev["submit"] != reserve:
            if reserve:
                raise Rejected(
                    5,
                    f"post {show(ev['item'])} to lane {lane} found the lane Idle but "
                    "did not take its reservation "
                    "(submit: false): nobody would ever drain it (lost wakeup)",
                )
            raise Rejected(
                2,
                f"post {show(ev['item'])} to lane {lane} reports submit: true but the lane is "
                f"{STATUS_NAMES[self.status[lane]]}: it already has its one reservation",
            )
        queue.append(ev["item"])
        if reserve:
            self.status[lane] = SCHEDULED
            self.p_owes[thread] = lane
        return None

    def _pop_for_room(self, lane: int) -> bool:
        """The lane's drainer pops its next item early, to make room for a post (lazy Pop)."""
        for w in self.workers.values():
            if w[1] == lane and w[0] == DRAIN:
                if w[3] is None and w[2] < self.budget:
                    w[3] = self.queue[lane].popleft()
                    w[4] = False
                    return True
                return False
        return False

    def submit(self, ev: Event) -> list[Sim] | None:
        thread, lane = ev["thread"], ev["lane"]
        owed = self.p_owes.get(thread)
        if owed == lane:
            del self.p_owes[thread]
        else:
            w = self.workers.get(thread)
            if w is None or w[0] != OWES or w[1] != lane:
                raise Rejected(
                    2,
                    f"submit of lane {lane} by {thread}, which owes no submission of "
                    "it (a submit follows only "
                    "a post with submit: true or a drain_end resubmit, on the same thread)",
                )
            del self.workers[thread]
        if len(self.ready) >= self.ready_cap:
            raise Rejected(
                1,
                f"submit of lane {lane} finds the ready queue full ({list(self.ready)}, ready_capacity "
                f"{self.ready_cap}): a submission must never fail",
            )
        self.ready.append(lane)
        return None

    def take(self, ev: Event) -> list[Sim] | None:
        thread, lane = ev["thread"], ev["lane"]
        if self.phase == STOPPED:
            raise Rejected(7, f"take of lane {lane} after stop_end: the workers have been joined")
        mine = self.workers.get(thread)
        if mine is not None or len(self.workers) >= self.n_workers:
            took = mine[0] == TOOK if mine is not None else any(w[0] == TOOK for w in self.workers.values())
            if took and self.phase == RUNNING:
                # only a Stop(discard) that took effect lets a worker give its work item up
                self.stop_call("discard")
                return self.take(ev)
            if mine is not None:
                raise Rejected(
                    3,
                    f"take of lane {lane} by {thread}, which still holds lane "
                    f"{mine[1]} ({PC_NAMES[mine[0]]}): "
                    "a worker runs one work item at a time",
                )
            raise Rejected(
                3,
                f"take of lane {lane} by {thread} while {len(self.workers)} other threads "
                f"({', '.join(sorted(self.workers))}) hold work items: there are only "
                f"{self.n_workers} workers",
            )
        ready = self.ready
        if not ready or ready[0] != lane:
            head = f"its head is lane {ready[0]}" if ready else "it is empty"
            raise Rejected(
                1, f"take of lane {lane} but the ready queue is {list(ready)}: {head} (takes are FIFO)"
            )
        ready.popleft()
        if not self.discarding():
            self.workers[thread] = [TOOK, lane, 0, None, False]
        return None

    def _worker(self, ev: Event, what: str) -> list[Any]:
        thread, lane = ev["thread"], ev["lane"]
        w = self.workers.get(thread)
        if w is None or w[1] != lane or w[0] != DRAIN:
            held = "holds no work item" if w is None else f"is at {PC_NAMES[w[0]]} on lane {w[1]}"
            raise Rejected(
                3,
                f"{what} on lane {lane} by {thread}, which {held}: a lane's invokes and drain_end come only "
                "from the thread that began draining it",
            )
        return w

    def drain_begin(self, ev: Event) -> list[Sim] | None:
        thread, lane = ev["thread"], ev["lane"]
        if self.discarding():
            raise Rejected(
                7, f"drain_begin of lane {lane} after Stop(discard) took effect: no drain may begin"
            )
        w = self.workers.get(thread)
        if w is None or w[0] != TOOK or w[1] != lane:
            held = "holds no work item" if w is None else f"is at {PC_NAMES[w[0]]} on lane {w[1]}"
            raise Rejected(
                3,
                f"drain_begin of lane {lane} by {thread}, which {held}: only the worker that took the lane's "
                "work item may drain it",
            )
        self.status[lane] = DRAINING
        w[0] = DRAIN
        w[4] = not self.queue[lane]
        return None

    def invoke(self, ev: Event) -> list[Sim] | None:
        lane, item = ev["lane"], ev["item"]
        w = self._worker(ev, "invoke")
        hand = w[3]
        if hand is not None:
            if hand != item:
                raise Rejected(
                    4,
                    f"invoke of {show(item)} on lane {lane}, but the drainer had already popped {show(hand)} "
                    "(lane FIFO)",
                )
            w[3] = None
        else:
            if w[2] >= self.budget:
                raise Rejected(
                    3,
                    f"invoke of {show(item)} on lane {lane} would be invoke #{w[2] + 1} of this drain: "
                    f"max_per_drain is {self.budget}",
                )
            queue = self.queue[lane]
            if not queue:
                raise Rejected(
                    4,
                    f"invoke of {show(item)} on lane {lane}, which holds no item: it was never accepted, "
                    "or was already invoked or discarded",
                )
            if queue[0] != item:
                where = (
                    "later in the lane"
                    if item in queue
                    else "not in the lane (never accepted, or already gone)"
                )
                raise Rejected(
                    4,
                    f"invoke of {show(item)} on lane {lane} but the lane's next item is {show(queue[0])} "
                    f"({show(item)} is {where})",
                )
            queue.popleft()
        w[2] += 1
        w[4] = not self.queue[lane]
        return None

    def drain_end(self, ev: Event) -> list[Sim] | None:
        lane, outcome = ev["lane"], ev["outcome"]
        w = self._worker(ev, "drain_end")
        queue = self.queue[lane]
        if outcome == "idle" and (queue or w[3] is not None):
            items = ([w[3]] if w[3] is not None else []) + list(queue)
            held = ", ".join(show(i) for i in items)
            raise Rejected(
                5,
                f"drain_end idle on lane {lane} while it still holds item{'s' if len(items) > 1 else ''} "
                f"{held} — {'that item' if len(items) == 1 else 'those items'} would never run (lost wakeup)",
            )
        if ev["invoked"] != w[2]:
            raise Rejected(
                3, f"drain_end on lane {lane} says invoked {ev['invoked']} but this drain invoked {w[2]}"
            )
        if outcome == "idle":
            del self.workers[ev["thread"]]
            self.status[lane] = IDLE
            return None
        if not queue and w[3] is None:
            raise Rejected(5, f"drain_end resubmit on lane {lane}, which holds no item: it must go Idle")
        if w[3] is not None:
            raise Rejected(
                5,
                f"drain_end on lane {lane} while {show(w[3])}, needed out of the lane earlier to make room "
                "for a post, was never invoked: that item would be lost",
            )
        if w[2] < self.budget and not w[4]:
            raise Rejected(
                3,
                f"drain_end resubmit on lane {lane} after {w[2]} of {self.budget} "
                "invokes, but the lane was never "
                f"empty since the last one: the drain must go on to {show(queue[0])}",
            )
        w[0], w[2], w[4] = OWES, 0, False
        self.status[lane] = SCHEDULED
        return None

    def stop_rejected(self, ev: Event) -> list[Sim] | None:
        if ev["reason"] == "in_callback":
            w = self.workers.get(ev["thread"])
            if w is None or w[0] != DRAIN or w[3] is not None or w[2] == 0:
                raise Rejected(
                    7,
                    f"stop_rejected in_callback by {ev['thread']}, which is not inside an invoke callback "
                    "(it must follow an invoke of its drain)",
                )
            return None
        if self.phase == RUNNING:
            return self._branch(ev)
        if self.phase == STOPPED:
            raise Rejected(
                7,
                "stop_rejected stop_in_progress after stop_end: Stop on a stopped scheduler returns SUCCESS "
                "and logs nothing",
            )
        return None

    def stop_begin(self, ev: Event) -> list[Sim] | None:
        mode = ev["mode"]
        if self.phase == RUNNING:
            self.stop_call(mode)
        elif self.phase != CLOSING:
            raise Rejected(7, f"stop_begin {mode} but a Stop already began: the scheduler never restarts")
        elif self.mode != mode:
            raise Rejected(
                7,
                f"stop_begin {mode}, but Stop({self.mode}) had already taken effect before an earlier event",
            )
        if self.p_owes:
            owing = ", ".join(f"{t} (lane {lane})" for t, lane in sorted(self.p_owes.items()))
            raise Rejected(
                7,
                f"stop_begin while a post is still in flight: {owing} has not "
                "submitted yet; Stop begins only "
                "after every post in flight settled",
            )
        self.phase = STOPPING
        self.stopper = ev["thread"]
        return None

    def _stopping(self, ev: Event, what: str) -> None:
        if self.phase != STOPPING:
            raise Rejected(7, f"{what} but no Stop is in progress (phase {PHASE_NAMES[self.phase]})")
        if ev["thread"] != self.stopper:
            raise Rejected(7, f"{what} by {ev['thread']}, but the Stop in progress is {self.stopper}'s")

    def _busy(self) -> str | None:
        if not self.workers:
            return None
        return ", ".join(f"{t} ({PC_NAMES[w[0]]} lane {w[1]})" for t, w in sorted(self.workers.items()))

    def discard(self, ev: Event) -> list[Sim] | None:
        lane = ev["lane"]
        self._stopping(ev, f"discard on lane {lane}")
        if self.mode != "discard":
            raise Rejected(7, f"discard on lane {lane} during Stop(drain): drain mode drops nothing")
        busy = self._busy()
        if busy is not None:
            raise Rejected(7, f"discard on lane {lane} while workers are still busy: {busy}")
        queue = self.queue[lane]
        if not queue or list(queue) != ev["items"]:
            raise Rejected(
                7,
                f"discard of {show_items(ev['items'])} on lane {lane}, which holds "
                f"{show_items(queue)}: a discard "
                "lists exactly the items still queued, each once",
            )
        queue.clear()
        return None

    def stop_end(self, ev: Event) -> list[Sim] | None:
        mode = ev["mode"]
        if ev["result"] == "failed":
            raise Rejected(
                7,
                f"stop_end {mode} reports that the scheduler failed (its own code raised, and what it had "
                "accepted was reported discarded): no behaviour of the spec fails",
            )
        self._stopping(ev, f"stop_end {mode}")
        if mode != self.mode:
            raise Rejected(7, f"stop_end {mode} for a Stop({self.mode})")
        busy = self._busy()
        if busy is not None:
            raise Rejected(7, f"stop_end {mode} while workers are still busy: {busy}")
        for lane, queue in sorted(self.queue.items()):
            if queue:
                fate = "run" if mode == "drain" else "been run or discarded"
                raise Rejected(
                    7,
                    f"stop_end {mode} while lane {lane} still holds {show_items(queue)}: every accepted item "
                    f"must have {fate} first",
                )
        if mode == "drain":
            if self.ready:
                raise Rejected(
                    7, f"stop_end drain with work items {list(self.ready)} still in the ready queue"
                )
            for lane, st in sorted(self.status.items()):
                if st != IDLE:
                    raise Rejected(
                        7, f"stop_end drain while lane {lane} is {STATUS_NAMES[st]}: every lane must be Idle"
                    )
        else:
            self.ready.clear()
            self.status = defaultdict(int)
        self.phase = STOPPED
        self.stopper = None
        return None

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
            held = [w[3] for w in self.workers.values() if w[1] == lane and w[3] is not None]
            if held or q:
                items[str(lane)] = held + list(q)
        owed = {t: lane for t, lane in self.p_owes.items()}
        owed.update({t: w[1] for t, w in self.workers.items() if w[0] == OWES})
        out: dict[str, Any] = {"items": items, "submissions": dict(sorted(owed.items()))}
        if self.phase in (CLOSING, STOPPING):
            out["stop"] = f"Stop({self.mode}) in progress" + (f" by {self.stopper}" if self.stopper else "")
        return out


# The method of Sim that applies each event kind (the reader has checked the kind): one dict
# lookup per event on the validator's hot path.
STEPS: dict[str, Callable[[Sim, Event], list[Sim] | None]] = {
    kind: getattr(Sim, kind)
    for kind in (
        "post",
        "submit",
        "take",
        "drain_begin",
        "invoke",
        "drain_end",
        "stop_rejected",
        "stop_begin",
        "discard",
        "stop_end",
    )
}


class FastEngine:
    """The set of normal-form states (one, or two while the Stop mode is unknown)."""

    name = "fast"

    def __init__(self, config: Config) -> None:
        self.sims = [Sim(config)]

    def step(self, ev: Event) -> None:
        sims = self.sims
        if len(sims) == 1:
            more = sims[0].step(ev)
            if more is not None:
                self.sims = more
            return
        out: list[Sim] = []
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
        self.sims = out

    def describe(self) -> list[dict[str, Any]]:
        return [sim.describe() for sim in self.sims]

    def pending(self) -> dict[str, Any]:
        return self.sims[0].pending()
