"""MODULE ScheduleGate — PrivateServer's runnable permits + Schedule Gate (seeds.md, design 000, older).

I/O workers (*producers*) turn I/O results into events for actors. Each actor
has a mailbox and a **Schedule Gate**: one atomic word holding

* a phase ``Idle | Admitting | Scheduled | Draining | DrainCompleting``,
* a *pending* flag (a publish succeeded in the current admission window),
* a *needs-reschedule* flag (a publish succeeded while the actor was draining),
* the count of producers in the middle of admission,

changed **only by compare-and-swap**. The ready queue holds *actor tokens* ("a
chance to run this actor"), not events. An actor that is not runnable (Idle)
needs a **runnable permit** from a bounded pool before anything is published to
it; no permit, no publish (REJECTED, the event stays with its caller). The
permit stays with the actor while it is Admitting, Scheduled, Draining or
DrainCompleting, so ready tokens never outnumber permits: the pool reserves
ready-queue capacity.

A producer registers in the gate (``admit_begin``: the first one moves Idle ->
Admitting with the permit it holds; later ones add one to the count), publishes
(``publish``: ok, or full — the event goes back to the caller), and leaves
(``admit_end``): the CAS gives it a directive. A worker takes a token, moves the
gate Scheduled -> Draining, processes events up to its budget, and when it
finds the mailbox empty decides with one CAS (``drain_end``): if producers are
still mid-admission it defers (FinalizationDeferred, DrainCompleting) and the
*last* producer to leave decides in its place — EnqueueReadyToken if anything
was published since the drain's last look, else ReleasePermit (Idle).

Each action is one atomic step of the real code: one CAS, one atomic
increment of the permit counter, one mailbox push or pop, one ready-queue
operation. A CAS that fails and retries is folded into its guard: the action is
enabled exactly when the CAS succeeds against the current word, and the load
before it decides nothing the action does not decide again (see
docs/schedule-gate.md, "Atomicity").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from spec.language import WF, EventuallyAlways, Function, LeadsTo, SpecBuilder, emit

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
class Constants:
    actors: int
    workers: int
    permits: int  # the size of the runnable-permit pool
    mailbox_capacity: int
    max_per_drain: int  # the drain budget, counted in events
    # script[i] lists the actors producer p<i> posts to, in order.
    script: tuple[tuple[int, ...], ...] = ()

    def producer_names(self) -> tuple[str, ...]:
        return tuple(f"p{i}" for i in range(len(self.script)))

    def worker_names(self) -> tuple[str, ...]:
        return tuple(f"w{i}" for i in range(self.workers))

    def post_of(self, producer: str, k: int) -> tuple[int, Item] | None:
        """The k-th post of ``producer``: (actor, event), or None when its script is done."""
        actors = self.script[int(producer[1:])]
        if k >= len(actors):
            return None
        return actors[k], f"{producer}.{k}"

    def header(self) -> dict[str, int]:
        """The ``config`` object of a schedule-gate trace header for this model."""
        return {
            "actors": self.actors,
            "workers": self.workers,
            "permits": self.permits,
            "mailbox_capacity": self.mailbox_capacity,
            "max_per_drain": self.max_per_drain,
        }


def Actors(c: Constants) -> tuple[int, ...]:
    return tuple(range(c.actors))


def Producers(c: Constants) -> tuple[str, ...]:
    return c.producer_names()


def Workers(c: Constants) -> tuple[str, ...]:
    return c.worker_names()


ScheduleGate = SpecBuilder("schedule-gate", __doc__ or "")


@ScheduleGate.assume
def PositiveSizes(c: Constants) -> str | None:
    """Creation refuses zero actors, workers, permits, capacity or budget; so does the model."""
    for name in ("actors", "workers", "permits", "mailbox_capacity", "max_per_drain"):
        if getattr(c, name) < 1:
            return f"{name} must be at least 1"
    return None


@ScheduleGate.assume
def ScriptNamesActors(c: Constants) -> str | None:
    """Every scripted post names an actor of the model (an invalid index is refused before the gate)."""
    for i, actors in enumerate(c.script):
        for a in actors:
            if not 0 <= a < c.actors:
                return f"producer p{i} posts to actor {a}, which does not exist"
    return None


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
#   permit -(CAS lost, permit_release surplus)-> idle (retry the same post)
P_IDLE, P_SAW_IDLE, P_PERMIT, P_ADMITTED, P_PUBLISHED, P_OWES_TOKEN, P_OWES_RELEASE = (
    "idle",
    "saw-idle",
    "permit",
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

# ============================================================================ INIT


@ScheduleGate.init
def Init(c: Constants) -> list[Vars]:
    actors = Actors(c)
    return [
        Vars(
            gate=Function.const(actors, IDLE_GATE),
            mailbox=Function.const(actors, ()),
            free=c.permits,
            ready=(),
            producer=Function.const(Producers(c), (P_IDLE, 0, False)),
            worker=Function.const(Workers(c), (W_IDLE, None, 0, False)),
            published=Function.const(actors, 0),
            processed=Function.const(actors, 0),
            returned=0,
        )
    ]


# ============================================================================ the gate's CAS transitions
# Pure functions of the old word: the table of docs/schedule-gate.md, shared by the actions.


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


def _owes(directive: str, token: str, release: str, otherwise: str) -> str:
    return token if directive == ENQUEUE else release if directive == RELEASE else otherwise


# ============================================================================ ACTIONS: producers


@ScheduleGate.action(Producers)
def SeeIdle(c: Constants, s: Vars, p: str) -> object:
    """The producer loads the gate and sees the actor Idle: it needs a permit (taken in a later step)."""
    pc, k, _ = s.producer[p]
    post = c.post_of(p, k)
    if pc != P_IDLE or post is None or s.gate[post[0]].phase != IDLE:
        return None
    return s._replace(producer=s.producer.except_(p, (P_SAW_IDLE, k, False)))


@ScheduleGate.action(Producers, event="permit_acquire")
def PermitAcquire(c: Constants, s: Vars, p: str) -> object:
    """It takes a runnable permit (atomic decrement); the actor may have become runnable since the load."""
    pc, k, _ = s.producer[p]
    if pc != P_SAW_IDLE or s.free == 0:
        return None
    post = c.post_of(p, k)
    assert post is not None
    actor, item = post
    return emit(
        s._replace(free=s.free - 1, producer=s.producer.except_(p, (P_PERMIT, k, False))),
        actor=actor,
        item=item,
        granted=True,
    )


@ScheduleGate.action(Producers, event="permit_acquire")
def PermitRefused(c: Constants, s: Vars, p: str) -> object:
    """The pool is empty and a re-read finds the actor still Idle: REJECTED, the caller keeps the event."""
    pc, k, _ = s.producer[p]
    if pc != P_SAW_IDLE or s.free > 0:
        return None
    post = c.post_of(p, k)
    assert post is not None
    actor, item = post
    if s.gate[actor].phase != IDLE:
        return None
    return emit(
        s._replace(producer=s.producer.except_(p, (P_IDLE, k + 1, False)), returned=s.returned + 1),
        actor=actor,
        item=item,
        granted=False,
    )


@ScheduleGate.action(Producers)
def RefusalSeesRunnable(c: Constants, s: Vars, p: str) -> object:
    """The pool is empty but the re-read finds the actor runnable now: no refusal, the post starts over."""
    pc, k, _ = s.producer[p]
    if pc != P_SAW_IDLE or s.free > 0:
        return None
    post = c.post_of(p, k)
    assert post is not None
    if s.gate[post[0]].phase == IDLE:
        return None
    return s._replace(producer=s.producer.except_(p, (P_IDLE, k, False)))


@ScheduleGate.action(Producers, event="admit_begin")
def AdmitFirst(c: Constants, s: Vars, p: str) -> object:
    """CAS Idle(n=0) -> Admitting(n=1): the permit this producer holds is now the actor's."""
    pc, k, _ = s.producer[p]
    if pc != P_PERMIT:
        return None
    post = c.post_of(p, k)
    assert post is not None
    actor, item = post
    new = AdmitFirstWord(s.gate[actor])
    if new is None:
        return None
    return emit(
        s._replace(gate=s.gate.except_(actor, new), producer=s.producer.except_(p, (P_ADMITTED, k, False))),
        actor=actor,
        item=item,
        permit=True,
    )


@ScheduleGate.action(Producers, event="permit_release")
def ReleaseSurplus(c: Constants, s: Vars, p: str) -> object:
    """The CAS from Idle failed (another producer made the actor runnable): give the permit back, retry."""
    pc, k, _ = s.producer[p]
    if pc != P_PERMIT:
        return None
    post = c.post_of(p, k)
    assert post is not None
    actor, _ = post
    if s.gate[actor] == IDLE_GATE:
        return None
    return emit(
        s._replace(free=s.free + 1, producer=s.producer.except_(p, (P_IDLE, k, False))),
        actor=actor,
        reason="surplus",
    )


@ScheduleGate.action(Producers, event="admit_begin")
def AdmitJoin(c: Constants, s: Vars, p: str) -> object:
    """CAS n -> n + 1 on a runnable actor: it already holds a permit, so this producer needs none."""
    pc, k, _ = s.producer[p]
    post = c.post_of(p, k)
    if pc != P_IDLE or post is None:
        return None
    actor, item = post
    new = AdmitJoinWord(s.gate[actor])
    if new is None:
        return None
    return emit(
        s._replace(gate=s.gate.except_(actor, new), producer=s.producer.except_(p, (P_ADMITTED, k, False))),
        actor=actor,
        item=item,
        permit=False,
    )


@ScheduleGate.action(Producers, event="publish")
def Publish(c: Constants, s: Vars, p: str) -> object:
    """Push the event into the mailbox (one atomic push): ok, or full — then it goes back to the caller."""
    pc, k, _ = s.producer[p]
    if pc != P_ADMITTED:
        return None
    post = c.post_of(p, k)
    assert post is not None
    actor, item = post
    box = s.mailbox[actor]
    if len(box) >= c.mailbox_capacity:
        return emit(
            s._replace(producer=s.producer.except_(p, (P_PUBLISHED, k, False)), returned=s.returned + 1),
            actor=actor,
            item=item,
            result="full",
        )
    return emit(
        s._replace(
            mailbox=s.mailbox.except_(actor, (*box, item)),
            published=s.published.except_(actor, s.published[actor] + 1),
            producer=s.producer.except_(p, (P_PUBLISHED, k, True)),
        ),
        actor=actor,
        item=item,
        result="ok",
    )


@ScheduleGate.action(Producers, event="admit_end")
def AdmitEnd(c: Constants, s: Vars, p: str) -> object:
    """CAS n -> n - 1 with this publish's result; the last producer out gets the decision's directive."""
    pc, k, ok = s.producer[p]
    if pc != P_PUBLISHED:
        return None
    post = c.post_of(p, k)
    assert post is not None
    actor, item = post
    old = s.gate[actor]
    new, directive = AdmitEndWord(old, ok)
    next_pc = _owes(directive, P_OWES_TOKEN, P_OWES_RELEASE, P_IDLE)
    return emit(
        s._replace(
            gate=s.gate.except_(actor, new),
            producer=s.producer.except_(p, (next_pc, k + 1 if next_pc == P_IDLE else k, ok)),
        ),
        actor=actor,
        item=item,
        directive=directive,
        deferred=old.phase == COMPLETING and directive != NO_ACTION,
    )


@ScheduleGate.action(Producers, event="token_enqueue")
def ProducerEnqueue(c: Constants, s: Vars, p: str) -> object:
    """EnqueueReadyToken: the last producer puts the actor's token in the ready queue (never full)."""
    pc, k, _ = s.producer[p]
    if pc != P_OWES_TOKEN:
        return None
    post = c.post_of(p, k)
    assert post is not None
    actor, _ = post
    return emit(
        s._replace(ready=(*s.ready, actor), producer=s.producer.except_(p, (P_IDLE, k + 1, False))),
        actor=actor,
    )


@ScheduleGate.action(Producers, event="permit_release")
def ProducerRelease(c: Constants, s: Vars, p: str) -> object:
    """ReleasePermit: the actor went Idle on this producer's CAS; its permit goes back to the pool."""
    pc, k, _ = s.producer[p]
    if pc != P_OWES_RELEASE:
        return None
    post = c.post_of(p, k)
    assert post is not None
    actor, _ = post
    return emit(
        s._replace(free=s.free + 1, producer=s.producer.except_(p, (P_IDLE, k + 1, False))),
        actor=actor,
        reason="idle",
    )


# ============================================================================ ACTIONS: workers


@ScheduleGate.action(Workers, event="take")
def Take(c: Constants, s: Vars, w: str) -> object:
    """An idle worker removes the oldest actor token from the ready queue."""
    if s.worker[w][0] != W_IDLE or not s.ready:
        return None
    actor = s.ready[0]
    return emit(
        s._replace(ready=s.ready[1:], worker=s.worker.except_(w, (W_TOOK, actor, 0, False))), actor=actor
    )


@ScheduleGate.action(Workers, event="drain_begin")
def DrainBegin(c: Constants, s: Vars, w: str) -> object:
    """CAS Scheduled -> Draining: the token's worker is now the actor's one drainer."""
    pc, actor, _, _ = s.worker[w]
    if pc != W_TOOK:
        return None
    assert actor is not None
    new = DrainBeginWord(s.gate[actor])
    if new is None:
        return None
    return emit(
        s._replace(gate=s.gate.except_(actor, new), worker=s.worker.except_(w, (W_DRAIN, actor, 0, False))),
        actor=actor,
    )


@ScheduleGate.action(Workers, event="process")
def Process(c: Constants, s: Vars, w: str) -> object:
    """Pop the mailbox's oldest event (the single consumer's atomic pop) and run the actor on it."""
    pc, actor, n, _ = s.worker[w]
    if pc != W_DRAIN or n >= c.max_per_drain:
        return None
    assert actor is not None
    box = s.mailbox[actor]
    if not box:
        return None
    return emit(
        s._replace(
            mailbox=s.mailbox.except_(actor, box[1:]),
            processed=s.processed.except_(actor, s.processed[actor] + 1),
            worker=s.worker.except_(w, (W_DRAIN, actor, n + 1, False)),
        ),
        actor=actor,
        item=box[0],
    )


@ScheduleGate.action(Workers)
def FoundEmpty(c: Constants, s: Vars, w: str) -> object:
    """The pop finds the mailbox empty: the drain is over, its decision comes next (a separate CAS)."""
    pc, actor, n, _ = s.worker[w]
    if pc != W_DRAIN or n >= c.max_per_drain:
        return None
    assert actor is not None
    if s.mailbox[actor]:
        return None
    return s._replace(worker=s.worker.except_(w, (W_DECIDE, actor, n, False)))


@ScheduleGate.action(Workers)
def BudgetSpent(c: Constants, s: Vars, w: str) -> object:
    """The drain processed max_per_drain events: it yields its turn without looking at the mailbox."""
    pc, actor, n, _ = s.worker[w]
    if pc != W_DRAIN or n < c.max_per_drain:
        return None
    return s._replace(worker=s.worker.except_(w, (W_DECIDE, actor, n, True)))


@ScheduleGate.action(Workers, event="drain_end")
def DrainEnd(c: Constants, s: Vars, w: str) -> object:
    """The end-of-drain CAS: EnqueueReadyToken, FinalizationDeferred (producers inside) or ReleasePermit."""
    pc, actor, n, budget = s.worker[w]
    if pc != W_DECIDE:
        return None
    assert actor is not None
    new, directive = DrainEndWord(s.gate[actor], budget)
    next_pc = _owes(directive, W_OWES_TOKEN, W_OWES_RELEASE, W_IDLE)
    return emit(
        s._replace(
            gate=s.gate.except_(actor, new),
            worker=s.worker.except_(w, (next_pc, None if next_pc == W_IDLE else actor, 0, False)),
        ),
        actor=actor,
        directive=directive,
        processed=n,
    )


@ScheduleGate.action(Workers, event="token_enqueue")
def WorkerEnqueue(c: Constants, s: Vars, w: str) -> object:
    """EnqueueReadyToken: the worker puts the actor's token at the back of the ready queue."""
    pc, actor, _, _ = s.worker[w]
    if pc != W_OWES_TOKEN:
        return None
    assert actor is not None
    return emit(
        s._replace(ready=(*s.ready, actor), worker=s.worker.except_(w, (W_IDLE, None, 0, False))),
        actor=actor,
    )


@ScheduleGate.action(Workers, event="permit_release")
def WorkerRelease(c: Constants, s: Vars, w: str) -> object:
    """ReleasePermit: the actor went Idle on the worker's CAS; its permit goes back to the pool."""
    pc, actor, _, _ = s.worker[w]
    if pc != W_OWES_RELEASE:
        return None
    return emit(
        s._replace(free=s.free + 1, worker=s.worker.except_(w, (W_IDLE, None, 0, False))),
        actor=actor,
        reason="idle",
    )


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
        1 for p, (pc, k, _) in s.producer.items() if pc == P_OWES_TOKEN and _post_actor(c, p, k) == actor
    )
    return held


def _post_actor(c: Constants, p: str, k: int) -> int | None:
    post = c.post_of(p, k)
    return None if post is None else post[0]


def LoosePermits(c: Constants, s: Vars) -> int:
    """Permits held by threads rather than actors: taken but not yet attached, or owed back to the pool."""
    loose = sum(1 for pc, _, _ in s.producer.values() if pc in (P_PERMIT, P_OWES_RELEASE))
    loose += sum(1 for pc, _, _, _ in s.worker.values() if pc == W_OWES_RELEASE)
    return loose


def ActorsHoldingPermits(c: Constants, s: Vars) -> int:
    return sum(1 for g in s.gate.values() if g.phase != IDLE)


def InAdmission(c: Constants, s: Vars, actor: int) -> int:
    """Producers between admit_begin and admit_end on the actor."""
    return sum(
        1
        for p, (pc, k, _) in s.producer.items()
        if pc in (P_ADMITTED, P_PUBLISHED) and _post_actor(c, p, k) == actor
    )


# ============================================================================ INVARIANTS


@ScheduleGate.invariant
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


@ScheduleGate.invariant
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


@ScheduleGate.invariant
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


@ScheduleGate.invariant
def OneReadyToken(c: Constants, s: Vars) -> str | None:
    """An actor has at most one token (queued, taken or owed), and only while it is Scheduled or Draining."""
    for actor in Actors(c):
        n = Reservations(c, s, actor)
        if n > 1:
            return f"actor {actor} has {n} ready tokens (ready queue {list(s.ready)})"
        if actor in s.ready and s.gate[actor].phase != SCHEDULED:
            return f"a token of actor {actor} is queued while its gate is {s.gate[actor].show()}"
    return None


@ScheduleGate.invariant
def AdmissionCounted(c: Constants, s: Vars) -> str | None:
    """The gate's count is exactly the producers between admit_begin and admit_end on that actor."""
    for actor in Actors(c):
        inside = InAdmission(c, s, actor)
        if s.gate[actor].inside != inside:
            return f"actor {actor}'s gate counts {s.gate[actor].inside} producers inside but {inside} are"
    return None


@ScheduleGate.invariant
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


# ============================================================================ FAIRNESS & LIVENESS

# Producers and workers are threads that the OS keeps running; the permit pool and
# the ready queue are passive objects, changed only by their steps.
ScheduleGate.fairness(WF(Workers), WF(Producers))


def AllProcessed(c: Constants, s: Vars) -> bool:
    return all(s.published[a] == s.processed[a] for a in Actors(c))


ScheduleGate.property(
    EventuallyAlways(
        "EveryAcceptedEventProcessed",
        AllProcessed,
        "every event published to a mailbox is eventually processed (no event waits forever)",
    )
)
ScheduleGate.property(
    EventuallyAlways(
        "EveryPermitReturned",
        lambda c, s: s.free == c.permits,
        "every permit taken is eventually back in the pool once its actor goes idle",
    )
)
ScheduleGate.property(
    LeadsTo(
        "DeferredDecisionMade",
        lambda c, s: any(g.phase == COMPLETING for g in s.gate.values()),
        lambda c, s: all(g.phase != COMPLETING for g in s.gate.values()),
        "a deferred end-of-drain decision is eventually made by the last producer",
    )
)


# ============================================================================ SYMMETRY & DONE


@ScheduleGate.symmetry
def WorkersAreInterchangeable(c: Constants, s: Vars) -> Vars:
    """No state refers to a worker by name, so worker local states can be sorted."""
    return s._replace(worker=s.worker.with_values(sorted(s.worker.values(), key=_worker_key)))


def _worker_key(w: tuple[str, int | None, int, bool]) -> tuple[object, ...]:
    pc, actor, n, budget = w
    return (pc, -1 if actor is None else actor, n, budget)


@ScheduleGate.terminal
def Done(c: Constants, s: Vars) -> bool:
    """Every producer finished its script, every worker is idle, every actor Idle with an empty mailbox."""
    producers_done = all(pc == P_IDLE and c.post_of(p, k) is None for p, (pc, k, _) in s.producer.items())
    if not producers_done or s.ready or any(w[0] != W_IDLE for w in s.worker.values()):
        return False
    return all(g == IDLE_GATE for g in s.gate.values()) and not any(s.mailbox.values())


@ScheduleGate.describe
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


SPEC = ScheduleGate.spec
