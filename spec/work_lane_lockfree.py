"""MODULE WorkLaneLockFree — the ToolKit's current, lock-free Work Lane (seeds.md, "Beyond the seed").

The lane of ``spec.work_lane`` without its mutex: the lane state Idle | Scheduled | Draining
is one atomic word changed only by CAS, and the lane queue is a lock-free bounded MPMC queue
whose push and pop are linearizable. The worker pool (a bounded FIFO ready queue of drain
work items), the drain budget and Stop are those of the lock-based spec.

* A post is two atomic steps: **push** the item, then **CAS Idle -> Scheduled**; the thread
  whose CAS wins submits the lane's work item.
* The end of a drain is three: **CAS Draining -> Idle**, **re-check** the queue, and, if it
  holds items, **CAS Idle -> Scheduled**; the winner resubmits.

Each action is one atomic step, so every interleaving between them is explored: a drainer
can pop and run an item between its producer's push and CAS (the producer then schedules a
lane that may be empty), and a producer's CAS can win the lane from a drainer that re-checks.
Actions carry the v1 event of ``shared/design/trace-format.md`` where one applies
(``take``, ``drain_begin``, ``invoke``, ``submit``, ``stop_*``, ``discard``, and ``post`` for a
post refused at once or at a full queue) and a per-atomic-step name otherwise (``push``,
``pop``, ``cas``, ``recheck``, ``submit_refused``). docs/work-lane-lockfree.md compares the two.
"""

# ruff: noqa: F405  (names from the state module this one EXTENDS)
from __future__ import annotations

from spec.language import WF, EventuallyAlways, Function, LeadsTo, SpecBuilder, emit

# EXTENDS work_lane_lockfree_state (which EXTENDS work_lane_state).
from spec.work_lane_lockfree_state import *  # noqa: F403

WorkLaneLockFree = SpecBuilder("work-lane-lockfree", __doc__ or "")

# ============================================================================ ASSUME


@WorkLaneLockFree.assume
def ReadyQueueHoldsEveryLane(c: Constants) -> str | None:
    """Each lane has at most one reservation, so a ready queue as long as the lane count never fills."""
    if c.ready_capacity < c.lanes:
        return f"ready_capacity {c.ready_capacity} < lanes {c.lanes}: a submission could find it full"
    return None


@WorkLaneLockFree.assume
def PositiveSizes(c: Constants) -> str | None:
    """Creation refuses zero workers, capacities or budget; so does the model."""
    for name in ("lanes", "workers", "lane_capacity", "max_per_drain", "ready_capacity"):
        if getattr(c, name) < 1:
            return f"{name} must be at least 1"
    return None


@WorkLaneLockFree.program_counter(Producers)
def ProducerPc(c: Constants, s: Vars, p: str) -> str:
    return s.producer[p][0]


@WorkLaneLockFree.program_counter(Workers)
def WorkerPc(c: Constants, s: Vars, w: str) -> str:
    return s.worker[w][0]


@WorkLaneLockFree.program_counter(Stoppers)
def StopperPc(c: Constants, s: Vars, t: str) -> str:
    return s.stopper[t]


# ============================================================================ INIT


@WorkLaneLockFree.init
def Init(c: Constants) -> list[Vars]:
    lanes = Lanes(c)
    return [
        Vars(
            queue=Function.const(lanes, ()),
            status=Function.const(lanes, IDLE),
            ready=(),
            producer=Function.const(Producers(c), (P_IDLE, 0, None)),
            worker=Function.const(Workers(c), (W_IDLE, None, 0, None)),
            stopper=Function.const(Stoppers(c), S_IDLE),
            phase=RUNNING,
            mode=None,
            accepted=Function.const(lanes, 0),
            invoked=Function.const(lanes, 0),
            discarded=Function.const(lanes, 0),
        )
    ]


# ============================================================================ ACTIONS: producers


@WorkLaneLockFree.action(Producers, event="post", at=P_IDLE)
def PostInvalidHandle(c: Constants, s: Vars, p: str) -> object:
    """TryPost with a handle that is not a lane of this scheduler: refused, nothing changes."""
    post = PostAt(c, s, p, P_IDLE)
    if post is None or post[1] is not None:
        return None
    return PostReturns(s, p, post[0], None, post[2], "invalid_argument")


@WorkLaneLockFree.action(Producers, at=P_IDLE)
def Admit(c: Constants, s: Vars, p: str) -> object:
    """The stop-state check passes: the post is now in flight and Stop must wait for it."""
    post = PostAt(c, s, p, P_IDLE)
    if post is None or post[1] is None or s.phase != RUNNING:
        return None
    return s._replace(producer=s.producer.except_(p, (P_ADMITTED, post[0], None)))


@WorkLaneLockFree.action(Producers, event="post", at=P_IDLE)
def PostRefused(c: Constants, s: Vars, p: str) -> object:
    """The stop-state check fails: Stop has begun, so the post is INVALID_STATE."""
    post = PostAt(c, s, p, P_IDLE)
    if post is None or post[1] is None or s.phase == RUNNING:
        return None
    return PostReturns(s, p, *post, "invalid_state")


@WorkLaneLockFree.action(Producers, event="post", at=P_ADMITTED)
def PushFull(c: Constants, s: Vars, p: str) -> object:
    """The push finds the queue full: CAPACITY_EXCEEDED, the item stays with the caller."""
    post = PostAt(c, s, p, P_ADMITTED)
    if post is None:
        return None
    lane = post[1]
    assert lane is not None
    if len(s.queue[lane]) < c.lane_capacity:
        return None
    return PostReturns(s, p, *post, "capacity_exceeded")


@WorkLaneLockFree.action(Producers, event="push", at=P_ADMITTED)
def Push(c: Constants, s: Vars, p: str) -> object:
    """The push succeeds: the item is accepted and visible to a drainer, the lane word untouched."""
    post = PostAt(c, s, p, P_ADMITTED)
    if post is None:
        return None
    k, lane, item = post
    assert lane is not None
    if len(s.queue[lane]) >= c.lane_capacity:
        return None
    position = s.accepted[lane] + 1
    return emit(
        s._replace(
            queue=s.queue.except_(lane, (*s.queue[lane], (position, item))),
            accepted=s.accepted.except_(lane, position),
            producer=s.producer.except_(p, (P_PUSHED, k + 1, lane)),
        ),
        lane=lane,
        item=item,
    )


@WorkLaneLockFree.action(Producers, event="cas", at=P_PUSHED)
def PostCasWins(c: Constants, s: Vars, p: str) -> object:
    """CAS Idle -> Scheduled succeeds: this producer took the lane's reservation and owes its submission."""
    pc, k, lane = s.producer[p]
    if pc != P_PUSHED:
        return None
    assert lane is not None
    if s.status[lane] != IDLE:
        return None
    return emit(
        s._replace(
            status=s.status.except_(lane, SCHEDULED), producer=s.producer.except_(p, (P_OWES, k, lane))
        ),
        **Cas(lane, IDLE, SCHEDULED, True),
    )


@WorkLaneLockFree.action(Producers, event="cas", at=P_PUSHED)
def PostCasLoses(c: Constants, s: Vars, p: str) -> object:
    """CAS Idle -> Scheduled fails: the lane is Scheduled or Draining, whose holder will see the item."""
    pc, k, lane = s.producer[p]
    if pc != P_PUSHED:
        return None
    assert lane is not None
    if s.status[lane] == IDLE:
        return None
    return emit(
        s._replace(producer=s.producer.except_(p, (P_IDLE, k, None))),
        **Cas(lane, IDLE, SCHEDULED, False, saw=s.status[lane]),
    )


@WorkLaneLockFree.action(Producers, event="submit", at=P_OWES)
def ProducerSubmit(c: Constants, s: Vars, p: str) -> object:
    """The producer that won the CAS puts the lane's work item in the ready queue."""
    pc, k, lane = s.producer[p]
    if pc != P_OWES:
        return None
    assert lane is not None
    return emit(
        s._replace(ready=(*s.ready, lane), producer=s.producer.except_(p, (P_IDLE, k, None))), lane=lane
    )


# ============================================================================ ACTIONS: workers


@WorkLaneLockFree.action(Workers, event="take", at=W_IDLE)
def Take(c: Constants, s: Vars, w: str) -> object:
    """An idle worker removes the oldest work item from the ready queue (under the pool mutex)."""
    if s.worker[w][0] != W_IDLE or not s.ready or s.phase == STOPPED:
        return None
    lane = s.ready[0]
    return emit(s._replace(ready=s.ready[1:], worker=s.worker.except_(w, (W_TOOK, lane, 0, None))), lane=lane)


@WorkLaneLockFree.action(Workers, event="drain_begin", at=W_TOOK)
def DrainBegin(c: Constants, s: Vars, w: str) -> object:
    """CAS Scheduled -> Draining: this worker is now the lane's only consumer.

    Only the holder of the reservation makes this CAS, so it cannot lose; a lane that is not
    Scheduled here leaves the worker stuck, which the explorer reports as a deadlock."""
    pc, lane, _, _ = s.worker[w]
    if pc != W_TOOK or Discarding(s):
        return None
    assert lane is not None
    if s.status[lane] != SCHEDULED:
        return None
    return emit(
        s._replace(
            status=s.status.except_(lane, DRAINING), worker=s.worker.except_(w, (W_DRAIN, lane, 0, None))
        ),
        lane=lane,
    )


@WorkLaneLockFree.action(Workers, at=W_TOOK)
def GiveUpDrain(c: Constants, s: Vars, w: str) -> object:
    """Stop(discard) has begun: a worker that took a work item does not start draining it."""
    pc, _, _, _ = s.worker[w]
    if pc != W_TOOK or not Discarding(s):
        return None
    return s._replace(worker=s.worker.except_(w, (W_IDLE, None, 0, None)))


@WorkLaneLockFree.action(Workers, event="pop", at=W_DRAIN)
def Pop(c: Constants, s: Vars, w: str) -> object:
    """The drainer pops the lane's oldest item (budget permitting), whether or not its CAS has happened."""
    drain = Popping(c, s, w)
    if drain is None or not s.queue[drain[0]]:
        return None
    lane, n = drain
    queue = s.queue[lane]
    return emit(
        s._replace(
            queue=s.queue.except_(lane, queue[1:]), worker=s.worker.except_(w, (W_DRAIN, lane, n, queue[0]))
        ),
        lane=lane,
        item=queue[0][1],
    )


@WorkLaneLockFree.action(Workers, event="pop", at=W_DRAIN)
def PopEmpty(c: Constants, s: Vars, w: str) -> object:
    """The pop finds the lane empty: the drain stops popping."""
    drain = Popping(c, s, w)
    if drain is None or s.queue[drain[0]]:
        return None
    return emit(s._replace(worker=s.worker.except_(w, (W_DECIDE, *drain, None))), lane=drain[0], item=None)


@WorkLaneLockFree.action(Workers, event="invoke", at=W_DRAIN)
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


@WorkLaneLockFree.action(Workers, event="cas", at=(W_DRAIN, W_DECIDE))
def Release(c: Constants, s: Vars, w: str) -> object:
    """The drain is over (budget spent or queue empty): CAS Draining -> Idle. Only the drainer
    writes Draining, so it cannot lose; from here a producer's CAS can win the lane."""
    if not DrainOver(c, s, w):
        return None
    _, lane, n, _ = s.worker[w]
    assert lane is not None
    if s.status[lane] != DRAINING:
        return None
    return emit(
        s._replace(
            status=s.status.except_(lane, IDLE), worker=s.worker.except_(w, (W_RELEASED, lane, n, None))
        ),
        **Cas(lane, DRAINING, IDLE, True, invoked=n),
    )


@WorkLaneLockFree.action(Workers, event="recheck", at=W_RELEASED)
def RecheckEmpty(c: Constants, s: Vars, w: str) -> object:
    """The re-check finds the queue empty: an item pushed from now on is its producer's to schedule."""
    pc, lane, _, _ = s.worker[w]
    if pc != W_RELEASED:
        return None
    assert lane is not None
    if s.queue[lane]:
        return None
    return emit(s._replace(worker=s.worker.except_(w, (W_IDLE, None, 0, None))), lane=lane, empty=True)


@WorkLaneLockFree.action(Workers, event="recheck", at=W_RELEASED)
def RecheckItems(c: Constants, s: Vars, w: str) -> object:
    """The re-check finds items (left over, or pushed while the lane was Draining): try to resubmit."""
    pc, lane, n, _ = s.worker[w]
    if pc != W_RELEASED:
        return None
    assert lane is not None
    if not s.queue[lane]:
        return None
    return emit(s._replace(worker=s.worker.except_(w, (W_RECHECKED, lane, n, None))), lane=lane, empty=False)


@WorkLaneLockFree.action(Workers, event="cas", at=W_RECHECKED)
def ReclaimWins(c: Constants, s: Vars, w: str) -> object:
    """CAS Idle -> Scheduled succeeds: the worker took the reservation back and owes the resubmission."""
    pc, lane, _, _ = s.worker[w]
    if pc != W_RECHECKED:
        return None
    assert lane is not None
    if s.status[lane] != IDLE:
        return None
    return emit(
        s._replace(
            status=s.status.except_(lane, SCHEDULED), worker=s.worker.except_(w, (W_OWES, lane, 0, None))
        ),
        **Cas(lane, IDLE, SCHEDULED, True),
    )


@WorkLaneLockFree.action(Workers, event="cas", at=W_RECHECKED)
def ReclaimLoses(c: Constants, s: Vars, w: str) -> object:
    """CAS Idle -> Scheduled fails: a producer (or another drain) has the lane; nothing is owed."""
    pc, lane, _, _ = s.worker[w]
    if pc != W_RECHECKED:
        return None
    assert lane is not None
    if s.status[lane] == IDLE:
        return None
    return emit(
        s._replace(worker=s.worker.except_(w, (W_IDLE, None, 0, None))),
        **Cas(lane, IDLE, SCHEDULED, False, saw=s.status[lane]),
    )


@WorkLaneLockFree.action(Workers, event="submit", at=W_OWES)
def WorkerSubmit(c: Constants, s: Vars, w: str) -> object:
    """The worker puts the lane's work item at the back of the ready queue."""
    pc, lane, _, _ = s.worker[w]
    if pc != W_OWES or PoolStopped(s):
        return None
    assert lane is not None
    return emit(
        s._replace(ready=(*s.ready, lane), worker=s.worker.except_(w, (W_IDLE, None, 0, None))), lane=lane
    )


@WorkLaneLockFree.action(Workers, event="submit_refused", at=W_OWES)
def WorkerSubmitRefused(c: Constants, s: Vars, w: str) -> object:
    """Stop(discard) has stopped the pool: the owed submission fails inside the scheduler and the
    work item is dropped. The lane stays Scheduled with its items; the reset answers for them."""
    pc, lane, _, _ = s.worker[w]
    if pc != W_OWES or not PoolStopped(s):
        return None
    assert lane is not None
    return emit(s._replace(worker=s.worker.except_(w, (W_IDLE, None, 0, None))), lane=lane)


@WorkLaneLockFree.action(Workers, Modes, event="stop_rejected", at=W_DRAIN)
def StopFromCallback(c: Constants, s: Vars, w: str, mode: str) -> object:
    """A callback calls Stop on its own scheduler: refused, since Stop would wait for that callback."""
    pc, _, n, hand = s.worker[w]
    if not c.callback_stop or pc != W_DRAIN or hand is not None or n == 0:
        return None
    return emit(s, mode=mode, reason="in_callback")


# ============================================================================ ACTIONS: Stop


@WorkLaneLockFree.action(Stoppers, at=S_IDLE)
def StopCall(c: Constants, s: Vars, t: str) -> object:
    """Stop leaves Running first: admission closes, so every later TryPost is INVALID_STATE."""
    if s.stopper[t] != S_IDLE or s.phase != RUNNING:
        return None
    return s._replace(stopper=s.stopper.except_(t, S_ACTIVE), phase=CLOSING, mode=c.mode_of(t))


@WorkLaneLockFree.action(Stoppers, event="stop_rejected", at=S_IDLE)
def StopWhileStopping(c: Constants, s: Vars, t: str) -> object:
    """A second Stop while one is in progress: refused."""
    if s.stopper[t] != S_IDLE or s.phase not in (CLOSING, STOPPING):
        return None
    return emit(
        s._replace(stopper=s.stopper.except_(t, "done")), mode=c.mode_of(t), reason="stop_in_progress"
    )


@WorkLaneLockFree.action(Stoppers, at=S_IDLE)
def StopWhenStopped(c: Constants, s: Vars, t: str) -> object:
    """Stop on a stopped scheduler: SUCCESS at once, and nothing to log."""
    if s.stopper[t] != S_IDLE or s.phase != STOPPED:
        return None
    return s._replace(stopper=s.stopper.except_(t, "done"))


@WorkLaneLockFree.action(Stoppers, event="stop_begin", at=S_ACTIVE)
def StopBegin(c: Constants, s: Vars, t: str) -> object:
    """Every post in flight has finished (pushed, CASed, submitted if it won): none can be accepted
    from here. In discard mode the pool stops here: later submissions are refused."""
    if s.stopper[t] != S_ACTIVE or s.phase != CLOSING or PostsInFlight(s):
        return None
    return emit(s._replace(phase=STOPPING), mode=s.mode)


@WorkLaneLockFree.action(Stoppers, event="stop_end", at=S_ACTIVE)
def StopEndDrain(c: Constants, s: Vars, t: str) -> object:
    """Stop(drain) returns once every accepted item ran and every lane is Idle; workers are joined."""
    if not StopAt(s, t, "drain"):
        return None
    if s.ready or not WorkersIdle(s) or any(st != IDLE for st in s.status.values()):
        return None
    if any(s.queue[lane] for lane in Lanes(c)):
        return None
    return emit(s._replace(phase=STOPPED, stopper=s.stopper.except_(t, "done")), mode="drain", result="ok")


@WorkLaneLockFree.action(Stoppers, Lanes, event="discard", at=S_ACTIVE)
def DiscardLane(c: Constants, s: Vars, t: str, lane: int) -> object:
    """Stop(discard), once the workers are joined: the reset destroys the lane's items and reports them."""
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


@WorkLaneLockFree.action(Stoppers, event="stop_end", at=S_ACTIVE)
def StopEndDiscard(c: Constants, s: Vars, t: str) -> object:
    """Stop(discard) returns once every lane is empty: lane words reset to Idle, the ready queue cleared."""
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

WorkLaneLockFree.invariant(NoLostWakeup)
WorkLaneLockFree.invariant(reads=("ready", "worker", "producer"))(OneReservationPerLane)
WorkLaneLockFree.invariant(reads=("ready", "worker", "producer", "status", "phase", "mode"))(
    StatusIsTheReservation
)
WorkLaneLockFree.invariant(reads=("worker", "status"))(OneDrainerPerLane)
WorkLaneLockFree.invariant(reads=("ready",))(ReadyQueueBounded)
WorkLaneLockFree.invariant(reads=("worker", "invoked", "queue", "discarded", "accepted"))(Conservation)
WorkLaneLockFree.invariant(reads=("worker", "queue", "invoked", "discarded"))(PerLaneFifo)
WorkLaneLockFree.invariant(reads=("worker",))(BudgetRespected)
WorkLaneLockFree.invariant(reads=("phase", "queue", "ready"))(StoppedMeansQuiet)


# ============================================================================ FAIRNESS & LIVENESS

WorkLaneLockFree.fairness(WF(Workers), WF(Producers), WF(Stoppers))


WorkLaneLockFree.property(
    EventuallyAlways(
        "EveryAcceptedItemSettles",
        AllSettled,
        "every accepted item is eventually invoked or discarded (no item waits forever)",
    )
)
WorkLaneLockFree.property(
    LeadsTo(
        "EveryStopReturns",
        lambda c, s: s.phase in (CLOSING, STOPPING),
        lambda c, s: s.phase == STOPPED,
        "a Stop that took effect eventually returns",
    )
)


# ============================================================================ SYMMETRY & DONE


@WorkLaneLockFree.symmetry
def WorkersAreInterchangeable(c: Constants, s: Vars) -> Vars:
    """No state refers to a worker by name, so worker local states can be sorted."""
    return s._replace(worker=s.worker.with_values(sorted(s.worker.values(), key=WorkerKey)))


@WorkLaneLockFree.terminal
def Done(c: Constants, s: Vars) -> bool:
    """Every producer and Stop call has finished, and the scheduler is stopped or idle with nothing queued."""
    producers_done = all(pc == P_IDLE and c.post_of(p, k) is None for p, (pc, k, _) in s.producer.items())
    stoppers_done = all(pc == "done" for pc in s.stopper.values())
    if not (producers_done and stoppers_done and WorkersIdle(s)):
        return False
    if s.phase == STOPPED:
        return True
    return not s.ready and all(st == IDLE for st in s.status.values())


WorkLaneLockFree.describe(Show)

SPEC = WorkLaneLockFree.spec
