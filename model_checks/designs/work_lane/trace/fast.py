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
  ``stop_begin``). Producers idle at that point (and threads not seen yet)
  may have been admitted before it; that choice is settled at their next
  post. Until ``stop_begin`` names the mode, both modes are simulated (at
  most two states). It closes admission only: drains still begin.
* ``GiveUpDrain`` happens as soon as Stop(discard) has begun: at its
  ``stop_begin`` (where the trace format says Stop takes effect), and at
  once for a ``take`` after it. Before it no worker gives a work item up, so
  a ``take`` beyond ``workers`` is refused.

Every later placement only enables steps that the earlier one disables, so a
trace has a behaviour of the spec iff it has one in this normal form; the
generic search (``spec_engine``) is the reference, and the two are tested
against each other (tests/conformance/test_differential.py).

``Sim`` is built in three layers, one module each: the state, its internal steps
and how it is shown (``sim_state``), the Stop events (``sim_stop``), and here
the lanes' and workers' events with the engine over the set of states.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from model_checks.conformance.verdict import Rejected
from model_checks.designs.work_lane.trace.parse import Config, Event
from model_checks.designs.work_lane.trace.sim_state import (
    CLOSING,
    DRAIN,
    DRAINING,
    IDLE,
    NO_GIVE_UP,
    OWES,
    PC_NAMES,
    RUNNING,
    SCHEDULED,
    STATUS_NAMES,
    STOPPED,
    TOOK,
    show,
    show_items,
    taken,
)
from model_checks.designs.work_lane.trace.sim_stop import StopSteps


def _held(w: list[Any] | None) -> str:
    """What a worker holds, for a rejection of its event."""
    return "holds no work item" if w is None else f"is at {PC_NAMES[w[0]]} on lane {w[1]}"


class Sim(StopSteps):
    """One possible state of the spec (in normal form), updated in place by each event."""

    __slots__ = ()

    def step(self, ev: Event) -> list[Sim] | None:
        """Apply ``ev``; None when this state was updated in place, else the states it became."""
        return STEPS[ev["event"]](self, ev)

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
        drainer = self.drainer.get(lane)
        if drainer is None:
            return False
        w = self.workers[drainer]
        if w[3] is None and w[2] < self.budget:
            w[3] = self.queue[lane].popleft()
            w[4] = False
            return True
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
            # A worker gives a work item up undrained only once Stop(discard) has begun, and its
            # stop_begin gives up every one taken then (``sim_stop``): these still hold theirs.
            if mine is not None:
                raise Rejected(
                    3,
                    f"take of lane {lane} by {thread}, which still holds lane "
                    f"{mine[1]} ({PC_NAMES[mine[0]]}): "
                    f"a worker runs one work item at a time{NO_GIVE_UP}",
                )
            raise Rejected(
                3,
                f"take of lane {lane} by {thread} while {len(self.workers)} other threads "
                f"({', '.join(sorted(self.workers))}) hold work items: there are only "
                f"{self.n_workers} workers{NO_GIVE_UP}",
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
            raise Rejected(
                3,
                f"{what} on lane {lane} by {thread}, which {_held(w)}: a lane's invokes and drain_end come "
                "only from the thread that began draining it",
            )
        return w

    def drain_begin(self, ev: Event) -> list[Sim] | None:
        thread, lane = ev["thread"], ev["lane"]
        if self.discarding():
            raise Rejected(7, f"drain_begin of lane {lane} after stop_begin discard: no drain may begin")
        w = self.workers.get(thread)
        if w is not None and w[0] == DRAIN and w[1] == lane:
            raise Rejected(
                3, f"drain_begin of lane {lane} by {thread}, which is already draining it (one per take)"
            )
        if w is None or w[0] != TOOK or w[1] != lane:
            raise Rejected(
                3,
                f"drain_begin of lane {lane} by {thread}, which {_held(w)}: only the worker that took the "
                "lane's work item may drain it",
            )
        self.status[lane] = DRAINING
        self.drainer[lane] = thread
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
            del self.drainer[lane]
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
        del self.drainer[lane]
        self.status[lane] = SCHEDULED
        return None


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
        self.sims = taken(sims, ev)

    def describe(self) -> list[dict[str, Any]]:
        return [sim.describe() for sim in self.sims]

    def pending(self) -> dict[str, Any]:
        return self.sims[0].pending()
