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

# ruff: noqa: F405  (names from the state module this one EXTENDS)
from __future__ import annotations

from spec.language import WF, Emitted, EventuallyAlways, Function, LeadsTo, SpecBuilder, at_least_one, emit

# EXTENDS work_lane_state: its constants, variables, operators and invariants are this module's too.
from spec.work_lane_state import *  # noqa: F403

WorkLane = SpecBuilder("work-lane", __doc__ or "")

# ======================================================================= ASSUME (constants: work_lane_state)


@WorkLane.assume
def ReadyQueueHoldsEveryLane(c: Constants) -> str | None:
    """Each lane has at most one reservation, so a ready queue as long as the lane count never fills."""
    if c.ready_capacity < c.lanes:
        return f"ready_capacity {c.ready_capacity} < lanes {c.lanes}: a submission could find it full"
    return None


@WorkLane.assume
def PositiveSizes(c: Constants) -> str | None:
    """Creation refuses zero workers, capacities or budget; so does the model."""
    return at_least_one(c, "lanes", "workers", "lane_capacity", "max_per_drain", "ready_capacity")


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


# ============================================================================ ACTIONS: producers


def PostReturns(s: Vars, p: str, k: int, lane: int | None, item: Item, result: str) -> Emitted[Vars]:
    """TryPost returns ``result`` with no reservation taken: the producer goes on to its next post."""
    return emit(
        s._replace(producer=s.producer.except_(p, (P_IDLE, k + 1, None))),
        lane=lane,
        item=item,
        result=result,
        submit=False,
    )


@WorkLane.action(Producers, event="post", at=P_IDLE)
def PostInvalidHandle(c: Constants, s: Vars, p: str) -> object:
    """TryPost with a handle that is not a lane of this scheduler: refused, nothing changes."""
    post = PostAt(c, s, p, P_IDLE)
    if post is None or post[1] is not None:
        return None
    return PostReturns(s, p, post[0], None, post[2], "invalid_argument")


@WorkLane.action(Producers, at=P_IDLE)
def Admit(c: Constants, s: Vars, p: str) -> object:
    """The stop-state check passes: the post is now in flight and Stop must wait for it."""
    post = PostAt(c, s, p, P_IDLE)
    if post is None or post[1] is None or s.phase != RUNNING:
        return None
    return s._replace(producer=s.producer.except_(p, (P_ADMITTED, post[0], None)))


@WorkLane.action(Producers, event="post", at=P_IDLE)
def PostRefused(c: Constants, s: Vars, p: str) -> object:
    """The stop-state check fails: Stop has begun, so the post is INVALID_STATE."""
    post = PostAt(c, s, p, P_IDLE)
    if post is None or post[1] is None or s.phase == RUNNING:
        return None
    return PostReturns(s, p, *post, "invalid_state")


@WorkLane.action(Producers, event="post", at=P_ADMITTED)
def PostFull(c: Constants, s: Vars, p: str) -> object:
    """Under the lane mutex: the lane is full; the item stays with the caller."""
    post = AdmittedPost(c, s, p)
    if post is None or len(s.queue[post[1]]) < c.lane_capacity:
        return None
    return PostReturns(s, p, *post, "capacity_exceeded")


@WorkLane.action(Producers, event="post", at=P_ADMITTED)
def PostAccepted(c: Constants, s: Vars, p: str) -> object:
    """Under the lane mutex: publish the item and, if the lane was Idle, take its one reservation."""
    post = PostWithRoom(c, s, p)
    return None if post is None else Accepted(s, p, post, reserve=s.status[post[1]] == IDLE)


def Accepted(s: Vars, p: str, post: tuple[int, int, Item], reserve: bool) -> Emitted[Vars]:
    """TryPost returns ok, the item published; ``reserve``: it took the lane's reservation, so the
    producer owes the lane's submission."""
    k, lane, item = post
    return emit(
        Published(s, lane, item)._replace(
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
    owes = ProducerAt(s, p, P_OWES)
    if owes is None:
        return None
    k, lane = owes
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
    lane = WorkerAt(s, w, W_TOOK)
    if lane is None or Discarding(s):
        return None
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


def Popping(c: Constants, s: Vars, w: str) -> tuple[int, int] | None:
    """The drainer holds no popped item and has budget left: (its lane, items invoked so far)."""
    pc, lane, n, hand = s.worker[w]
    if pc != W_DRAIN or hand is not None or n >= c.max_per_drain:
        return None
    assert lane is not None
    return lane, n


@WorkLane.action(Workers, at=W_DRAIN)
def Pop(c: Constants, s: Vars, w: str) -> Vars | None:
    """Without the lane mutex: the drainer pops the lane's oldest item (budget permitting)."""
    drain = Popping(c, s, w)
    if drain is None or not s.queue[drain[0]]:
        return None
    lane, n = drain
    queue = s.queue[lane]
    return s._replace(
        queue=s.queue.except_(lane, queue[1:]), worker=s.worker.except_(w, (W_DRAIN, lane, n, queue[0]))
    )


@WorkLane.action(Workers, at=W_DRAIN)
def PopEmpty(c: Constants, s: Vars, w: str) -> Vars | None:
    """The pop finds the lane empty: the drain stops popping and goes to its end-of-drain decision."""
    drain = Popping(c, s, w)
    if drain is None or s.queue[drain[0]]:
        return None
    return s._replace(worker=s.worker.except_(w, (W_DECIDE, *drain, None)))


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


def DrainEnd(c: Constants, s: Vars, w: str, outcome: str) -> object:
    """Under the lane mutex, once the drain is over: Idle if the lane is empty, else resubmitted."""
    ending = EndingDrain(c, s, w)
    if ending is None:
        return None
    lane, n = ending
    if bool(s.queue[lane]) != (outcome == "resubmit"):
        return None
    status, worker = (
        (IDLE, (W_IDLE, None, 0, None)) if outcome == "idle" else (SCHEDULED, (W_OWES, lane, 0, None))
    )
    return emit(
        s._replace(status=s.status.except_(lane, status), worker=s.worker.except_(w, worker)),
        lane=lane,
        outcome=outcome,
        invoked=n,
    )


@WorkLane.action(Workers, event="drain_end", at=(W_DRAIN, W_DECIDE))
def DrainEndIdle(c: Constants, s: Vars, w: str) -> object:
    """Under the lane mutex: the lane is empty, so it goes Idle (the next post will reserve it)."""
    return DrainEnd(c, s, w, "idle")


@WorkLane.action(Workers, event="drain_end", at=(W_DRAIN, W_DECIDE))
def DrainEndResubmit(c: Constants, s: Vars, w: str) -> object:
    """Under the lane mutex: items are left, so the lane keeps its reservation and goes to the back."""
    return DrainEnd(c, s, w, "resubmit")


@WorkLane.action(Workers, event="submit", at=W_OWES)
def WorkerSubmit(c: Constants, s: Vars, w: str) -> object:
    """Outside the lane mutex: the worker puts the lane's work item at the back of the ready queue."""
    lane = WorkerAt(s, w, W_OWES)
    if lane is None:
        return None
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
    if s.stopper[t] != S_IDLE or s.phase != RUNNING:
        return None
    return s._replace(stopper=s.stopper.except_(t, S_ACTIVE), phase=CLOSING, mode=c.mode_of(t))


@WorkLane.action(Stoppers, event="stop_rejected", at=S_IDLE)
def StopWhileStopping(c: Constants, s: Vars, t: str) -> object:
    """A second Stop while one is in progress: refused."""
    if s.stopper[t] != S_IDLE or s.phase not in (CLOSING, STOPPING):
        return None
    return emit(
        s._replace(stopper=s.stopper.except_(t, "done")), mode=c.mode_of(t), reason="stop_in_progress"
    )


@WorkLane.action(Stoppers, at=S_IDLE)
def StopWhenStopped(c: Constants, s: Vars, t: str) -> object:
    """Stop on a stopped scheduler: SUCCESS at once, and nothing to log."""
    if s.stopper[t] != S_IDLE or s.phase != STOPPED:
        return None
    return s._replace(stopper=s.stopper.except_(t, "done"))


@WorkLane.action(Stoppers, event="stop_begin", at=S_ACTIVE)
def StopBegin(c: Constants, s: Vars, t: str) -> object:
    """Every post in flight has settled: from here on, no post can be accepted."""
    if s.stopper[t] != S_ACTIVE or s.phase != CLOSING or PostsInFlight(s):
        return None
    return emit(s._replace(phase=STOPPING), mode=s.mode)


@WorkLane.action(Stoppers, event="stop_end", at=S_ACTIVE)
def StopEndDrain(c: Constants, s: Vars, t: str) -> object:
    """Stop(drain) returns once every accepted item ran and every lane is Idle; workers are joined."""
    if not StopAt(s, t, "drain"):
        return None
    if s.ready or not WorkersIdle(s) or any(st != IDLE for st in s.status.values()):
        return None
    if any(s.queue[lane] for lane in Lanes(c)):
        return None
    return emit(s._replace(phase=STOPPED, stopper=s.stopper.except_(t, "done")), mode="drain", result="ok")


@WorkLane.action(Stoppers, Lanes, event="discard", at=S_ACTIVE)
def DiscardLane(c: Constants, s: Vars, t: str, lane: int) -> object:
    """Stop(discard), once no drain is in flight: the lane's queued items are dropped and reported."""
    if not StopAt(s, t, "discard") or not WorkersIdle(s):
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
    if not StopAt(s, t, "discard") or not WorkersIdle(s):
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
# The state predicates of spec.work_lane_state, checked in every reachable state.

# No reads= on NoLostWakeup: its verdict depends on most of the state, which rarely repeats, so
# remembering it would cost the explorer more than evaluating it.
WorkLane.invariant(NoLostWakeup)
WorkLane.invariant(reads=("ready", "worker", "producer"))(OneReservationPerLane)
WorkLane.invariant(reads=("worker", "status"))(OneDrainerPerLane)


def CommonInvariants(spec: SpecBuilder) -> None:
    """The invariants the lock-free lane checks as they are here (it has its own of those above:
    its lane word changes what a reservation and a drainer are)."""
    spec.invariant(reads=("ready",))(ReadyQueueBounded)
    spec.invariant(reads=("worker", "invoked", "queue", "discarded", "accepted"))(Conservation)
    spec.invariant(reads=("worker", "queue", "invoked", "discarded"))(PerLaneFifo)
    spec.invariant(reads=("worker",))(BudgetRespected)
    spec.invariant(reads=("phase", "queue", "ready"))(StoppedMeansQuiet)


CommonInvariants(WorkLane)


# ============================================================================ FAIRNESS & LIVENESS

# Every thread that can take a step eventually does: workers are not starved by
# the OS, a producer finishes its TryPost, a Stop call keeps waiting.
WorkLane.fairness(WF(Workers), WF(Producers), WF(Stoppers))


def AllSettled(c: Constants, s: Vars) -> bool:
    return all(s.accepted[lane] == s.invoked[lane] + s.discarded[lane] for lane in Lanes(c))


EveryAcceptedItemSettles = EventuallyAlways(
    "EveryAcceptedItemSettles",
    AllSettled,
    "every accepted item is eventually invoked or discarded (no item waits forever)",
)
EveryStopReturns = LeadsTo(
    "EveryStopReturns",
    lambda c, s: s.phase in (CLOSING, STOPPING),
    lambda c, s: s.phase == STOPPED,
    "a Stop that took effect eventually returns",
)
WorkLane.property(EveryAcceptedItemSettles)
WorkLane.property(EveryStopReturns)


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


# How a person reads a state (counterexamples): see spec.work_lane_state.Show.
WorkLane.describe(Show)


SPEC = WorkLane.spec
