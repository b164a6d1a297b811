"""Seeded bugs in the Schedule Gate spec: each must be caught, with a shortest counterexample.

Each mutant is the design with one step of the gate protocol done the way a
port could get it wrong. The expected property and counterexample length are
what ``lanecheck check schedule-gate --variant NAME`` must report; the tests
assert both, and that a depth bound one step shorter finds nothing.
"""

from __future__ import annotations

from model_checks.mutant import SpecMutant
from spec import schedule_gate as sg
from spec.language import Action, emit, variant
from spec.schedule_gate import SPEC
from spec.schedule_gate_state import (
    ADMITTING,
    COMPLETING,
    DEFERRED,
    ENQUEUE,
    IDLE,
    IDLE_GATE,
    NO_ACTION,
    P_IDLE,
    P_PUBLISHED,
    RELEASE,
    SCHEDULED,
    W_DECIDE,
    W_OWES_RELEASE,
    W_OWES_TOKEN,
    Constants,
    Gate,
    Producers,
    Vars,
)

# --- check-then-act: a producer of a runnable actor publishes without registering -----------

P_CHECKED = "checked"


def CheckRunnable(c: Constants, s: Vars, p: str) -> object:
    """BUG: the producer *loads* the gate, sees a runnable actor, and goes to publish — no count + 1."""
    pc, k, _ = s.producer[p]
    post = c.post_of(p, k)
    if pc != P_IDLE or post is None or s.gate[post[0]].phase == IDLE:
        return None
    return s._replace(producer=s.producer.except_(p, (P_CHECKED, k, False)))


def PublishUnregistered(c: Constants, s: Vars, p: str) -> object:
    """BUG: ... and publishes later, with nothing in the gate telling the drainer to wait for it."""
    pc, k, _ = s.producer[p]
    if pc != P_CHECKED:
        return None
    post = c.post_of(p, k)
    assert post is not None
    actor, item = post
    box = s.mailbox[actor]
    if len(box) >= c.mailbox_capacity:
        return emit(
            s._replace(producer=s.producer.except_(p, (P_IDLE, k + 1, False)), returned=s.returned + 1),
            actor=actor,
            item=item,
            result="full",
        )
    return emit(
        s._replace(
            mailbox=s.mailbox.except_(actor, (*box, item)),
            published=s.published.except_(actor, s.published[actor] + 1),
            producer=s.producer.except_(p, (P_IDLE, k + 1, False)),
        ),
        actor=actor,
        item=item,
        result="ok",
    )


CHECK_THEN_ACT = variant(
    SPEC,
    "check-then-act",
    replace_actions={"AdmitJoin": Action("CheckRunnable", CheckRunnable, (Producers,), None)},
    add_actions=[Action("PublishUnregistered", PublishUnregistered, (Producers,), "publish")],
)

# --- release-before-decision: the worker gives the permit back when it defers ---------------


def DrainEndReleasingOnDefer(c: Constants, s: Vars, w: str) -> object:
    """BUG: FinalizationDeferred is taken as "this worker is done with the actor": it returns the permit."""
    pc, actor, n, budget = s.worker[w]
    if pc != W_DECIDE:
        return None
    assert actor is not None
    new, directive = sg.DrainEndWord(s.gate[actor], budget)
    owes = {ENQUEUE: W_OWES_TOKEN, RELEASE: W_OWES_RELEASE, DEFERRED: W_OWES_RELEASE}[directive]
    return emit(
        s._replace(gate=s.gate.except_(actor, new), worker=s.worker.except_(w, (owes, actor, 0, False))),
        actor=actor,
        directive=directive,
        processed=n,
    )


RELEASE_BEFORE_DECISION = variant(
    SPEC, "release-before-decision", replace_actions={"DrainEnd": DrainEndReleasingOnDefer}
)

# --- idle-ignoring-producers: the drainer goes Idle without looking at the producer count ------


def DrainEndIgnoringProducers(c: Constants, s: Vars, w: str) -> object:
    """BUG: the end-of-drain CAS never defers: an empty mailbox and no flag means Idle, count or not."""
    pc, actor, n, budget = s.worker[w]
    if pc != W_DECIDE:
        return None
    assert actor is not None
    g = s.gate[actor]
    if budget or g.resched:
        new, directive = Gate(SCHEDULED, False, False, g.inside), ENQUEUE
    else:
        new, directive = Gate(IDLE, False, False, g.inside), RELEASE  # keeps the count, ignores it
    owes = W_OWES_TOKEN if directive == ENQUEUE else W_OWES_RELEASE
    return emit(
        s._replace(gate=s.gate.except_(actor, new), worker=s.worker.except_(w, (owes, actor, 0, False))),
        actor=actor,
        directive=directive,
        processed=n,
    )


IDLE_IGNORING_PRODUCERS = variant(
    SPEC, "idle-ignoring-producers", replace_actions={"DrainEnd": DrainEndIgnoringProducers}
)

# --- second-token: a producer that published to a Scheduled actor enqueues a token too -------


def AdmitEndEnqueueingAgain(c: Constants, s: Vars, p: str) -> object:
    """BUG: "I published, so the actor must run": a producer leaving a Scheduled gate enqueues a token."""
    pc, k, ok = s.producer[p]
    if pc != P_PUBLISHED:
        return None
    post = c.post_of(p, k)
    assert post is not None
    actor, item = post
    old = s.gate[actor]
    new, directive = sg.AdmitEndWord(old, ok)
    if old.phase == SCHEDULED and ok:
        directive = ENQUEUE
    next_pc = {ENQUEUE: sg.P_OWES_TOKEN, RELEASE: sg.P_OWES_RELEASE}.get(directive, P_IDLE)
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


SECOND_TOKEN = variant(SPEC, "second-token", replace_actions={"AdmitEnd": AdmitEndEnqueueingAgain})

# --- last-outcome-only: the last producer decides from its own publish alone ------------------


def AdmitEndOwnOutcome(g: Gate, ok: bool) -> tuple[Gate, str]:
    """BUG: the last producer out decides from *its* publish result, forgetting the window's flag."""
    n = g.inside - 1
    if g.phase in (ADMITTING, COMPLETING) and n == 0:
        return (Gate(SCHEDULED, False, False, 0), ENQUEUE) if ok else (IDLE_GATE, RELEASE)
    return sg.AdmitEndWord(g, ok)


def AdmitEndLastOutcomeOnly(c: Constants, s: Vars, p: str) -> object:
    pc, k, ok = s.producer[p]
    if pc != P_PUBLISHED:
        return None
    post = c.post_of(p, k)
    assert post is not None
    actor, item = post
    old = s.gate[actor]
    new, directive = AdmitEndOwnOutcome(old, ok)
    next_pc = {ENQUEUE: sg.P_OWES_TOKEN, RELEASE: sg.P_OWES_RELEASE}.get(directive, P_IDLE)
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


AdmitEndLastOutcomeOnly.__doc__ = AdmitEndOwnOutcome.__doc__
LAST_OUTCOME_ONLY = variant(SPEC, "last-outcome-only", replace_actions={"AdmitEnd": AdmitEndLastOutcomeOnly})

MUTANTS: dict[str, SpecMutant] = {
    m.name: m
    for m in [
        SpecMutant(
            "check-then-act",
            "admission by load-and-check, without adding the producer to the gate's count",
            CHECK_THEN_ACT,
            expect="NoLostWakeup",
            length=7,
        ),
        SpecMutant(
            "release-before-decision",
            "the worker returning the permit when it defers, before the last producer decides",
            RELEASE_BEFORE_DECISION,
            expect="PermitsConserved",
            length=12,
            overrides={"max_per_drain": 2},
        ),
        SpecMutant(
            "idle-ignoring-producers",
            "the worker going Idle without consulting the producers still inside the gate",
            IDLE_IGNORING_PRODUCERS,
            expect="NoLostWakeup",
            length=13,
            overrides={"max_per_drain": 2},
        ),
        SpecMutant(
            "second-token",
            "a producer publishing to a Scheduled actor enqueuing a second ready token",
            SECOND_TOKEN,
            expect="OneReadyToken",
            length=8,
            overrides={"mailbox_capacity": 2},
        ),
        SpecMutant(
            "last-outcome-only",
            "the last producer deciding from its own publish result, not the window's flag",
            LAST_OUTCOME_ONLY,
            expect="NoLostWakeup",
            length=8,
        ),
    ]
}
