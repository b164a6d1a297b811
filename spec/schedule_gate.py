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

# ruff: noqa: F405  (names from the state module this one EXTENDS)
from __future__ import annotations

from collections.abc import Callable

from spec.language import WF, EventuallyAlways, Function, LeadsTo, SpecBuilder, at_least_one, emit

# EXTENDS schedule_gate_state: its constants, variables, operators and invariants are this module's too.
from spec.schedule_gate_state import *  # noqa: F403

# ============================================================================ CONSTANTS


ScheduleGate = SpecBuilder("schedule-gate", __doc__ or "")


@ScheduleGate.assume
def PositiveSizes(c: Constants) -> str | None:
    """Creation refuses zero actors, workers, permits, capacity or budget; so does the model."""
    return at_least_one(c, "actors", "workers", "permits", "mailbox_capacity", "max_per_drain")


@ScheduleGate.assume
def ScriptNamesActors(c: Constants) -> str | None:
    """Every scripted post names an actor of the model (an invalid index is refused before the gate)."""
    for i, actors in enumerate(c.script):
        for a in actors:
            if not 0 <= a < c.actors:
                return f"producer p{i} posts to actor {a}, which does not exist"
    return None


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


# Where each process is in its program (the pcs are spec.schedule_gate_state's): each action below
# names the counters it can fire from (``at=``), which its guard also checks; the explorer skips it
# elsewhere.
ScheduleGate.program_counter(Producers)(ProducerPc)
ScheduleGate.program_counter(Workers)(WorkerPc)


# ============================================================================ ACTIONS: producers
# An action whose thread hands a token to the ready queue or a permit to the pool ends with one of
# these, on the state where that thread has already moved on.


def TokenEnqueued(s: Vars, actor: int) -> object:
    """EnqueueReadyToken: the actor's token goes to the back of the ready queue (never full)."""
    return emit(s._replace(ready=(*s.ready, actor)), actor=actor)


def PermitReleased(s: Vars, actor: int | None, reason: str) -> object:
    """ReleasePermit: one permit goes back to the pool."""
    return emit(s._replace(free=s.free + 1), actor=actor, reason=reason)


@ScheduleGate.action(Producers, at=P_IDLE)
def SeeIdle(c: Constants, s: Vars, p: str) -> object:
    """The producer loads the gate and sees the actor Idle: it needs a permit (taken in a later step)."""
    post = PostAt(c, s, p, P_IDLE)
    if post is None or s.gate[post[1]].phase != IDLE:
        return None
    return s._replace(producer=s.producer.except_(p, (P_SAW_IDLE, post[0], False)))


@ScheduleGate.action(Producers, event="permit_acquire", at=P_SAW_IDLE)
def PermitAcquire(c: Constants, s: Vars, p: str) -> object:
    """It takes a runnable permit (atomic decrement); the actor may have become runnable since the load."""
    post = PostAt(c, s, p, P_SAW_IDLE)
    if post is None or s.free == 0:
        return None
    k, actor, item = post
    return emit(
        s._replace(free=s.free - 1, producer=s.producer.except_(p, (P_PERMIT, k, False))),
        actor=actor,
        item=item,
        granted=True,
    )


@ScheduleGate.action(Producers, event="permit_acquire", at=P_SAW_IDLE)
def PermitRefused(c: Constants, s: Vars, p: str) -> object:
    """The pool is empty and a re-read finds the actor still Idle: REJECTED, the caller keeps the event."""
    post = PostAt(c, s, p, P_SAW_IDLE)
    if post is None or s.free > 0:
        return None
    k, actor, item = post
    if s.gate[actor].phase != IDLE:
        return None
    return emit(
        s._replace(producer=s.producer.except_(p, (P_IDLE, k + 1, False)), returned=s.returned + 1),
        actor=actor,
        item=item,
        granted=False,
    )


@ScheduleGate.action(Producers, at=P_SAW_IDLE)
def RefusalSeesRunnable(c: Constants, s: Vars, p: str) -> object:
    """The pool is empty but the re-read finds the actor runnable now: no refusal, the post starts over."""
    post = PostAt(c, s, p, P_SAW_IDLE)
    if post is None or s.free > 0 or s.gate[post[1]].phase == IDLE:
        return None
    return s._replace(producer=s.producer.except_(p, (P_IDLE, post[0], False)))


def AdmitBy(
    c: Constants, s: Vars, p: str, pc: str, word: Callable[[Gate], Gate | None], permit: bool
) -> object:
    """The admission CAS of the post at ``pc``: ``word`` gives the gate's new word, None if the CAS fails."""
    post = PostAt(c, s, p, pc)
    if post is None:
        return None
    k, actor, item = post
    new = word(s.gate[actor])
    if new is None:
        return None
    return emit(
        s._replace(gate=s.gate.except_(actor, new), producer=s.producer.except_(p, (P_ADMITTED, k, False))),
        actor=actor,
        item=item,
        permit=permit,
    )


@ScheduleGate.action(Producers, event="admit_begin", at=P_PERMIT)
def AdmitFirst(c: Constants, s: Vars, p: str) -> object:
    """CAS Idle(n=0) -> Admitting(n=1): the permit this producer holds is now the actor's."""
    return AdmitBy(c, s, p, P_PERMIT, AdmitFirstWord, permit=True)


@ScheduleGate.action(Producers, at=P_PERMIT)
def AdmitCasLost(c: Constants, s: Vars, p: str) -> object:
    """The CAS from Idle fails: another producer made the actor runnable; the permit is surplus now.

    Its own step, apart from the release: the reference returns the permit with a separate atomic
    increment, and by then the actor may have gone Idle again (a real-thread trace showed it).
    """
    post = PostAt(c, s, p, P_PERMIT)
    if post is None or s.gate[post[1]] == IDLE_GATE:
        return None
    return s._replace(producer=s.producer.except_(p, (P_CAS_LOST, post[0], False)))


@ScheduleGate.action(Producers, event="permit_release", at=P_CAS_LOST)
def ReleaseSurplus(c: Constants, s: Vars, p: str) -> object:
    """The surplus permit goes back to the pool, whatever the gate is now; the same post starts over."""
    moved = ProducerMovesOn(c, s, p, P_CAS_LOST, posts_done=0)
    return None if moved is None else PermitReleased(*moved, "surplus")


@ScheduleGate.action(Producers, event="admit_begin", at=P_IDLE)
def AdmitJoin(c: Constants, s: Vars, p: str) -> object:
    """CAS n -> n + 1 on a runnable actor: it already holds a permit, so this producer needs none."""
    return AdmitBy(c, s, p, P_IDLE, AdmitJoinWord, permit=False)


def Push(
    c: Constants,
    s: Vars,
    p: str,
    actor: int,
    item: Item,
    if_full: tuple[str, int, bool],
    if_ok: tuple[str, int, bool],
) -> object:
    """The one atomic mailbox push: ok, or full — the event goes back to its caller; ``p`` moves on."""
    box = s.mailbox[actor]
    if len(box) >= c.mailbox_capacity:
        return emit(
            s._replace(producer=s.producer.except_(p, if_full), returned=s.returned + 1),
            actor=actor,
            item=item,
            result="full",
        )
    return emit(
        s._replace(
            mailbox=s.mailbox.except_(actor, (*box, item)),
            published=s.published.except_(actor, s.published[actor] + 1),
            producer=s.producer.except_(p, if_ok),
        ),
        actor=actor,
        item=item,
        result="ok",
    )


@ScheduleGate.action(Producers, event="publish", at=P_ADMITTED)
def Publish(c: Constants, s: Vars, p: str) -> object:
    """Push the event into the mailbox (one atomic push): ok, or full — then it goes back to the caller."""
    post = PostAt(c, s, p, P_ADMITTED)
    if post is None:
        return None
    k, actor, item = post
    return Push(c, s, p, actor, item, if_full=(P_PUBLISHED, k, False), if_ok=(P_PUBLISHED, k, True))


@ScheduleGate.action(Producers, event="admit_end", at=P_PUBLISHED)
def AdmitEnd(c: Constants, s: Vars, p: str) -> object:
    """CAS n -> n - 1 with this publish's result; the last producer out gets the decision's directive."""
    return AdmitEndBy(c, s, p, AdmitEndWord)


def AdmitEndBy(c: Constants, s: Vars, p: str, decide: Callable[[Gate, bool], tuple[Gate, str]]) -> object:
    """AdmitEnd with the gate's new word and the directive given by ``decide(old word, publish ok)``."""
    post = PostAt(c, s, p, P_PUBLISHED)
    if post is None:
        return None
    k, actor, item = post
    ok = s.producer[p][2]
    old = s.gate[actor]
    new, directive = decide(old, ok)
    next_pc = Owes(directive, P_OWES_TOKEN, P_OWES_RELEASE, P_IDLE)
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


@ScheduleGate.action(Producers, event="token_enqueue", at=P_OWES_TOKEN)
def ProducerEnqueue(c: Constants, s: Vars, p: str) -> object:
    """EnqueueReadyToken: the last producer puts the actor's token in the ready queue (never full)."""
    moved = ProducerMovesOn(c, s, p, P_OWES_TOKEN, posts_done=1)
    return None if moved is None else TokenEnqueued(*moved)


@ScheduleGate.action(Producers, event="permit_release", at=P_OWES_RELEASE)
def ProducerRelease(c: Constants, s: Vars, p: str) -> object:
    """ReleasePermit: the actor went Idle on this producer's CAS; its permit goes back to the pool."""
    moved = ProducerMovesOn(c, s, p, P_OWES_RELEASE, posts_done=1)
    return None if moved is None else PermitReleased(*moved, "idle")


# ============================================================================ ACTIONS: workers


@ScheduleGate.action(Workers, event="take", at=W_IDLE)
def Take(c: Constants, s: Vars, w: str) -> object:
    """An idle worker removes the oldest actor token from the ready queue."""
    if s.worker[w][0] != W_IDLE or not s.ready:
        return None
    actor = s.ready[0]
    return emit(
        s._replace(ready=s.ready[1:], worker=s.worker.except_(w, (W_TOOK, actor, 0, False))), actor=actor
    )


@ScheduleGate.action(Workers, event="drain_begin", at=W_TOOK)
def DrainBegin(c: Constants, s: Vars, w: str) -> object:
    """CAS Scheduled -> Draining: the token's worker is now the actor's one drainer."""
    actor = DrainerAt(s, w, W_TOOK)
    if actor is None:
        return None
    new = DrainBeginWord(s.gate[actor])
    if new is None:
        return None
    return emit(
        s._replace(gate=s.gate.except_(actor, new), worker=s.worker.except_(w, (W_DRAIN, actor, 0, False))),
        actor=actor,
    )


@ScheduleGate.action(Workers, event="process", at=W_DRAIN)
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


@ScheduleGate.action(Workers, at=W_DRAIN)
def FoundEmpty(c: Constants, s: Vars, w: str) -> object:
    """The pop finds the mailbox empty: the drain is over, its decision comes next (a separate CAS)."""
    pc, actor, n, _ = s.worker[w]
    if pc != W_DRAIN or n >= c.max_per_drain:
        return None
    assert actor is not None
    if s.mailbox[actor]:
        return None
    return s._replace(worker=s.worker.except_(w, (W_DECIDE, actor, n, False)))


@ScheduleGate.action(Workers, at=W_DRAIN)
def BudgetSpent(c: Constants, s: Vars, w: str) -> object:
    """The drain processed max_per_drain events: it yields its turn without looking at the mailbox."""
    pc, actor, n, _ = s.worker[w]
    if pc != W_DRAIN or n < c.max_per_drain:
        return None
    return s._replace(worker=s.worker.except_(w, (W_DECIDE, actor, n, True)))


@ScheduleGate.action(Workers, event="drain_end", at=W_DECIDE)
def DrainEnd(c: Constants, s: Vars, w: str) -> object:
    """The end-of-drain CAS: EnqueueReadyToken, FinalizationDeferred (producers inside) or ReleasePermit."""
    return DrainEndBy(c, s, w, DrainEndWord, deferred_pc=W_IDLE)


def DrainEndBy(
    c: Constants, s: Vars, w: str, decide: Callable[[Gate, bool], tuple[Gate, str]], deferred_pc: str
) -> object:
    """DrainEnd by the CAS ``decide(old word, budget spent)``; a deferring worker goes to ``deferred_pc``."""
    pc, actor, n, budget = s.worker[w]
    if pc != W_DECIDE:
        return None
    assert actor is not None
    new, directive = decide(s.gate[actor], budget)
    next_pc = Owes(directive, W_OWES_TOKEN, W_OWES_RELEASE, deferred_pc)
    return emit(
        s._replace(
            gate=s.gate.except_(actor, new),
            worker=s.worker.except_(w, (next_pc, None if next_pc == W_IDLE else actor, 0, False)),
        ),
        actor=actor,
        directive=directive,
        processed=n,
    )


@ScheduleGate.action(Workers, event="token_enqueue", at=W_OWES_TOKEN)
def WorkerEnqueue(c: Constants, s: Vars, w: str) -> object:
    """EnqueueReadyToken: the worker puts the actor's token at the back of the ready queue."""
    moved = WorkerMovesOn(s, w, W_OWES_TOKEN)
    return None if moved is None else TokenEnqueued(*moved)


@ScheduleGate.action(Workers, event="permit_release", at=W_OWES_RELEASE)
def WorkerRelease(c: Constants, s: Vars, w: str) -> object:
    """ReleasePermit: the actor went Idle on the worker's CAS; its permit goes back to the pool."""
    moved = WorkerMovesOn(s, w, W_OWES_RELEASE)
    return None if moved is None else PermitReleased(*moved, "idle")


# ============================================================================ INVARIANTS
# The state predicates of spec.schedule_gate_state, checked in every reachable state.

ScheduleGate.invariant(NoLostWakeup)
ScheduleGate.invariant(OneDrainerPerActor)
ScheduleGate.invariant(PermitsConserved)
ScheduleGate.invariant(OneReadyToken)
ScheduleGate.invariant(AdmissionCounted)
ScheduleGate.invariant(EventConservation)


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


# How a person reads a state (counterexamples): spec.schedule_gate_state.Show.
ScheduleGate.describe(Show)


SPEC = ScheduleGate.spec
