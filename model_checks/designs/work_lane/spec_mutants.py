"""Seeded bugs in the Work Lane spec: each must be caught, with a shortest counterexample.

Each mutant is the design with one critical section split, moved or dropped,
the way a port could get it wrong. The expected property and counterexample
length are what ``lanecheck check work-lane --variant NAME`` must report; the
tests assert both, so a weaker checker (or a vacuous spec) shows up at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from model_checks.mutant import SpecMutant, by_name
from model_checks.spec_mutation import split
from spec import work_lane as wl
from spec.language import Action, Spec, emit, variant
from spec.work_lane import SPEC
from spec.work_lane_state import (
    DRAINING,
    IDLE,
    P_IDLE,
    P_OWES,
    SCHEDULED,
    W_DECIDE,
    W_DRAIN,
    W_IDLE,
    Constants,
    EndingDrain,
    Item,
    Producers,
    Vars,
)

# --- split-idle: the emptiness check and the Idle write in separate critical sections -------

W_GOING_IDLE = "going-idle"


def DrainSawEmpty(c: Constants, s: Vars, w: str) -> object:
    """BUG: under the lane mutex the drainer sees the lane empty ... and lets go of the mutex."""
    ending = EndingDrain(c, s, w)
    if ending is None or s.queue[ending[0]]:
        return None
    return s._replace(worker=s.worker.except_(w, (W_GOING_IDLE, *ending, None)))


def IdleLate(s: Vars, w: str) -> tuple[Vars, int, int] | None:
    """The second half of a drain end split in two, in any lane spec: the worker that saw its
    lane empty writes Idle without looking again and is idle. The state after, the lane, and the
    drain's count; None unless ``w`` is between the halves."""
    pc, lane, n, _ = s.worker[w]
    if pc != W_GOING_IDLE:
        return None
    assert lane is not None
    after = s._replace(
        status=s.status.except_(lane, IDLE), worker=s.worker.except_(w, (W_IDLE, None, 0, None))
    )
    return after, lane, n


def DrainEndIdleLate(c: Constants, s: Vars, w: str) -> object:
    """BUG: ... then, in a second critical section, writes Idle without looking again."""
    late = IdleLate(s, w)
    if late is None:
        return None
    after, lane, n = late
    return emit(after, lane=lane, outcome="idle", invoked=n)


SPLIT_IDLE = split(SPEC, "split-idle", "DrainEndIdle", DrainSawEmpty, DrainEndIdleLate)

# --- publish-outside-mutex: the decision under the mutex, the publish after it --------------

P_PUBLISHING = "publishing"


# Where a producer waits between the halves of a post split in two: its pc, posts done and the
# lane it names, given the posts done, the lane and whether it reserved the lane.
Parked = Callable[[int, int, bool], tuple[str, int, int | None]]


def ReserveFirst(c: Constants, s: Vars, p: str, parked: Parked) -> tuple[Vars, int, Item, bool] | None:
    """The first half of a post split so that the reservation comes before the publish, in any
    lane spec: with room in the lane, the producer takes the lane's reservation if it is Idle,
    and waits where ``parked`` says. The state after, the lane, the item and whether it
    reserved; None unless ``p`` has a post with room."""
    post = wl.PostWithRoom(c, s, p)
    if post is None:
        return None
    k, lane, item = post
    reserve = s.status[lane] == IDLE
    after = s._replace(
        status=s.status.except_(lane, SCHEDULED) if reserve else s.status,
        producer=s.producer.except_(p, parked(k, lane, reserve)),
    )
    return after, lane, item, reserve


def PublishedLate(s: Vars, p: str, k: int, lane: int, item: Item, reserved: bool) -> Vars:
    """The second half: the item enters the queue after the decision, and the producer goes on to
    its next post, owing the lane's submission if it reserved."""
    return wl.Published(s, lane, item)._replace(
        producer=s.producer.except_(p, (P_OWES, k + 1, lane) if reserved else (P_IDLE, k + 1, None)),
    )


def PostDecideFirst(c: Constants, s: Vars, p: str) -> object:
    """BUG: under the lane mutex the producer decides whether to reserve, but publishes later."""
    first = ReserveFirst(c, s, p, lambda k, lane, owe: (P_PUBLISHING + ("+owe" if owe else ""), k, lane))
    if first is None:
        return None
    after, lane, item, reserve = first
    return emit(after, lane=lane, item=item, result="ok", submit=reserve)


def PublishLate(c: Constants, s: Vars, p: str) -> object:
    """BUG: the item enters the queue outside the mutex, after the decision was taken."""
    pc, k, lane = s.producer[p]
    if not pc.startswith(P_PUBLISHING):
        return None
    post = c.post_of(p, k)
    assert post is not None and lane is not None
    return PublishedLate(s, p, k, lane, post[1], reserved=pc.endswith("+owe"))


PUBLISH_OUTSIDE_MUTEX = variant(
    SPEC,
    "publish-outside-mutex",
    replace_actions={"PostAccepted": PostDecideFirst},
    add_actions=[Action("PublishLate", PublishLate, (Producers,), None)],
)

# --- double-reserve: a post to a Scheduled lane reserves it again ---------------------------


def PostReservesScheduledLane(c: Constants, s: Vars, p: str) -> object:
    """BUG: a post to a lane that is Idle *or Scheduled* takes a reservation."""
    post = wl.PostWithRoom(c, s, p)
    return None if post is None else wl.Accepted(s, p, post, reserve=s.status[post[1]] != DRAINING)


DOUBLE_RESERVE = variant(SPEC, "double-reserve", replace_actions={"PostAccepted": PostReservesScheduledLane})

# --- small-ready-queue: ready capacity below the lane count --------------------------------

SMALL_READY_QUEUE = variant(SPEC, "small-ready-queue", drop_assumptions=["ReadyQueueHoldsEveryLane"])

# --- stop-skips-inflight: Stop(drain) does not wait for posts in flight --------------------


def StopBeginWithoutWaiting(c: Constants, s: Vars, t: str) -> object:
    """BUG: Stop goes on while a TryPost that passed the stop check has not published yet."""
    if s.stopper[t] != "active" or s.phase != wl.CLOSING:
        return None
    return emit(s._replace(phase=wl.STOPPING), mode=s.mode)


def stop_skips_inflight(spec: Spec) -> SpecMutant:
    """The mutant for any spec whose Stop is this one's (the lock-free lane takes Stop by name)."""
    return SpecMutant(
        "stop-skips-inflight",
        "Stop(drain) returning without waiting for posts in flight",
        variant(spec, "stop-skips-inflight", replace_actions={"StopBegin": StopBeginWithoutWaiting}),
        expect="StoppedMeansQuiet",
        length=5,
        overrides={"stops": ("drain",)},
    )


STOP_SKIPS_INFLIGHT = stop_skips_inflight(SPEC)

# --- ignore-budget: a drain pops until the lane is empty -----------------------------------


def PopIgnoringBudget(c: Constants, s: Vars, w: str) -> object:
    """BUG: the drainer keeps popping past max_per_drain."""
    pc, lane, n, hand = s.worker[w]
    if pc != W_DRAIN or hand is not None:
        return None
    assert lane is not None
    queue = s.queue[lane]
    if not queue:
        return None
    return s._replace(
        queue=s.queue.except_(lane, queue[1:]), worker=s.worker.except_(w, (W_DRAIN, lane, n, queue[0]))
    )


def PopEmptyIgnoringBudget(c: Constants, s: Vars, w: str) -> object:
    """BUG: ... and only an empty lane ends the drain."""
    pc, lane, n, hand = s.worker[w]
    if pc != W_DRAIN or hand is not None:
        return None
    assert lane is not None
    if s.queue[lane]:
        return None
    return s._replace(worker=s.worker.except_(w, (W_DECIDE, lane, n, None)))


def _only_when_empty(original: Any) -> Any:
    def action(c: Constants, s: Vars, w: str) -> object:
        if s.worker[w][0] != W_DECIDE:
            return None
        return original(c, s, w)

    action.__name__ = original.__name__
    return action


IGNORE_BUDGET = variant(
    SPEC,
    "ignore-budget",
    replace_actions={
        "Pop": PopIgnoringBudget,
        "PopEmpty": PopEmptyIgnoringBudget,
        "DrainEndIdle": _only_when_empty(wl.DrainEndIdle),
        "DrainEndResubmit": _only_when_empty(wl.DrainEndResubmit),
    },
)

MUTANTS: dict[str, SpecMutant] = by_name(
    SpecMutant(
        "split-idle",
        "the end-of-drain emptiness check and the Idle write in separate critical sections",
        SPLIT_IDLE,
        expect="NoLostWakeup",
        length=12,
    ),
    SpecMutant(
        "publish-outside-mutex",
        "the publish done outside the lane mutex, after the Idle -> Scheduled decision",
        PUBLISH_OUTSIDE_MUTEX,
        expect="NoLostWakeup",
        length=13,
    ),
    SpecMutant(
        "double-reserve",
        "a post to a Scheduled lane reserving it again",
        DOUBLE_RESERVE,
        expect="OneReservationPerLane",
        length=5,
        overrides={"lane_capacity": 2},
    ),
    SpecMutant(
        "small-ready-queue",
        "ready capacity below the lane count",
        SMALL_READY_QUEUE,
        expect="ReadyQueueBounded",
        length=6,
        overrides={"ready_capacity": 1},
    ),
    STOP_SKIPS_INFLIGHT,
    SpecMutant(
        "ignore-budget",
        "a drain that ignores its budget",
        IGNORE_BUDGET,
        expect="BudgetRespected",
        length=11,
        overrides={"max_per_drain": 1},
    ),
)
