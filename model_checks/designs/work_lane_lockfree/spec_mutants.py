"""Seeded bugs in the lock-free Work Lane spec: each must be caught, with a shortest counterexample.

The first three are the lost-wakeup orders of push and CAS that a lock-free port can get
wrong; the last two are the Stop bugs the ToolKit's traces showed (a Stop(drain) that does
not wait and drops items, a lane reset that destroys items without reporting them).
"""

from __future__ import annotations

from model_checks.designs.work_lane.spec_mutants import (
    W_GOING_IDLE,
    IdleLate,
    PublishedLate,
    ReserveFirst,
    stop_skips_inflight,
)
from model_checks.mutant import SpecMutant, by_name
from model_checks.spec_mutation import split
from spec import work_lane_lockfree as lf
from spec.language import Function, emit, variant
from spec.work_lane_lockfree import SPEC
from spec.work_lane_lockfree_state import (
    DRAINING,
    IDLE,
    SCHEDULED,
    STOPPED,
    W_IDLE,
    W_OWES,
    Constants,
    EndingDrain,
    Lanes,
    StopAt,
    Vars,
    WorkersIdle,
)

# --- cas-before-push: the producer CASes Idle -> Scheduled, then pushes ---------------------

P_CAS_WON, P_CAS_LOST = "cas-won", "cas-lost"


def CasBeforePush(c: Constants, s: Vars, p: str) -> object:
    """BUG: the producer CASes the lane word before its item is in the queue."""
    # The producer names the lane only while it holds its reservation.
    first = ReserveFirst(c, s, p, lambda k, lane, won: (P_CAS_WON, k, lane) if won else (P_CAS_LOST, k, None))
    if first is None:
        return None
    after, lane, _, won = first
    return emit(after, **lf.Cas(lane, IDLE, SCHEDULED, won))


def PushAfterCas(c: Constants, s: Vars, p: str) -> object:
    """BUG: ... and pushes afterwards: a drainer that re-checked in between never sees the item."""
    pc, k, _ = s.producer[p]
    if pc not in (P_CAS_WON, P_CAS_LOST):
        return None
    post = c.post_of(p, k)
    assert post is not None
    lane = post[0]
    assert lane is not None
    return emit(PublishedLate(s, p, k, lane, post[1], reserved=pc == P_CAS_WON), lane=lane, item=post[1])


CAS_BEFORE_PUSH = split(
    SPEC,
    "cas-before-push",
    "Push",
    CasBeforePush,
    PushAfterCas,
    first_event="cas",
    then_event="push",
    drop=["PostCasWins", "PostCasLoses"],
)

# --- no-recheck: Draining -> Idle ends the drain ---------------------------------------------


def ReleaseWithoutRecheck(c: Constants, s: Vars, w: str) -> object:
    """BUG: CAS Draining -> Idle and the worker is done: an item pushed while Draining, whose
    producer's CAS lost, stays behind."""
    released = lf.Release(c, s, w)
    if released is None:
        return None
    after: Vars = released.state
    return emit(after._replace(worker=after.worker.except_(w, (W_IDLE, None, 0, None))), **released.fields)


NO_RECHECK = variant(SPEC, "no-recheck", replace_actions={"Release": ReleaseWithoutRecheck})

# --- idle-after-recheck: the re-check first, the Idle write after it (the worker goes idle as
# in the lock-based spec's split-idle) ---------------------------------------------------------


def RecheckBeforeRelease(c: Constants, s: Vars, w: str) -> object:
    """BUG: while still Draining the drainer looks at the queue; items -> Draining -> Scheduled."""
    ending = EndingDrain(c, s, w)
    if ending is None:
        return None
    lane, n = ending
    if s.queue[lane]:
        return emit(
            s._replace(
                status=s.status.except_(lane, SCHEDULED), worker=s.worker.except_(w, (W_OWES, lane, 0, None))
            ),
            **lf.Cas(lane, DRAINING, SCHEDULED, True, invoked=n),
        )
    return emit(s._replace(worker=s.worker.except_(w, (W_GOING_IDLE, lane, n, None))), lane=lane, empty=True)


def IdleAfterRecheck(c: Constants, s: Vars, w: str) -> object:
    """BUG: ... empty, so CAS Draining -> Idle later, without looking again."""
    late = IdleLate(s, w)
    if late is None:
        return None
    after, lane, n = late
    return emit(after, **lf.Cas(lane, DRAINING, IDLE, True, invoked=n))


IDLE_AFTER_RECHECK = split(
    SPEC,
    "idle-after-recheck",
    "Release",
    RecheckBeforeRelease,
    IdleAfterRecheck,
    first_event="recheck",
    then_event="cas",
    drop=["RecheckEmpty", "RecheckItems", "ReclaimWins", "ReclaimLoses"],
)

# --- stop-skips-inflight: the lock-based spec's mutant (Stop is the same atomic step in both) ---

STOP_SKIPS_INFLIGHT = stop_skips_inflight(SPEC)

# --- reset-drops-unreported: the lane reset destroys items without a discard ---------------


def ResetDroppingItems(c: Constants, s: Vars, t: str) -> object:
    """BUG: Stop(discard) resets every lane, destroying its items, and reports none of them."""
    if not StopAt(s, t, "discard") or not WorkersIdle(s):
        return None
    return emit(
        s._replace(
            phase=STOPPED,
            ready=(),
            queue=Function.const(Lanes(c), ()),
            status=Function.const(Lanes(c), IDLE),
            stopper=s.stopper.except_(t, "done"),
        ),
        mode="discard",
        result="ok",
    )


RESET_DROPS_UNREPORTED = variant(
    SPEC,
    "reset-drops-unreported",
    replace_actions={"StopEndDiscard": ResetDroppingItems},
    drop_actions=["DiscardLane"],
)

MUTANTS: dict[str, SpecMutant] = by_name(
    SpecMutant(
        "cas-before-push",
        "the producer's Idle -> Scheduled CAS before its push",
        CAS_BEFORE_PUSH,
        expect="NoLostWakeup",
        length=14,
        overrides={"lane_capacity": 2},
    ),
    SpecMutant(
        "no-recheck",
        "the end of a drain without the re-check of the queue after Draining -> Idle",
        NO_RECHECK,
        expect="NoLostWakeup",
        length=13,
    ),
    SpecMutant(
        "idle-after-recheck",
        "the re-check while Draining, the Draining -> Idle CAS after it",
        IDLE_AFTER_RECHECK,
        expect="NoLostWakeup",
        length=14,
    ),
    STOP_SKIPS_INFLIGHT,
    SpecMutant(
        "reset-drops-unreported",
        "the Stop(discard) lane reset destroying items without reporting them",
        RESET_DROPS_UNREPORTED,
        expect="Conservation",
        length=7,
        overrides={"stops": ("discard",)},
    ),
)

__all__ = ["MUTANTS", "W_GOING_IDLE"]
