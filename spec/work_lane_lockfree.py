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

from spec.language import WF, SpecBuilder, emit

# LockBased == INSTANCE WorkLane: the constants, variables and Init, and the steps that are the
# same atomic step in both lanes (the stop-state check of a post, the pool's ready queue,
# invoking, Stop) are the lock-based spec's, taken by name; only the lane's own steps differ
# and are written out here.
from spec.work_lane import (
    Admit,
    CommonInvariants,
    DiscardLane,
    EveryAcceptedItemSettles,
    EveryStopReturns,
    GiveUpDrain,
    Invoke,
    PositiveSizes,
    PostFull,
    PostInvalidHandle,
    PostRefused,
    PostWithRoom,
    ProducerPc,
    ProducerSubmit,
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
from spec.work_lane import DrainBegin as LockedDrainBegin
from spec.work_lane import Init as Init
from spec.work_lane import Pop as LockedPop
from spec.work_lane import PopEmpty as LockedPopEmpty
from spec.work_lane import WorkerSubmit as LockedWorkerSubmit

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
    """The push finds the queue full: CAPACITY_EXCEEDED, the item stays with the caller (the
    lock-based PostFull, one atomic step here too)."""
    return PostFull(c, s, p)


@WorkLaneLockFree.action(Producers, event="push", at=P_ADMITTED)
def Push(c: Constants, s: Vars, p: str) -> object:
    """The push succeeds: the item is accepted and visible to a drainer, the lane word untouched."""
    post = PostWithRoom(c, s, p)
    if post is None:
        return None
    k, lane, item = post
    return emit(
        Published(s, lane, item)._replace(producer=s.producer.except_(p, (P_PUSHED, k + 1, lane))),
        lane=lane,
        item=item,
    )


@WorkLaneLockFree.action(Producers, event="cas", at=P_PUSHED)
def PostCasWins(c: Constants, s: Vars, p: str) -> object:
    """CAS Idle -> Scheduled succeeds: this producer took the lane's reservation and owes its submission."""
    pushed = ProducerAt(s, p, P_PUSHED)
    if pushed is None or s.status[pushed[1]] != IDLE:
        return None
    k, lane = pushed
    return emit(
        s._replace(
            status=s.status.except_(lane, SCHEDULED), producer=s.producer.except_(p, (P_OWES, k, lane))
        ),
        **Cas(lane, IDLE, SCHEDULED, True),
    )


@WorkLaneLockFree.action(Producers, event="cas", at=P_PUSHED)
def PostCasLoses(c: Constants, s: Vars, p: str) -> object:
    """CAS Idle -> Scheduled fails: the lane is Scheduled or Draining, whose holder will see the item."""
    pushed = ProducerAt(s, p, P_PUSHED)
    if pushed is None or s.status[pushed[1]] == IDLE:
        return None
    k, lane = pushed
    return emit(
        s._replace(producer=s.producer.except_(p, (P_IDLE, k, None))),
        **Cas(lane, IDLE, SCHEDULED, False, saw=s.status[lane]),
    )


# The producer that won the CAS puts the lane's work item in the ready queue.
WorkLaneLockFree.action(Producers, event="submit", at=P_OWES)(ProducerSubmit)


# ============================================================================ ACTIONS: workers


# An idle worker takes the oldest work item from the ready queue (under the pool mutex).
WorkLaneLockFree.action(Workers, event="take", at=W_IDLE)(Take)


@WorkLaneLockFree.action(Workers, event="drain_begin", at=W_TOOK)
def DrainBegin(c: Constants, s: Vars, w: str) -> object:
    """CAS Scheduled -> Draining: this worker is now the lane's only consumer.

    Only the holder of the reservation makes this CAS, so it cannot lose; a lane that is not
    Scheduled here leaves the worker stuck, which the explorer reports as a deadlock."""
    lane = WorkerAt(s, w, W_TOOK)
    if lane is None or s.status[lane] != SCHEDULED:
        return None
    return LockedDrainBegin(c, s, w)


# Stop(discard) has begun: a worker that took a work item does not start draining it.
WorkLaneLockFree.action(Workers, at=W_TOOK)(GiveUpDrain)


@WorkLaneLockFree.action(Workers, event="pop", at=W_DRAIN)
def Pop(c: Constants, s: Vars, w: str) -> object:
    """The drainer pops the lane's oldest item (budget permitting), whether or not its CAS has happened."""
    after = LockedPop(c, s, w)
    if after is None:
        return None
    _, lane, _, (_, item) = after.worker[w]
    return emit(after, lane=lane, item=item)


@WorkLaneLockFree.action(Workers, event="pop", at=W_DRAIN)
def PopEmpty(c: Constants, s: Vars, w: str) -> object:
    """The pop finds the lane empty: the drain stops popping."""
    after = LockedPopEmpty(c, s, w)
    if after is None:
        return None
    return emit(after, lane=after.worker[w][1], item=None)


# The drainer hands the popped item to the lane's invoke callback.
WorkLaneLockFree.action(Workers, event="invoke", at=W_DRAIN)(Invoke)


@WorkLaneLockFree.action(Workers, event="cas", at=(W_DRAIN, W_DECIDE))
def Release(c: Constants, s: Vars, w: str) -> object:
    """The drain is over (budget spent or queue empty): CAS Draining -> Idle. Only the drainer
    writes Draining, so it cannot lose; from here a producer's CAS can win the lane."""
    ending = EndingDrain(c, s, w)
    if ending is None:
        return None
    lane, n = ending
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
    lane = WorkerAt(s, w, W_RELEASED)
    if lane is None or s.queue[lane]:
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
    lane = WorkerAt(s, w, W_RECHECKED)
    if lane is None or s.status[lane] != IDLE:
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
    lane = WorkerAt(s, w, W_RECHECKED)
    if lane is None or s.status[lane] == IDLE:
        return None
    return emit(
        s._replace(worker=s.worker.except_(w, (W_IDLE, None, 0, None))),
        **Cas(lane, IDLE, SCHEDULED, False, saw=s.status[lane]),
    )


@WorkLaneLockFree.action(Workers, event="submit", at=W_OWES)
def WorkerSubmit(c: Constants, s: Vars, w: str) -> object:
    """The worker puts the lane's work item at the back of the ready queue, unless the pool has stopped."""
    if PoolStopped(s):
        return None
    return LockedWorkerSubmit(c, s, w)


@WorkLaneLockFree.action(Workers, event="submit_refused", at=W_OWES)
def WorkerSubmitRefused(c: Constants, s: Vars, w: str) -> object:
    """Stop(discard) has stopped the pool: the owed submission fails inside the scheduler and the
    work item is dropped. The lane stays Scheduled with its items; the reset answers for them."""
    lane = WorkerAt(s, w, W_OWES)
    if lane is None or not PoolStopped(s):
        return None
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
# The lane word's own (spec.work_lane_lockfree_state), then those it shares with the lock-based lane.

WorkLaneLockFree.invariant(NoLostWakeup)
WorkLaneLockFree.invariant(reads=("ready", "worker", "producer"))(OneReservationPerLane)
WorkLaneLockFree.invariant(reads=("ready", "worker", "producer", "status", "phase", "mode"))(
    StatusIsTheReservation
)
WorkLaneLockFree.invariant(reads=("worker", "status"))(OneDrainerPerLane)
CommonInvariants(WorkLaneLockFree)


# ============================================================================ FAIRNESS & LIVENESS

WorkLaneLockFree.fairness(WF(Workers), WF(Producers), WF(Stoppers))


# The lock-based spec's properties: every accepted item settles, every Stop returns.
WorkLaneLockFree.property(EveryAcceptedItemSettles)
WorkLaneLockFree.property(EveryStopReturns)


# ============================================================================ SYMMETRY & DONE


# No state refers to a worker by name, so worker local states can be sorted.
WorkLaneLockFree.symmetry(WorkersAreInterchangeable)
# Every producer and Stop call has finished, and the scheduler is stopped or idle with nothing queued.
WorkLaneLockFree.terminal(Done)
WorkLaneLockFree.describe(Show)

SPEC = WorkLaneLockFree.spec
