"""MODULE WorkLaneState — the constants, variables and state operators of ``spec.work_lane``.

``spec.work_lane`` EXTENDS this module with the initial state, the actions, the
invariants and fairness; what is here are pure functions of the constants and
one state, named as in the TLA+ twin (``spec/tla/WorkLane.tla``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from spec.language import Function, variables
from spec.processes import PostAt as PostAt
from spec.processes import Producers as Producers  # re-exported: spec/work_lane.py
from spec.processes import Scripted
from spec.processes import Workers as Workers

# ============================================================================ CONSTANTS

IDLE, SCHEDULED, DRAINING = "Idle", "Scheduled", "Draining"
RUNNING, CLOSING, STOPPING, STOPPED = "Running", "Closing", "Stopping", "Stopped"

Item = str
Queued = tuple[int, Item]  # (position in the lane's acceptance order, item)


@dataclass(frozen=True)
class Constants(Scripted[int | None]):
    lanes: int
    workers: int
    lane_capacity: int
    max_per_drain: int  # the drain budget, counted in items
    ready_capacity: int
    # script[i] lists the lanes producer p<i> posts to, in order (None: an invalid handle).
    script: tuple[tuple[int | None, ...], ...] = ()
    # One Stop call per entry, made by its own thread s<i>, with that mode.
    stops: tuple[str, ...] = ()
    # Whether a callback tries to Stop its own scheduler (it must be refused).
    callback_stop: bool = False

    HEADER: ClassVar[tuple[str, ...]] = (
        "lanes",
        "workers",
        "lane_capacity",
        "max_per_drain",
        "ready_capacity",
    )

    # The process sets and what each process does (producers and workers: ``Scripted``'s). A
    # trace validator overrides these to bind the spec's processes to a trace's threads and posts.
    def stopper_names(self) -> tuple[str, ...]:
        return tuple(f"s{i}" for i in range(len(self.stops)))

    def mode_of(self, stopper: str) -> str:
        return self.stops[int(stopper[1:])]


def Lanes(c: Constants) -> tuple[int, ...]:
    return tuple(range(c.lanes))


def Stoppers(c: Constants) -> tuple[str, ...]:
    return c.stopper_names()


def Modes(c: Constants) -> tuple[str, ...]:
    return ("drain", "discard")


# ============================================================================ VARIABLES


@variables
class Vars(NamedTuple):
    queue: Function[int, tuple[Queued, ...]]  # the lane's bounded MPMC queue
    status: Function[int, str]  # Idle | Scheduled | Draining, under the lane mutex
    ready: tuple[int, ...]  # the pool's FIFO of drain work items (one lane each)
    # Per process: the program counter and what it holds.
    producer: Function[str, tuple[str, int, int | None]]  # (pc, posts done, lane owed)
    worker: Function[str, tuple[str, int | None, int, Queued | None]]  # (pc, lane, invoked, popped)
    stopper: Function[str, str]  # idle | active | done
    phase: str  # Running | Closing | Stopping | Stopped
    mode: str | None  # the mode of the Stop in progress
    # History, per lane, kept as counters so that states stay small.
    accepted: Function[int, int]
    invoked: Function[int, int]  # the acceptance position of the last item invoked
    discarded: Function[int, int]


# Worker program counters: idle -> took -> drain -> (decide) -> idle | owes -> idle
W_IDLE, W_TOOK, W_DRAIN, W_DECIDE, W_OWES = "idle", "took", "drain", "decide", "owes"
# Producer program counters: idle -> admitted -> idle | owes -> idle
P_IDLE, P_ADMITTED, P_OWES = "idle", "admitted", "owes"
# Stop call program counters: idle -> active -> done | idle -> done
S_IDLE, S_ACTIVE = "idle", "active"


# ============================================================================ helpers (TLA+ operators)


def Discarding(s: Vars) -> bool:
    """Stop(discard) has begun (``StopBegin``, its logged ``stop_begin``): no drain may begin any
    more. Not while it only closes admission (``StopCall``, unlogged): the trace format says a
    Stop takes effect at its ``stop_begin``, so nothing of Stop(discard) may show before it."""
    return s.mode == "discard" and s.phase == STOPPING


def PostsInFlight(s: Vars) -> bool:
    return any(pc != P_IDLE for pc, _, _ in s.producer.values())


def WorkersIdle(s: Vars) -> bool:
    return all(w[0] == W_IDLE for w in s.worker.values())


def Reservations(s: Vars, lane: int) -> int:
    """How many reservations the lane has: work items queued, taken, being drained or owed."""
    held = s.ready.count(lane)
    held += sum(1 for pc, at, _, _ in s.worker.values() if at == lane and pc != W_IDLE)
    held += sum(1 for pc, _, at in s.producer.values() if pc == P_OWES and at == lane)
    return held


def DrainOver(c: Constants, s: Vars, w: str) -> bool:
    """The drain has stopped popping: the budget is spent or a pop found the lane empty."""
    pc, _, n, hand = s.worker[w]
    return pc == W_DECIDE or (pc == W_DRAIN and hand is None and n >= c.max_per_drain)


def EndingDrain(c: Constants, s: Vars, w: str) -> tuple[int, int] | None:
    """Worker ``w``'s drain is over (``DrainOver``): (its lane, the items it invoked); else None."""
    if not DrainOver(c, s, w):
        return None
    _, lane, n, _ = s.worker[w]
    assert lane is not None
    return lane, n


def StopAt(s: Vars, t: str, mode: str) -> bool:
    """Stop call ``t`` is the active one and every post in flight has settled, in Stop(``mode``)."""
    return s.stopper[t] == S_ACTIVE and s.phase == STOPPING and s.mode == mode


def ProducerAt(s: Vars, p: str, pc: str) -> tuple[int, int] | None:
    """Producer ``p`` is at ``pc`` on a lane: (its next post's number, that lane)."""
    at, k, lane = s.producer[p]
    if at != pc:
        return None
    assert lane is not None
    return k, lane


def WorkerAt(s: Vars, w: str, pc: str) -> int | None:
    """Worker ``w`` is at ``pc``: the lane it holds."""
    at, lane, _, _ = s.worker[w]
    if at != pc:
        return None
    assert lane is not None
    return lane


def AdmittedPost(c: Constants, s: Vars, p: str) -> tuple[int, int, Item] | None:
    """The post ``p`` has in flight past the stop-state check: (its number, its lane, its item)."""
    post = PostAt(c, s, p, P_ADMITTED)
    if post is None:
        return None
    k, lane, item = post
    assert lane is not None
    return k, lane, item


def PostWithRoom(c: Constants, s: Vars, p: str) -> tuple[int, int, Item] | None:
    """``AdmittedPost``, when its lane's queue has room for the item."""
    post = AdmittedPost(c, s, p)
    return None if post is None or len(s.queue[post[1]]) >= c.lane_capacity else post


def Published(s: Vars, lane: int, item: Item) -> Vars:
    """The item appended to its lane's queue, numbered by the lane's accepted count."""
    position = s.accepted[lane] + 1
    return s._replace(
        queue=s.queue.except_(lane, (*s.queue[lane], (position, item))),
        accepted=s.accepted.except_(lane, position),
    )


# ============================================================ INVARIANTS (registered by spec.work_lane)


def NoLostWakeup(c: Constants, s: Vars) -> str | None:
    """A lane that holds items has a reservation: someone will drain it."""
    if Discarding(s):
        return None  # Stop(discard) will drop what is left; nobody needs to drain it
    for lane in Lanes(c):
        if s.queue[lane] and Reservations(s, lane) == 0:
            items = ", ".join(item for _, item in s.queue[lane])
            return (
                f"lane {lane} holds {items} but is {s.status[lane]} with no reservation: nobody will run it"
            )
    return None


def OneReservationPerLane(c: Constants, s: Vars) -> str | None:
    """A post to a Scheduled lane never creates a second reservation."""
    for lane in Lanes(c):
        if Reservations(s, lane) > 1:
            return f"lane {lane} has {Reservations(s, lane)} reservations (ready queue {list(s.ready)})"
    return None


def Drains(pc: str) -> bool:
    """A worker at ``pc`` is its lane's consumer: it took the lane Draining and has not let it go."""
    return pc not in (W_IDLE, W_TOOK, W_OWES)


def OneDrainerPerLane(c: Constants, s: Vars, drains: Callable[[str], bool] = Drains) -> str | None:
    """Callbacks of one lane never overlap: at most one worker drains it, and only while it is Draining."""
    for lane in Lanes(c):
        drainers = [w for w, (pc, at, _, _) in s.worker.items() if at == lane and drains(pc)]
        if len(drainers) > 1:
            return f"lane {lane} is drained by {' and '.join(drainers)} at once"
        if drainers and s.status[lane] != DRAINING:
            return f"{drainers[0]} drains lane {lane} while it is {s.status[lane]}"
        if not drainers and s.status[lane] == DRAINING:
            return f"lane {lane} is Draining but no worker drains it"
    return None


def ReadyQueueBounded(c: Constants, s: Vars) -> str | None:
    """A submission never finds the ready queue full."""
    if len(s.ready) > c.ready_capacity:
        held = len(s.ready)
        return f"the ready queue holds {held} work items, capacity {c.ready_capacity}: a submission failed"
    return None


def Conservation(c: Constants, s: Vars) -> str | None:
    """Accepted = invoked + queued + popped-not-yet-invoked + discarded, per lane."""
    for lane in Lanes(c):
        in_hand = sum(1 for _, at, _, hand in s.worker.values() if at == lane and hand is not None)
        done = s.invoked[lane] + len(s.queue[lane]) + in_hand + s.discarded[lane]
        if s.accepted[lane] != done:
            return (
                f"lane {lane}: {s.accepted[lane]} accepted but {done} invoked, queued, in hand or discarded"
            )
    return None


def PerLaneFifo(c: Constants, s: Vars) -> str | None:
    """A lane's items run in acceptance order, each once: what is left is the next run of positions."""
    for lane in Lanes(c):
        hands = [hand for _, at, _, hand in s.worker.values() if at == lane and hand is not None]
        pending = [position for position, _ in (*hands, *s.queue[lane])]
        expected = list(range(s.invoked[lane] + 1, s.invoked[lane] + 1 + len(pending)))
        if s.discarded[lane] == 0 and pending != expected:
            return f"lane {lane}: after item #{s.invoked[lane]} the next items are #{pending}, not {expected}"
    return None


def BudgetRespected(c: Constants, s: Vars) -> str | None:
    """A drain invokes at most max_per_drain items."""
    for w, (_, lane, n, _) in s.worker.items():
        if n > c.max_per_drain:
            return f"{w} invoked {n} items of lane {lane} in one drain, budget {c.max_per_drain}"
    return None


def StoppedMeansQuiet(c: Constants, s: Vars) -> str | None:
    """After Stop returns nothing is queued, reserved or running: every accepted item ran or was dropped."""
    if s.phase != STOPPED:
        return None
    for lane in Lanes(c):
        if s.queue[lane]:
            items = ", ".join(item for _, item in s.queue[lane])
            return f"the scheduler stopped with {items} still queued on lane {lane}: it will never run"
    if s.ready:
        return f"the scheduler stopped with work items {list(s.ready)} in the ready queue"
    return None


# ============================================================================ how a person reads a state


def Show(c: Constants, s: Vars) -> dict[str, object]:
    return {
        # Over the state's own lanes, not Lanes(c): a trace's words show its lane numbers.
        "queue": {lane: [item for _, item in queue] for lane, queue in s.queue.items()},
        "status": s.status.as_dict(),
        "ready": list(s.ready),
        "producer": {
            p: f"{pc}#{k}" + (f"->lane {lane}" if lane is not None else "")
            for p, (pc, k, lane) in s.producer.items()
        },
        "worker": {
            w: pc if lane is None else f"{pc} lane {lane} n={n}" + (f" holding {hand[1]}" if hand else "")
            for w, (pc, lane, n, hand) in s.worker.items()
        },
        "stopper": s.stopper.as_dict(),
        "phase": s.phase if s.mode is None else f"{s.phase}({s.mode})",
        "invoked": s.invoked.as_dict(),
        "discarded": s.discarded.as_dict(),
    }
