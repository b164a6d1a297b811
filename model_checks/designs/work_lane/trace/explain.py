"""Why no behaviour of the spec allows an event: the trace-format rule and a sentence.

Called by the generic engine with the states the spec could be in just before
the event; it checks, in the fast engine's order, which guard of the matching
actions fails in those states.
"""

from __future__ import annotations

from typing import Any

from model_checks.designs.work_lane.trace.discards import not_held
from model_checks.designs.work_lane.trace.parse import Event
from model_checks.designs.work_lane.trace.sim_state import NO_GIVE_UP, show, show_items
from spec import work_lane as wl


def _all(states: list[wl.Vars], pred: Any) -> bool:
    return bool(states) and all(pred(s) for s in states)


def explain(ev: Event, states: list[wl.Vars], c: wl.Constants) -> tuple[int, str]:
    kind, thread = ev["event"], ev["thread"]
    lane: Any = ev.get("lane")
    item = ev.get("item")
    if kind == "post":
        result = ev["result"]
        if _all(states, lambda s: s.phase in (wl.STOPPING, wl.STOPPED)):
            return (
                7,
                (
                    f"post {show(item)} to lane {lane} is {result} after stop_begin: once "
                    "Stop has begun every post is invalid_state"
                ),
            )
        if result in ("ok", "capacity_exceeded") and _all(
            states, lambda s: s.phase != wl.RUNNING and s.producer[thread][0] != wl.P_ADMITTED
        ):
            return (
                7,
                (
                    f"post {show(item)} to lane {lane} is {result}, but Stop had already "
                    f"taken effect and {thread} was not in the middle of a post then: "
                    "this post must be invalid_state"
                ),
            )
        if result == "capacity_exceeded":
            n = min(len(s.queue[lane]) for s in states) if states else 0
            return (
                6,
                (
                    f"post {show(item)} to lane {lane} is capacity_exceeded but the lane "
                    f"holds only {n} of {c.lane_capacity} items"
                ),
            )
        if result == "ok":
            if _all(states, lambda s: len(s.queue[lane]) >= c.lane_capacity):
                return (
                    6,
                    (
                        f"post {show(item)} to lane {lane} is ok but the lane is full "
                        f"(lane_capacity {c.lane_capacity})"
                    ),
                )
            if ev["submit"] and _all(states, lambda s: s.status[lane] != wl.IDLE):
                return (
                    2,
                    (
                        f"post {show(item)} to lane {lane} reports submit: true but the "
                        "lane already has its one reservation"
                    ),
                )
            if not ev["submit"] and _all(states, lambda s: s.status[lane] == wl.IDLE):
                return (
                    5,
                    (
                        f"post {show(item)} to lane {lane} found the lane Idle but did not "
                        "take its reservation (lost wakeup)"
                    ),
                )
    elif kind == "submit":
        if _all(states, lambda s: len(s.ready) >= c.ready_capacity):
            return 1, f"submit of lane {lane} finds the ready queue full: a submission must never fail"
        return 2, f"submit of lane {lane} by {thread}, which owes no submission of it"
    elif kind == "take":
        if _all(states, lambda s: s.phase == wl.STOPPED):
            return 7, f"take of lane {lane} after stop_end: the workers have been joined"
        if any(thread in s.worker.domain() for s in states):
            return 3, f"take of lane {lane} by {thread}, which still holds a work item{NO_GIVE_UP}"
        if _all(states, lambda s: len(s.worker) >= c.workers):
            return 3, f"take of lane {lane} by {thread}: there are only {c.workers} workers{NO_GIVE_UP}"
        return 1, f"take of lane {lane} but the ready queue's head is not lane {lane} (takes are FIFO)"
    elif kind == "drain_begin":
        if _all(states, wl.Discarding):
            return 7, f"drain_begin of lane {lane} after stop_begin discard: no drain may begin"
        if _all(states, lambda s: _draining(s, thread, lane)):
            return 3, f"drain_begin of lane {lane} by {thread}, which is already draining it (one per take)"
        return 3, f"drain_begin of lane {lane} by {thread}, which did not take it"
    elif kind in ("invoke", "drain_end"):

        def draining(s: wl.Vars) -> bool:
            return _draining(s, thread, lane)

        if not any(draining(s) for s in states):
            return 3, f"{kind} on lane {lane} by {thread}, which is not draining it"
        ws = [s.worker[thread] for s in states if draining(s)]
        if kind == "invoke":
            if all(w[2] >= c.max_per_drain for w in ws):
                return (
                    3,
                    (
                        f"invoke of {show(item)} on lane {lane}: more than max_per_drain "
                        f"{c.max_per_drain} in one drain"
                    ),
                )
            return (
                4,
                (
                    f"invoke of {show(item)} on lane {lane} is not the lane's next item "
                    "(FIFO, each accepted item once)"
                ),
            )
        held = [
            [hand[1] for hand in [s.worker[thread][3]] if hand is not None] + [i for _, i in s.queue[lane]]
            for s in states
            if draining(s)
        ]
        if ev["outcome"] == "idle" and all(held):
            items = held[0]
            many = len(items) > 1
            shown = ", ".join(show(i) for i in items)
            return 5, (
                f"drain_end idle on lane {lane} while it still holds item{'s' if many else ''} {shown} — "
                f"{'those items' if many else 'that item'} would never run (lost wakeup)"
            )
        if all(w[2] != ev["invoked"] for w in ws):
            return (
                3,
                f"drain_end on lane {lane} says invoked {ev['invoked']} but this drain invoked {ws[0][2]}",
            )
        if ev["outcome"] == "resubmit" and not any(held):
            return 5, f"drain_end resubmit on lane {lane}, which holds no item: it must go Idle"
        if all(w[3] is not None for w in ws):
            return 5, f"drain_end on lane {lane} while a popped item was never invoked: it would be lost"
        return 3, (
            f"drain_end resubmit on lane {lane} before the budget, though the lane was never empty: "
            "the drain must go on"
        )
    elif kind == "stop_rejected":
        if ev["reason"] == "in_callback":
            return 7, f"stop_rejected in_callback by {thread}, which is not inside an invoke callback"
        return 7, "stop_rejected stop_in_progress after stop_end: Stop on a stopped scheduler returns SUCCESS"
    elif kind == "stop_begin":
        if _all(states, lambda s: s.phase in (wl.STOPPING, wl.STOPPED)):
            return 7, f"stop_begin {ev['mode']} but a Stop already began: the scheduler never restarts"
        if _all(states, wl.PostsInFlight):
            return 7, "stop_begin while a post is still in flight"
        return 7, f"stop_begin {ev['mode']}, but a Stop of the other mode had already taken effect"
    elif kind == "discard":
        return 7, _discard_words(ev, states)
    elif kind == "stop_end":
        return 7, _stop_end_words(ev, states, c)
    return 8, f"no behaviour of the spec continues with this {kind}"


def _draining(s: wl.Vars, thread: str, lane: int) -> bool:
    """Is ``thread`` draining ``lane`` in state ``s``?"""
    w = s.worker.as_dict().get(thread)
    return w is not None and w[1] == lane and w[0] in (wl.W_DRAIN, wl.W_DECIDE)


def _stop_words(ev: Event, states: list[wl.Vars], what: str) -> str | None:
    """Why no state lets ``ev``'s thread act for a Stop in progress, in the fast engine's words
    (``sim_stop``), or None when some state does."""
    thread = ev["thread"]
    if _all(states, lambda s: s.phase != wl.STOPPING):
        phases = sorted({s.phase for s in states})
        return f"{what} but no Stop is in progress (phase {' or '.join(phases)})"
    # A Stop call is shown as the ``<thread>@<seq>`` of its stop_begin (``binding.plain``).
    if _all(
        states,
        lambda s: all(t.rpartition("@")[0] != thread or v != wl.S_ACTIVE for t, v in s.stopper.items()),
    ):
        return f"{what} by {thread}, which has no Stop in progress"
    return None


def _busy(states: list[wl.Vars]) -> str | None:
    """The workers still busy in every state (as the first state shows them), or None."""
    if not _all(states, lambda s: not wl.WorkersIdle(s)):
        return None
    w = states[0].worker.as_dict()
    return ", ".join(
        f"{t} ({pc} lane {lane})" for t, (pc, lane, _, _) in sorted(w.items()) if pc != wl.W_IDLE
    )


def _discard_words(ev: Event, states: list[wl.Vars]) -> str:
    """Why no state takes a ``discard``: the first guard of ``DiscardLane`` that fails in every state,
    in the fast engine's order and words (it said "does not match what is queued, or no Stop(discard)
    is in progress" whatever failed: the second outside review, F6)."""
    lane = ev["lane"]
    what = f"discard on lane {lane}"
    why = _stop_words(ev, states, what)
    if why is not None:
        return why
    if _all(states, lambda s: s.mode == "drain"):
        return f"{what} during Stop(drain): drain mode drops nothing"
    busy = _busy(states)
    if busy is not None:
        return f"{what} while workers are still busy: {busy}"
    return not_held(lane, ev["items"], [item for _, item in states[0].queue[lane]])


def _stop_end_words(ev: Event, states: list[wl.Vars], c: wl.Constants) -> str:
    """Why no state takes a ``stop_end``, as ``_discard_words`` (``StopEndDrain``, ``StopEndDiscard``)."""
    mode = ev["mode"]
    what = f"stop_end {mode}"
    if ev["result"] == "failed":
        return (
            f"{what} reports that the scheduler failed (its own code raised, and what it had accepted was "
            "reported discarded): no behaviour of the spec fails"
        )
    why = _stop_words(ev, states, what)
    if why is not None:
        return why
    if _all(states, lambda s: s.mode != mode):
        return f"{what} for a Stop({states[0].mode})"
    busy = _busy(states)
    if busy is not None:
        return f"{what} while workers are still busy: {busy}"
    if _all(states, lambda s: any(s.queue[lane] for lane in wl.Lanes(c))):
        lane = next(lane for lane in wl.Lanes(c) if states[0].queue[lane])
        fate = "run" if mode == "drain" else "been run or discarded"
        held = show_items([item for _, item in states[0].queue[lane]])
        return f"{what} while lane {lane} still holds {held}: every accepted item must have {fate} first"
    if mode == "drain" and _all(states, lambda s: s.ready):
        return f"stop_end drain with work items {list(states[0].ready)} still in the ready queue"
    return f"{what} before every accepted item ran or was discarded and every worker and lane is idle"
