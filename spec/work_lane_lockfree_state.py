"""MODULE WorkLaneLockFreeState — EXTENDS WorkLaneState with the program counters and operators
of the lock-free lane (``spec.work_lane_lockfree``).

The constants and variables are those of the lock-based lane: the same ``queue`` (now a
linearizable bounded MPMC queue, not one under a mutex), the same ``status`` (now one atomic
word changed only by CAS), the same pool, Stop and history counters. What changes is where
each thread can be between atomic steps, so the operators that look at program counters
(reservations, drainers, the lost-wakeup invariant) are redefined here and shadow the
lock-based ones.
"""

# ruff: noqa: F405  (names from the state module this one EXTENDS)
from __future__ import annotations

# LockBased == INSTANCE WorkLaneState, for the operators redefined here in its terms.
import spec.work_lane_state as LockBased

# EXTENDS work_lane_state: its constants, variables and operators are this module's too.
from spec.work_lane_state import *  # noqa: F403

# ============================================================================ PROGRAM COUNTERS

# Producer: idle -> admitted -> pushed -> idle | owes -> idle. ``pushed``: the item is in the
# queue and the Idle -> Scheduled CAS is still to come.
P_PUSHED = "pushed"
# Worker, after the pops: decide -> released (Draining -> Idle done, the re-check to come)
# -> reclaim (the re-check saw items, the Idle -> Scheduled CAS to come) -> owes | idle.
W_RELEASED, W_RECHECKED = "released", "rechecked"

PRODUCER_PCS = (P_IDLE, P_ADMITTED, P_PUSHED, P_OWES)
WORKER_PCS = (W_IDLE, W_TOOK, W_DRAIN, W_DECIDE, W_RELEASED, W_RECHECKED, W_OWES)


# ============================================================================ helpers (TLA+ operators)


def PoolStopped(s: Vars) -> bool:
    """Stop(discard) has begun and stopped the pool: a submission is refused (and dropped)."""
    return s.mode == "discard" and s.phase in (STOPPING, STOPPED)


def Holds(pc: str) -> bool:
    """A worker at ``pc`` holds its lane's reservation (took it, drains it, or owes its submission):
    every worker with a lane but one that has let the lane go and only looks at it again."""
    return pc not in (W_IDLE, W_RELEASED, W_RECHECKED)


def Drains(pc: str) -> bool:  # type: ignore[no-redef]  # shadows the lock-based operator
    """A worker at ``pc`` is its lane's consumer: past the Scheduled -> Draining CAS and not yet
    past the Draining -> Idle one."""
    return pc not in (W_IDLE, W_TOOK, W_OWES, W_RELEASED, W_RECHECKED)


def Reservations(s: Vars, lane: int) -> int:  # type: ignore[no-redef]  # shadows the lock-based operator
    """Work items queued or taken, drains running, submissions owed: the lane's reservations."""
    held = s.ready.count(lane)
    held += sum(1 for pc, at, _, _ in s.worker.values() if at == lane and Holds(pc))
    held += sum(1 for pc, _, at in s.producer.values() if at == lane and ProducerHolds(pc))
    return held


def ProducerHolds(pc: str) -> bool:
    """A producer that names a lane holds its reservation (it won the CAS and owes the
    submission), except between its push and its CAS, when it names the lane it will CAS."""
    return pc != P_PUSHED


def WillLook(s: Vars, lane: int) -> bool:
    """A thread is between its atomic steps and will still look at the lane: a producer that
    pushed and has not CASed yet, or a drainer that let go of the lane and has not re-checked
    it (or saw items and has not CASed yet). Such a lane may hold items with no reservation."""
    if any(pc == P_PUSHED and at == lane for pc, _, at in s.producer.values()):
        return True
    return any(pc in (W_RELEASED, W_RECHECKED) and at == lane for pc, at, _, _ in s.worker.values())


def ReservationLost(s: Vars) -> bool:
    """Stop(discard) may leave a lane Scheduled with no reservation: a worker's owed submission
    refused by the stopped pool, or a work item taken and given up. The reset of the lanes
    (``DiscardLane`` and ``StopEndDiscard``) answers for its items."""
    return s.mode == "discard" and s.phase in (CLOSING, STOPPING)


def Cas(lane: int, expect: str, new: str, ok: bool, **extra: object) -> dict[str, object]:
    """The fields of a ``cas`` event: the lane word, the value expected, the value written, success."""
    return {"lane": lane, "expect": expect, "new": new, "ok": ok, **extra}


# ===================================================== INVARIANTS (registered by spec.work_lane_lockfree)


def NoLostWakeup(c: Constants, s: Vars) -> str | None:  # type: ignore[no-redef]  # shadows the lock-based operator
    """A lane that holds items has a reservation, or a thread that will still look at it."""
    if Discarding(s):
        return None  # Stop(discard) will drop what is left; nobody needs to drain it
    for lane in Lanes(c):
        if s.queue[lane] and Reservations(s, lane) == 0 and not WillLook(s, lane):
            items = ", ".join(item for _, item in s.queue[lane])
            return (
                f"lane {lane} holds {items} but is {s.status[lane]} with no reservation"
                " and no thread left to look at it: nobody will run it"
            )
    return None


def OneReservationPerLane(c: Constants, s: Vars) -> str | None:  # type: ignore[no-redef]  # shadows the lock-based operator
    """A CAS that loses never creates a second reservation."""
    for lane in Lanes(c):
        if Reservations(s, lane) > 1:
            return f"lane {lane} has {Reservations(s, lane)} reservations (ready queue {list(s.ready)})"
    return None


def StatusIsTheReservation(c: Constants, s: Vars) -> str | None:
    """The atomic word says Scheduled or Draining exactly when the lane has its reservation
    (outside Stop(discard), which may drop a reservation and leaves the word to the reset)."""
    if ReservationLost(s):
        return None
    for lane in Lanes(c):
        reserved = Reservations(s, lane) == 1
        if reserved != (s.status[lane] != IDLE):
            return f"lane {lane} is {s.status[lane]} with {Reservations(s, lane)} reservations"
    return None


def OneDrainerPerLane(c: Constants, s: Vars) -> str | None:  # type: ignore[no-redef]  # shadows the lock-based operator
    """Callbacks of one lane never overlap: at most one worker drains it, and only while it is Draining."""
    return LockBased.OneDrainerPerLane(c, s, Drains)
