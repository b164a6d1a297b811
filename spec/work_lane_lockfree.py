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

from spec.language import WF, EventuallyAlways, LeadsTo, SpecBuilder, emit

# LockBased == INSTANCE WorkLane: the constants, variables and Init, and the steps that are the
# same atomic step in both lanes (the stop-state check of a post, the pool's ready queue,
# invoking, Stop) are the lock-based spec's, taken by name; only the lane's own steps differ
# and are written out here.
from spec.work_lane import (
    Admit,
    AllSettled,
    DiscardLane,
    GiveUpDrain,
    Invoke,
    Popping,
    PositiveSizes,
    PostInvalidHandle,
    PostRefused,
    PostReturns,
    ProducerPc,
    ReadyQueueHoldsEveryLane,
    StopBegin,
    StopCall,
    StopEndDiscard,
    StopEndDrain,
    StopFromCallback,
    StopperPc,
    StopWhenStopped,
    StopWhileStopping,
    Take,
    WorkerPc,
    WorkersAreInterchangeable,
)
from spec.work_lane import Done as Done  # re-exported, as Init: the trace checker uses both
from spec.work_lane import Init as Init

# EXTENDS work_lane_lockfree_state (which EXTENDS work_lane_state).
from spec.work_lane_lockfree_state import *  # noqa: F403

WorkLaneLockFree = SpecBuilder("work-lane-lockfree", __doc__ or "")

# ============================================================================ ASSUME, PCs, INIT
# The lock-based spec's: the same constants and variables, starting in the same state.

WorkLaneLockFree.assume(ReadyQueueHoldsEveryLane)
WorkLaneLockFree.assume(PositiveSizes)
WorkLaneLockFree.program_counter(Producers)(ProducerPc)
WorkLaneLockFree.program_counter(Workers)(WorkerPc)
WorkLaneLockFree.program_counter(Stoppers)(StopperPc)
WorkLaneLockFree.init(Init)


# ============================================================================ ACTIONS: producers


# TryPost with a handle of no lane; the stop-state check passes (admitted) or fails (INVALID_STATE).
WorkLaneLockFree.action(Producers, event="post", at=P_IDLE)(PostInvalidHandle)
WorkLaneLockFree.action(Producers, at=P_IDLE)(Admit)
WorkLaneLockFree.action(Producers, event="post", at=P_IDLE)(PostRefused)


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


# An idle worker takes the oldest work item from the ready queue (under the pool mutex).
WorkLaneLockFree.action(Workers, event="take", at=W_IDLE)(Take)


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


# Stop(discard) has begun: a worker that took a work item does not start draining it.
WorkLaneLockFree.action(Workers, at=W_TOOK)(GiveUpDrain)


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


# The drainer hands the popped item to the lane's invoke callback.
WorkLaneLockFree.action(Workers, event="invoke", at=W_DRAIN)(Invoke)


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


# A callback calls Stop on its own scheduler: refused.
WorkLaneLockFree.action(Workers, Modes, event="stop_rejected", at=W_DRAIN)(StopFromCallback)


# ============================================================================ ACTIONS: Stop


# Stop is the lock-based one. Stop leaves Running first, so admission closes; StopBegin waits
# until every post in flight has finished (pushed, CASed, submitted if it won), and from
# there Stop(discard) has stopped the pool (``PoolStopped``: a later submission is refused).
# Once the workers are joined, the reset destroys each lane's items and reports them
# (DiscardLane) and StopEndDiscard sets every lane word to Idle and clears the ready queue.
WorkLaneLockFree.action(Stoppers, at=S_IDLE)(StopCall)
WorkLaneLockFree.action(Stoppers, event="stop_rejected", at=S_IDLE)(StopWhileStopping)
WorkLaneLockFree.action(Stoppers, at=S_IDLE)(StopWhenStopped)
WorkLaneLockFree.action(Stoppers, event="stop_begin", at=S_ACTIVE)(StopBegin)
WorkLaneLockFree.action(Stoppers, event="stop_end", at=S_ACTIVE)(StopEndDrain)
WorkLaneLockFree.action(Stoppers, Lanes, event="discard", at=S_ACTIVE)(DiscardLane)
WorkLaneLockFree.action(Stoppers, event="stop_end", at=S_ACTIVE)(StopEndDiscard)


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


# No state refers to a worker by name, so worker local states can be sorted.
WorkLaneLockFree.symmetry(WorkersAreInterchangeable)
# Every producer and Stop call has finished, and the scheduler is stopped or idle with nothing queued.
WorkLaneLockFree.terminal(Done)
WorkLaneLockFree.describe(Show)

SPEC = WorkLaneLockFree.spec
