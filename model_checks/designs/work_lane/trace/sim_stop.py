"""The Stop events of the fast engine: stop_rejected, stop_begin, discard, stop_end."""

from __future__ import annotations

from collections import defaultdict
from typing import Self

from model_checks.conformance.verdict import Rejected
from model_checks.designs.work_lane.trace.discards import not_held, take_out
from model_checks.designs.work_lane.trace.parse import Event
from model_checks.designs.work_lane.trace.sim_state import (
    CLOSING,
    DRAIN,
    IDLE,
    PC_NAMES,
    PHASE_NAMES,
    RUNNING,
    STATUS_NAMES,
    STOPPED,
    STOPPING,
    SimState,
    in_a_drain,
    show_items,
)


class StopSteps(SimState):
    """A state of the spec that applies the Stop events (``fast.Sim`` adds the others)."""

    __slots__ = ()

    def stop_rejected(self, ev: Event) -> list[Self] | None:
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

    def stop_begin(self, ev: Event) -> list[Self] | None:
        mode = ev["mode"]
        w = self.workers.get(ev["thread"])
        if w is not None and w[0] == DRAIN:
            raise Rejected(7, in_a_drain(ev))
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
        if mode == "discard":
            self.give_up()
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

    def discard(self, ev: Event) -> list[Self] | None:
        lane = ev["lane"]
        self._stopping(ev, f"discard on lane {lane}")
        if self.mode != "discard":
            raise Rejected(7, f"discard on lane {lane} during Stop(drain): drain mode drops nothing")
        busy = self._busy()
        if busy is not None:
            raise Rejected(7, f"discard on lane {lane} while workers are still busy: {busy}")
        queue = self.queue[lane]
        rest = take_out(queue, ev["items"])
        if rest is None:
            raise Rejected(7, not_held(lane, ev["items"], list(queue)))
        queue.clear()
        queue.extend(rest)
        return None

    def stop_end(self, ev: Event) -> list[Self] | None:
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
