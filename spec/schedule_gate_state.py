"""MODULE ScheduleGateState — the constants, variables and state operators of ``spec.schedule_gate``.

``spec.schedule_gate`` EXTENDS this module with the initial state, the actions and
fairness, and checks the invariants defined here; everything here is a pure function
of the constants and one state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from spec.language import Function, variables
from spec.processes import PostAt as PostAt
from spec.processes import Producers as Producers  # re-exported: spec/schedule_gate.py
from spec.processes import Scripted
from spec.processes import Workers as Workers

# ============================================================================ CONSTANTS


IDLE, ADMITTING, SCHEDULED, DRAINING, COMPLETING = (
    "Idle",
    "Admitting",
    "Scheduled",
    "Draining",
    "DrainCompleting",
)


PHASES = (IDLE, ADMITTING, SCHEDULED, DRAINING, COMPLETING)


# The directives a gate CAS hands to the thread that made it.
NO_ACTION = "no_action"


DEFERRED = "finalization_deferred"


ENQUEUE = "enqueue_ready_token"


RELEASE = "release_permit"


Item = str


@dataclass(frozen=True)
class Constants(Scripted[int]):
    actors: int
    workers: int
    permits: int  # the size of the runnable-permit pool
    mailbox_capacity: int
    max_per_drain: int  # the drain budget, counted in events
    # script[i] lists the actors producer p<i> posts to, in order.
    script: tuple[tuple[int, ...], ...] = ()

    # A producer's post is (actor, event); the processes' names are ``Scripted``'s.
    HEADER: ClassVar[tuple[str, ...]] = ("actors", "workers", "permits", "mailbox_capacity", "max_per_drain")


def Actors(c: Constants) -> tuple[int, ...]:
    return tuple(range(c.actors))


# ============================================================================ VARIABLES


class Gate(NamedTuple):
    """The Schedule Gate's one atomic word (encoded in the reference as bits, docs: "Gate word")."""

    phase: str
    pending: bool  # a publish succeeded in this admission window (Admitting)
    resched: bool  # a publish succeeded while Draining / DrainCompleting
    inside: int  # producers between admit_begin and admit_end

    def show(self) -> str:
        flags = ("+P" if self.pending else "") + ("+R" if self.resched else "")
        return f"{self.phase}{flags} n={self.inside}"


IDLE_GATE = Gate(IDLE, False, False, 0)


@variables
class Vars(NamedTuple):
    gate: Function[int, Gate]  # one CAS word per actor
    mailbox: Function[int, tuple[Item, ...]]  # a bounded MPSC queue of events per actor
    free: int  # runnable permits left in the pool (an atomic counter)
    ready: tuple[int, ...]  # the FIFO ready queue of actor tokens
    # Per process: program counter and what it holds.
    producer: Function[str, tuple[str, int, bool]]  # (pc, posts settled, publish result)
    worker: Function[str, tuple[str, int | None, int, bool]]  # (pc, actor, processed, budget spent)
    # History, as counters so that states stay small.
    published: Function[int, int]
    processed: Function[int, int]
    returned: int  # events handed back to their callers (REJECTED or mailbox full)


# Producer program counters:
#   idle -(sees Idle)-> saw-idle -(permit_acquire)-> permit -(admit_begin)-> admitted -(publish)->
#   published -(admit_end)-> idle | owes-token | owes-release -> idle
#   saw-idle -(pool empty, actor runnable now)-> idle (retry: it joins)
#   permit -(CAS lost)-> cas-lost -(permit_release surplus)-> idle (retry the same post)
P_IDLE, P_SAW_IDLE, P_PERMIT, P_CAS_LOST, P_ADMITTED, P_PUBLISHED, P_OWES_TOKEN, P_OWES_RELEASE = (
    "idle",
    "saw-idle",
    "permit",
    "cas-lost",
    "admitted",
    "published",
    "owes-token",
    "owes-release",
)


# Worker program counters: idle -> took -> drain -> decide -> idle | owes-token | owes-release -> idle
W_IDLE, W_TOOK, W_DRAIN, W_DECIDE, W_OWES_TOKEN, W_OWES_RELEASE = (
    "idle",
    "took",
    "drain",
    "decide",
    "owes-token",
    "owes-release",
)


# ============================================================================ the gate's CAS transitions


def AdmitFirstWord(g: Gate) -> Gate | None:
    """A producer holding a permit registers first: Idle(n=0) -> Admitting(n=1); None if the CAS fails."""
    if g != IDLE_GATE:
        return None
    return Gate(ADMITTING, False, False, 1)


def AdmitJoinWord(g: Gate) -> Gate | None:
    """A producer of a runnable actor (any phase but Idle) registers: n + 1, nothing else changes."""
    if g.phase == IDLE:
        return None
    return g._replace(inside=g.inside + 1)


def AdmitEndWord(g: Gate, ok: bool) -> tuple[Gate, str]:
    """A producer leaves admission with its publish result ``ok``: n - 1, and the last one decides."""
    n = g.inside - 1
    if g.phase == ADMITTING:
        pending = g.pending or ok
        if n > 0:
            return Gate(ADMITTING, pending, False, n), NO_ACTION
        return (Gate(SCHEDULED, False, False, 0), ENQUEUE) if pending else (IDLE_GATE, RELEASE)
    if g.phase == COMPLETING:
        resched = g.resched or ok
        if n > 0:
            return Gate(COMPLETING, False, resched, n), NO_ACTION
        return (Gate(SCHEDULED, False, False, 0), ENQUEUE) if resched else (IDLE_GATE, RELEASE)
    if g.phase == DRAINING:
        return Gate(DRAINING, False, g.resched or ok, n), NO_ACTION
    # Scheduled: a token is queued or held, and its drain begins after this publish: nothing to do.
    # (Idle with producers inside is unreachable in the design; only mutants get there.)
    return g._replace(inside=n), NO_ACTION


def DrainBeginWord(g: Gate) -> Gate | None:
    """The token's worker starts: Scheduled -> Draining, the needs-reschedule flag cleared."""
    if g.phase != SCHEDULED:
        return None
    return Gate(DRAINING, False, False, g.inside)


def DrainEndWord(g: Gate, budget_spent: bool) -> tuple[Gate, str]:
    """The drainer's one end-of-drain CAS: reschedule, defer to the producers inside, or go Idle."""
    assert g.phase == DRAINING, g
    if budget_spent:
        return Gate(SCHEDULED, False, False, g.inside), ENQUEUE
    if g.inside > 0:
        return Gate(COMPLETING, False, g.resched, g.inside), DEFERRED
    if g.resched:
        return Gate(SCHEDULED, False, False, 0), ENQUEUE
    return IDLE_GATE, RELEASE


def Owes(directive: str, token: str, release: str, otherwise: str) -> str:
    return token if directive == ENQUEUE else release if directive == RELEASE else otherwise


# ============================================================================ helpers (TLA+ operators)


def Reservations(c: Constants, s: Vars, actor: int) -> int:
    """Tokens of the actor queued, taken (until its drain ends) or owed by a thread: at most one."""
    held = s.ready.count(actor)
    held += sum(
        1
        for pc, at, _, _ in s.worker.values()
        if at == actor and pc in (W_TOOK, W_DRAIN, W_DECIDE, W_OWES_TOKEN)
    )
    held += sum(
        1 for p, (pc, k, _) in s.producer.items() if pc == P_OWES_TOKEN and PostActor(c, p, k) == actor
    )
    return held


def ProducerMovesOn(c: Constants, s: Vars, p: str, at: str, posts_done: int) -> tuple[Vars, int] | None:
    """Producer ``p`` at ``at`` goes idle, ``posts_done`` (0: retry the same post, 1: the next one)
    further in its script: the state where it has, and the post's actor; None when not at ``at``."""
    post = PostAt(c, s, p, at)
    if post is None:
        return None
    k, actor, _ = post
    return s._replace(producer=s.producer.except_(p, (P_IDLE, k + posts_done, False))), actor


def ProducerPc(c: Constants, s: Vars, p: str) -> str:
    return s.producer[p][0]


def WorkerPc(c: Constants, s: Vars, w: str) -> str:
    return s.worker[w][0]


def DrainerAt(s: Vars, w: str, pc: str) -> int | None:
    """The actor worker ``w`` holds the token of, when it is at ``pc``; else None."""
    here, actor, _, _ = s.worker[w]
    if here != pc:
        return None
    assert actor is not None  # every worker pc but idle holds a token
    return actor


def WorkerMovesOn(s: Vars, w: str, at: str) -> tuple[Vars, int] | None:
    """Worker ``w`` at ``at`` goes idle: the state where it has, and the actor it held."""
    actor = DrainerAt(s, w, at)
    if actor is None:
        return None
    return s._replace(worker=s.worker.except_(w, (W_IDLE, None, 0, False))), actor


def PostActor(c: Constants, p: str, k: int) -> int | None:
    post = c.post_of(p, k)
    return None if post is None else post[0]


def LoosePermits(c: Constants, s: Vars) -> int:
    """Permits held by threads rather than actors: taken but not yet attached, or owed back to the pool."""
    loose = sum(1 for pc, _, _ in s.producer.values() if pc in (P_PERMIT, P_CAS_LOST, P_OWES_RELEASE))
    loose += sum(1 for pc, _, _, _ in s.worker.values() if pc == W_OWES_RELEASE)
    return loose


def ActorsHoldingPermits(c: Constants, s: Vars) -> int:
    return sum(1 for g in s.gate.values() if g.phase != IDLE)


def InAdmission(c: Constants, s: Vars, actor: int) -> int:
    """Producers between admit_begin and admit_end on the actor."""
    return sum(
        1
        for p, (pc, k, _) in s.producer.items()
        if pc in (P_ADMITTED, P_PUBLISHED) and PostActor(c, p, k) == actor
    )


# ======================================================== INVARIANTS (registered by spec.schedule_gate)


def NoLostWakeup(c: Constants, s: Vars) -> str | None:
    """An actor with events has a token, a drainer, or a producer inside that owes the decision."""
    for actor in Actors(c):
        box = s.mailbox[actor]
        if not box or Reservations(c, s, actor) > 0:
            continue
        g = s.gate[actor]
        if g.phase in (ADMITTING, COMPLETING) and g.inside > 0:
            continue  # the last producer out will decide, seeing every publish of this window
        return (
            f"actor {actor} holds {', '.join(box)} but its gate is {g.show()} with no token, no drainer"
            " and no producer owing the decision: nobody will run it"
        )
    return None


def OneDrainerPerActor(c: Constants, s: Vars) -> str | None:
    """Events of one actor never run in parallel: one drainer at most, and only while the gate is Draining."""
    for actor in Actors(c):
        drainers = [w for w, (pc, at, _, _) in s.worker.items() if at == actor and pc in (W_DRAIN, W_DECIDE)]
        if len(drainers) > 1:
            return f"actor {actor} is drained by {' and '.join(drainers)} at once"
        if drainers and s.gate[actor].phase != DRAINING:
            return f"{drainers[0]} drains actor {actor} while its gate is {s.gate[actor].show()}"
        if not drainers and s.gate[actor].phase == DRAINING:
            return f"actor {actor}'s gate is Draining but no worker drains it"
    return None


def PermitsConserved(c: Constants, s: Vars) -> str | None:
    """Free + held by actors + held by threads = pool: never leaked, never released twice."""
    held = ActorsHoldingPermits(c, s)
    loose = LoosePermits(c, s)
    total = s.free + held + loose
    if total > c.permits:
        return (
            f"{s.free} free + {held} held by actors + {loose} held by threads = {total} > pool {c.permits}:"
            " a permit is released (or owed back) while its actor still holds it: released twice"
        )
    if total < c.permits:
        return (
            f"{s.free} free + {held} held by actors + {loose} held by threads = {total} < pool {c.permits}:"
            " a permit leaked"
        )
    if s.free < 0:
        return f"the pool went negative ({s.free})"
    if len(s.ready) > held:
        return f"{len(s.ready)} ready tokens but only {held} actors hold permits"
    return None


def OneReadyToken(c: Constants, s: Vars) -> str | None:
    """An actor has at most one token (queued, taken or owed), and only while it is Scheduled or Draining."""
    for actor in Actors(c):
        n = Reservations(c, s, actor)
        if n > 1:
            return f"actor {actor} has {n} ready tokens (ready queue {list(s.ready)})"
        if actor in s.ready and s.gate[actor].phase != SCHEDULED:
            return f"a token of actor {actor} is queued while its gate is {s.gate[actor].show()}"
    return None


def AdmissionCounted(c: Constants, s: Vars) -> str | None:
    """The gate's count is exactly the producers between admit_begin and admit_end on that actor."""
    for actor in Actors(c):
        inside = InAdmission(c, s, actor)
        if s.gate[actor].inside != inside:
            return f"actor {actor}'s gate counts {s.gate[actor].inside} producers inside but {inside} are"
    return None


def EventConservation(c: Constants, s: Vars) -> str | None:
    """Published = processed + queued per actor; every settled post was published or handed back."""
    for actor in Actors(c):
        if s.published[actor] != s.processed[actor] + len(s.mailbox[actor]):
            return (
                f"actor {actor}: {s.published[actor]} published but {s.processed[actor]} processed"
                f" + {len(s.mailbox[actor])} queued"
            )
    # A post settles when its producer moves on to the next one; between its publish and
    # that moment it is published (or handed back) but not yet settled.
    unsettled = sum(
        1 for pc, _, _ in s.producer.values() if pc in (P_PUBLISHED, P_OWES_TOKEN, P_OWES_RELEASE)
    )
    settled = sum(k for _, k, _ in s.producer.values())
    published = sum(s.published.values())
    if published + s.returned != settled + unsettled:
        return (
            f"{settled} posts settled and {unsettled} unsettled, but {published} published"
            f" and {s.returned} handed back to their callers"
        )
    return None


# ============================================================================ how a person reads a state


def Show(c: Constants, s: Vars) -> dict[str, object]:
    return {
        "gate": {a: g.show() for a, g in s.gate.items()},
        "mailbox": {a: list(box) for a, box in s.mailbox.items()},
        "free permits": s.free,
        "ready": list(s.ready),
        "producer": {
            p: f"{pc}#{k}" + ("" if pc == P_IDLE or not ok else " ok")
            for p, (pc, k, ok) in s.producer.items()
        },
        "worker": {
            w: pc if actor is None else f"{pc} actor {actor} n={n}" + (" budget spent" if budget else "")
            for w, (pc, actor, n, budget) in s.worker.items()
        },
        "processed": s.processed.as_dict(),
        "returned": s.returned,
    }
