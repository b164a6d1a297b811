"""MODULE WorkLane — the ToolKit's Work Lane scheduler (seeds.md, design 000).

Producers post items to lanes; a lane is a bounded queue plus a status
Idle | Scheduled | Draining kept under the lane's mutex; a lane that has work
holds exactly one *reservation*: a drain work item in the pool's bounded FIFO
ready queue, or the duty of some thread to put one there. Workers take work
items, drain up to ``max_per_drain`` items without the mutex, and decide under
the mutex whether the lane goes Idle or is resubmitted. Stop(drain) finishes
what was accepted; Stop(discard) drops what is queued.

Each action below is one critical section (or one lock-free step) of the real
code, so a lost wakeup that needs two threads to interleave *inside* the
algorithm is reachable here. Actions that an implementation logs carry the
event name of ``shared/design/trace-format.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from spec.language import WF, EventuallyAlways, Function, LeadsTo, SpecBuilder, emit

# ============================================================================ CONSTANTS

IDLE, SCHEDULED, DRAINING = "Idle", "Scheduled", "Draining"
RUNNING, CLOSING, STOPPING, STOPPED = "Running", "Closing", "Stopping", "Stopped"

Item = str
Queued = tuple[int, Item]  # (position in the lane's acceptance order, item)


@dataclass(frozen=True)
class Constants:
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

    # The process sets and what each process does. A trace validator overrides these
    # to bind the spec's processes to a trace's threads and posts.
    def producer_names(self) -> tuple[str, ...]:
        return tuple(f"p{i}" for i in range(len(self.script)))

    def worker_names(self) -> tuple[str, ...]:
        return tuple(f"w{i}" for i in range(self.workers))

    def stopper_names(self) -> tuple[str, ...]:
        return tuple(f"s{i}" for i in range(len(self.stops)))

    def post_of(self, producer: str, k: int) -> tuple[int | None, Item] | None:
        """The k-th post of ``producer``: (lane, item), or None when its script is done."""
        lanes = self.script[int(producer[1:])]
        if k >= len(lanes):
            return None
        return lanes[k], f"{producer}.{k}"

    def mode_of(self, stopper: str) -> str:
        return self.stops[int(stopper[1:])]

    def header(self) -> dict[str, int]:
        """The ``config`` object of a trace header for this model."""
        return {
            "lanes": self.lanes,
            "workers": self.workers,
            "lane_capacity": self.lane_capacity,
            "max_per_drain": self.max_per_drain,
            "ready_capacity": self.ready_capacity,
        }


def Lanes(c: Constants) -> tuple[int, ...]:
    return tuple(range(c.lanes))


def Producers(c: Constants) -> tuple[str, ...]:
    return c.producer_names()


def Workers(c: Constants) -> tuple[str, ...]:
    return c.worker_names()


def Stoppers(c: Constants) -> tuple[str, ...]:
    return c.stopper_names()


def Modes(c: Constants) -> tuple[str, ...]:
    return ("drain", "discard")


WorkLane = SpecBuilder("work-lane", __doc__ or "")


@WorkLane.assume
def ReadyQueueHoldsEveryLane(c: Constants) -> str | None:
    """Each lane has at most one reservation, so a ready queue as long as the lane count never fills."""
    if c.ready_capacity < c.lanes:
        return f"ready_capacity {c.ready_capacity} < lanes {c.lanes}: a submission could find it full"
    return None


@WorkLane.assume
def PositiveSizes(c: Constants) -> str | None:
    """Creation refuses zero workers, capacities or budget; so does the model."""
    for name in ("lanes", "workers", "lane_capacity", "max_per_drain", "ready_capacity"):
        if getattr(c, name) < 1:
            return f"{name} must be at least 1"
    return None


# ============================================================================ VARIABLES


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


# Where each process is in its program: each action below names the counters it can
# fire from (``at=``), which its guard also checks; the explorer skips it elsewhere.
@WorkLane.program_counter(Producers)
def ProducerPc(c: Constants, s: Vars, p: str) -> str:
    return s.producer[p][0]


@WorkLane.program_counter(Workers)
def WorkerPc(c: Constants, s: Vars, w: str) -> str:
    return s.worker[w][0]


@WorkLane.program_counter(Stoppers)
def StopperPc(c: Constants, s: Vars, t: str) -> str:
    return s.stopper[t]


# ============================================================================ INIT


@WorkLane.init
def Init(c: Constants) -> list[Vars]:
    lanes = Lanes(c)
    return [
        Vars(
            queue=Function.const(lanes, ()),
            status=Function.const(lanes, IDLE),
            ready=(),
            producer=Function.const(Producers(c), (P_IDLE, 0, None)),
            worker=Function.const(Workers(c), (W_IDLE, None, 0, None)),
            stopper=Function.const(Stoppers(c), "idle"),
            phase=RUNNING,
            mode=None,
            accepted=Function.const(lanes, 0),
            invoked=Function.const(lanes, 0),
            discarded=Function.const(lanes, 0),
        )
    ]


# ============================================================================ helpers (TLA+ operators)


def Discarding(s: Vars) -> bool:
    """Stop(discard) has closed admission: no drain may begin any more."""
    return s.mode == "discard" and s.phase in (CLOSING, STOPPING)


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


# ============================================================================ ACTIONS: producers


@WorkLane.action(Producers, event="post", at=P_IDLE)
def PostInvalidHandle(c: Constants, s: Vars, p: str) -> object:
    """TryPost with a handle that is not a lane of this scheduler: refused, nothing changes."""
    pc, k, _ = s.producer[p]
    post = c.post_of(p, k)
    if pc != P_IDLE or post is None or post[0] is not None:
        return None
    return emit(
        s._replace(producer=s.producer.except_(p, (P_IDLE, k + 1, None))),
        lane=None,
        item=post[1],
        result="invalid_argument",
        submit=False,
    )


@WorkLane.action(Producers, at=P_IDLE)
def Admit(c: Constants, s: Vars, p: str) -> object:
    """The stop-state check passes: the post is now in flight and Stop must wait for it."""
    pc, k, _ = s.producer[p]
    post = c.post_of(p, k)
    if pc != P_IDLE or post is None or post[0] is None or s.phase != RUNNING:
        return None
    return s._replace(producer=s.producer.except_(p, (P_ADMITTED, k, None)))


@WorkLane.action(Producers, event="post", at=P_IDLE)
def PostRefused(c: Constants, s: Vars, p: str) -> object:
    """The stop-state check fails: Stop has begun, so the post is INVALID_STATE."""
    pc, k, _ = s.producer[p]
    post = c.post_of(p, k)
    if pc != P_IDLE or post is None or post[0] is None or s.phase == RUNNING:
        return None
    return emit(
        s._replace(producer=s.producer.except_(p, (P_IDLE, k + 1, None))),
        lane=post[0],
        item=post[1],
        result="invalid_state",
        submit=False,
    )


@WorkLane.action(Producers, event="post", at=P_ADMITTED)
def PostFull(c: Constants, s: Vars, p: str) -> object:
    """Under the lane mutex: the lane is full; the item stays with the caller."""
    pc, k, _ = s.producer[p]
    post = c.post_of(p, k)
    if pc != P_ADMITTED or post is None:
        return None
    lane, item = post
    assert lane is not None
    if len(s.queue[lane]) < c.lane_capacity:
        return None
    return emit(
        s._replace(producer=s.producer.except_(p, (P_IDLE, k + 1, None))),
        lane=lane,
        item=item,
        result="capacity_exceeded",
        submit=False,
    )


@WorkLane.action(Producers, event="post", at=P_ADMITTED)
def PostAccepted(c: Constants, s: Vars, p: str) -> object:
    """Under the lane mutex: publish the item and, if the lane was Idle, take its one reservation."""
    pc, k, _ = s.producer[p]
    post = c.post_of(p, k)
    if pc != P_ADMITTED or post is None:
        return None
    lane, item = post
    assert lane is not None
    if len(s.queue[lane]) >= c.lane_capacity:
        return None
    position = s.accepted[lane] + 1
    reserve = s.status[lane] == IDLE
    return emit(
        s._replace(
            queue=s.queue.except_(lane, (*s.queue[lane], (position, item))),
            accepted=s.accepted.except_(lane, position),
            status=s.status.except_(lane, SCHEDULED) if reserve else s.status,
            producer=s.producer.except_(p, (P_OWES, k + 1, lane) if reserve else (P_IDLE, k + 1, None)),
        ),
        lane=lane,
        item=item,
        result="ok",
        submit=reserve,
    )


@WorkLane.action(Producers, event="submit", at=P_OWES)
def ProducerSubmit(c: Constants, s: Vars, p: str) -> object:
    """Outside the lane mutex: the producer that reserved the lane puts its work item in the ready queue."""
    pc, k, lane = s.producer[p]
    if pc != P_OWES:
        return None
    assert lane is not None
    return emit(
        s._replace(ready=(*s.ready, lane), producer=s.producer.except_(p, (P_IDLE, k, None))), lane=lane
    )


# ============================================================================ ACTIONS: workers


@WorkLane.action(Workers, event="take", at=W_IDLE)
def Take(c: Constants, s: Vars, w: str) -> object:
    """An idle worker removes the oldest work item from the ready queue (under the pool mutex)."""
    if s.worker[w][0] != W_IDLE or not s.ready or s.phase == STOPPED:
        return None
    lane = s.ready[0]
    return emit(s._replace(ready=s.ready[1:], worker=s.worker.except_(w, (W_TOOK, lane, 0, None))), lane=lane)


@WorkLane.action(Workers, event="drain_begin", at=W_TOOK)
def DrainBegin(c: Constants, s: Vars, w: str) -> object:
    """Under the lane mutex: Scheduled -> Draining; this worker is now the lane's only consumer."""
    pc, lane, _, _ = s.worker[w]
    if pc != W_TOOK or Discarding(s):
        return None
    assert lane is not None
    return emit(
        s._replace(
            status=s.status.except_(lane, DRAINING), worker=s.worker.except_(w, (W_DRAIN, lane, 0, None))
        ),
        lane=lane,
    )


@WorkLane.action(Workers, at=W_TOOK)
def GiveUpDrain(c: Constants, s: Vars, w: str) -> object:
    """Stop(discard) has begun: a worker that took a work item does not start draining it."""
    pc, _, _, _ = s.worker[w]
    if pc != W_TOOK or not Discarding(s):
        return None
    return s._replace(worker=s.worker.except_(w, (W_IDLE, None, 0, None)))


@WorkLane.action(Workers, at=W_DRAIN)
def Pop(c: Constants, s: Vars, w: str) -> object:
    """Without the lane mutex: the drainer pops the lane's oldest item (budget permitting)."""
    pc, lane, n, hand = s.worker[w]
    if pc != W_DRAIN or hand is not None or n >= c.max_per_drain:
        return None
    assert lane is not None
    queue = s.queue[lane]
    if not queue:
        return None
    return s._replace(
        queue=s.queue.except_(lane, queue[1:]), worker=s.worker.except_(w, (W_DRAIN, lane, n, queue[0]))
    )


@WorkLane.action(Workers, at=W_DRAIN)
def PopEmpty(c: Constants, s: Vars, w: str) -> object:
    """The pop finds the lane empty: the drain stops popping and goes to its end-of-drain decision."""
    pc, lane, n, hand = s.worker[w]
    if pc != W_DRAIN or hand is not None or n >= c.max_per_drain:
        return None
    assert lane is not None
    if s.queue[lane]:
        return None
    return s._replace(worker=s.worker.except_(w, (W_DECIDE, lane, n, None)))


@WorkLane.action(Workers, event="invoke", at=W_DRAIN)
def Invoke(c: Constants, s: Vars, w: str) -> object:
    """The drainer hands the popped item to the lane's invoke callback."""
    pc, lane, n, hand = s.worker[w]
    if pc != W_DRAIN or hand is None:
        return None
    assert lane is not None
    position, item = hand
    return emit(
        s._replace(
            invoked=s.invoked.except_(lane, position),
            worker=s.worker.except_(w, (W_DRAIN, lane, n + 1, None)),
        ),
        lane=lane,
        item=item,
    )


def DrainOver(c: Constants, s: Vars, w: str) -> bool:
    """The drain has stopped popping: the budget is spent or a pop found the lane empty."""
    pc, _, n, hand = s.worker[w]
    return pc == W_DECIDE or (pc == W_DRAIN and hand is None and n >= c.max_per_drain)


@WorkLane.action(Workers, event="drain_end", at=(W_DRAIN, W_DECIDE))
def DrainEndIdle(c: Constants, s: Vars, w: str) -> object:
    """Under the lane mutex: the lane is empty, so it goes Idle (the next post will reserve it)."""
    if not DrainOver(c, s, w):
        return None
    _, lane, n, _ = s.worker[w]
    assert lane is not None
    if s.queue[lane]:
        return None
    return emit(
        s._replace(status=s.status.except_(lane, IDLE), worker=s.worker.except_(w, (W_IDLE, None, 0, None))),
        lane=lane,
        outcome="idle",
        invoked=n,
    )


@WorkLane.action(Workers, event="drain_end", at=(W_DRAIN, W_DECIDE))
def DrainEndResubmit(c: Constants, s: Vars, w: str) -> object:
    """Under the lane mutex: items are left, so the lane keeps its reservation and goes to the back."""
    if not DrainOver(c, s, w):
        return None
    _, lane, n, _ = s.worker[w]
    assert lane is not None
    if not s.queue[lane]:
        return None
    return emit(
        s._replace(
            status=s.status.except_(lane, SCHEDULED), worker=s.worker.except_(w, (W_OWES, lane, 0, None))
        ),
        lane=lane,
        outcome="resubmit",
        invoked=n,
    )


@WorkLane.action(Workers, event="submit", at=W_OWES)
def WorkerSubmit(c: Constants, s: Vars, w: str) -> object:
    """Outside the lane mutex: the worker puts the lane's work item at the back of the ready queue."""
    pc, lane, _, _ = s.worker[w]
    if pc != W_OWES:
        return None
    assert lane is not None
    return emit(
        s._replace(ready=(*s.ready, lane), worker=s.worker.except_(w, (W_IDLE, None, 0, None))), lane=lane
    )


@WorkLane.action(Workers, Modes, event="stop_rejected", at=W_DRAIN)
def StopFromCallback(c: Constants, s: Vars, w: str, mode: str) -> object:
    """A callback calls Stop on its own scheduler: refused, since Stop would wait for that callback."""
    pc, _, n, hand = s.worker[w]
    if not c.callback_stop or pc != W_DRAIN or hand is not None or n == 0:
        return None
    return emit(s, mode=mode, reason="in_callback")


# ============================================================================ ACTIONS: Stop


@WorkLane.action(Stoppers, at=S_IDLE)
def StopCall(c: Constants, s: Vars, t: str) -> object:
    """Stop takes effect: admission closes, so every later TryPost is INVALID_STATE."""
    if s.stopper[t] != "idle" or s.phase != RUNNING:
        return None
    return s._replace(stopper=s.stopper.except_(t, "active"), phase=CLOSING, mode=c.mode_of(t))


@WorkLane.action(Stoppers, event="stop_rejected", at=S_IDLE)
def StopWhileStopping(c: Constants, s: Vars, t: str) -> object:
    """A second Stop while one is in progress: refused."""
    if s.stopper[t] != "idle" or s.phase not in (CLOSING, STOPPING):
        return None
    return emit(
        s._replace(stopper=s.stopper.except_(t, "done")), mode=c.mode_of(t), reason="stop_in_progress"
    )


@WorkLane.action(Stoppers, at=S_IDLE)
def StopWhenStopped(c: Constants, s: Vars, t: str) -> object:
    """Stop on a stopped scheduler: SUCCESS at once, and nothing to log."""
    if s.stopper[t] != "idle" or s.phase != STOPPED:
        return None
    return s._replace(stopper=s.stopper.except_(t, "done"))


@WorkLane.action(Stoppers, event="stop_begin", at=S_ACTIVE)
def StopBegin(c: Constants, s: Vars, t: str) -> object:
    """Every post in flight has settled: from here on, no post can be accepted."""
    if s.stopper[t] != "active" or s.phase != CLOSING or PostsInFlight(s):
        return None
    return emit(s._replace(phase=STOPPING), mode=s.mode)


@WorkLane.action(Stoppers, event="stop_end", at=S_ACTIVE)
def StopEndDrain(c: Constants, s: Vars, t: str) -> object:
    """Stop(drain) returns once every accepted item ran and every lane is Idle; workers are joined."""
    if s.stopper[t] != "active" or s.phase != STOPPING or s.mode != "drain":
        return None
    if s.ready or not WorkersIdle(s) or any(st != IDLE for st in s.status.values()):
        return None
    if any(s.queue[lane] for lane in Lanes(c)):
        return None
    return emit(s._replace(phase=STOPPED, stopper=s.stopper.except_(t, "done")), mode="drain", result="ok")


@WorkLane.action(Stoppers, Lanes, event="discard", at=S_ACTIVE)
def DiscardLane(c: Constants, s: Vars, t: str, lane: int) -> object:
    """Stop(discard), once no drain is in flight: the lane's queued items are dropped and reported."""
    if s.stopper[t] != "active" or s.phase != STOPPING or s.mode != "discard" or not WorkersIdle(s):
        return None
    queue = s.queue[lane]
    if not queue:
        return None
    return emit(
        s._replace(
            queue=s.queue.except_(lane, ()),
            discarded=s.discarded.except_(lane, s.discarded[lane] + len(queue)),
        ),
        lane=lane,
        items=[item for _, item in queue],
    )


@WorkLane.action(Stoppers, event="stop_end", at=S_ACTIVE)
def StopEndDiscard(c: Constants, s: Vars, t: str) -> object:
    """Stop(discard) returns once every queued item is dropped; reservations are cleared, workers joined."""
    if s.stopper[t] != "active" or s.phase != STOPPING or s.mode != "discard" or not WorkersIdle(s):
        return None
    if any(s.queue[lane] for lane in Lanes(c)):
        return None
    return emit(
        s._replace(
            phase=STOPPED,
            ready=(),
            status=Function.const(Lanes(c), IDLE),
            stopper=s.stopper.except_(t, "done"),
        ),
        mode="discard",
        result="ok",
    )


# ============================================================================ INVARIANTS


# No reads= here: the verdict depends on most of the state, which rarely repeats, so
# remembering it would cost the explorer more than evaluating it.
@WorkLane.invariant
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


@WorkLane.invariant(reads=("ready", "worker", "producer"))
def OneReservationPerLane(c: Constants, s: Vars) -> str | None:
    """A post to a Scheduled lane never creates a second reservation."""
    for lane in Lanes(c):
        if Reservations(s, lane) > 1:
            return f"lane {lane} has {Reservations(s, lane)} reservations (ready queue {list(s.ready)})"
    return None


@WorkLane.invariant(reads=("worker", "status"))
def OneDrainerPerLane(c: Constants, s: Vars) -> str | None:
    """Callbacks of one lane never overlap: at most one worker drains it, and only while it is Draining."""
    for lane in Lanes(c):
        drainers = [
            w for w, (pc, at, _, _) in s.worker.items() if at == lane and pc not in (W_IDLE, W_TOOK, W_OWES)
        ]
        if len(drainers) > 1:
            return f"lane {lane} is drained by {' and '.join(drainers)} at once"
        if drainers and s.status[lane] != DRAINING:
            return f"{drainers[0]} drains lane {lane} while it is {s.status[lane]}"
        if not drainers and s.status[lane] == DRAINING:
            return f"lane {lane} is Draining but no worker drains it"
    return None


@WorkLane.invariant(reads=("ready",))
def ReadyQueueBounded(c: Constants, s: Vars) -> str | None:
    """A submission never finds the ready queue full."""
    if len(s.ready) > c.ready_capacity:
        held = len(s.ready)
        return f"the ready queue holds {held} work items, capacity {c.ready_capacity}: a submission failed"
    return None


@WorkLane.invariant(reads=("worker", "invoked", "queue", "discarded", "accepted"))
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


@WorkLane.invariant(reads=("worker", "queue", "invoked", "discarded"))
def PerLaneFifo(c: Constants, s: Vars) -> str | None:
    """A lane's items run in acceptance order, each once: what is left is the next run of positions."""
    for lane in Lanes(c):
        hands = [hand for _, at, _, hand in s.worker.values() if at == lane and hand is not None]
        pending = [position for position, _ in (*hands, *s.queue[lane])]
        expected = list(range(s.invoked[lane] + 1, s.invoked[lane] + 1 + len(pending)))
        if s.discarded[lane] == 0 and pending != expected:
            return f"lane {lane}: after item #{s.invoked[lane]} the next items are #{pending}, not {expected}"
    return None


@WorkLane.invariant(reads=("worker",))
def BudgetRespected(c: Constants, s: Vars) -> str | None:
    """A drain invokes at most max_per_drain items."""
    for w, (_, lane, n, _) in s.worker.items():
        if n > c.max_per_drain:
            return f"{w} invoked {n} items of lane {lane} in one drain, budget {c.max_per_drain}"
    return None


@WorkLane.invariant(reads=("phase", "queue", "ready"))
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


# ============================================================================ FAIRNESS & LIVENESS

# Every thread that can take a step eventually does: workers are not starved by
# the OS, a producer finishes its TryPost, a Stop call keeps waiting.
WorkLane.fairness(WF(Workers), WF(Producers), WF(Stoppers))


def AllSettled(c: Constants, s: Vars) -> bool:
    return all(s.accepted[lane] == s.invoked[lane] + s.discarded[lane] for lane in Lanes(c))


WorkLane.property(
    EventuallyAlways(
        "EveryAcceptedItemSettles",
        AllSettled,
        "every accepted item is eventually invoked or discarded (no item waits forever)",
    )
)
WorkLane.property(
    LeadsTo(
        "EveryStopReturns",
        lambda c, s: s.phase in (CLOSING, STOPPING),
        lambda c, s: s.phase == STOPPED,
        "a Stop that took effect eventually returns",
    )
)


# ============================================================================ SYMMETRY & DONE


@WorkLane.symmetry
def WorkersAreInterchangeable(c: Constants, s: Vars) -> Vars:
    """No state refers to a worker by name, so worker local states can be sorted."""
    return s._replace(worker=s.worker.with_values(sorted(s.worker.values(), key=_worker_key)))


def _worker_key(w: tuple[str, int | None, int, Queued | None]) -> tuple[object, ...]:
    pc, lane, n, hand = w
    return (pc, -1 if lane is None else lane, n, (-1, "") if hand is None else hand)


@WorkLane.terminal
def Done(c: Constants, s: Vars) -> bool:
    """Every producer and Stop call has finished, and the scheduler is stopped or idle with nothing queued."""
    producers_done = all(pc == P_IDLE and c.post_of(p, k) is None for p, (pc, k, _) in s.producer.items())
    stoppers_done = all(pc == "done" for pc in s.stopper.values())
    if not (producers_done and stoppers_done and WorkersIdle(s)):
        return False
    if s.phase == STOPPED:
        return True
    return not s.ready and all(st == IDLE for st in s.status.values())


@WorkLane.describe
def Show(c: Constants, s: Vars) -> dict[str, object]:
    return {
        "queue": {lane: [item for _, item in s.queue[lane]] for lane in Lanes(c)},
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


SPEC = WorkLane.spec
