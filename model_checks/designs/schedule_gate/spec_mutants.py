"""Seeded bugs in the Schedule Gate spec: each must be caught, with a shortest counterexample.

Each mutant is the design with one step of the gate protocol done the way a
port could get it wrong. The expected property and counterexample length are
what ``lanecheck check schedule-gate --variant NAME`` must report; the tests
assert both, and that a depth bound one step shorter finds nothing.
"""

from __future__ import annotations

from model_checks.mutant import SpecMutant, by_name
from model_checks.spec_mutation import split
from spec import schedule_gate as sg
from spec.language import variant
from spec.schedule_gate import SPEC
from spec.schedule_gate_state import (
    ADMITTING,
    COMPLETING,
    ENQUEUE,
    IDLE,
    IDLE_GATE,
    P_IDLE,
    RELEASE,
    SCHEDULED,
    W_OWES_RELEASE,
    Constants,
    Gate,
    Vars,
)

# --- check-then-act: a producer of a runnable actor publishes without registering -----------

P_CHECKED = "checked"


def CheckRunnable(c: Constants, s: Vars, p: str) -> object:
    """BUG: the producer *loads* the gate, sees a runnable actor, and goes to publish — no count + 1."""
    post = sg.PostAt(c, s, p, P_IDLE)
    if post is None or s.gate[post[1]].phase == IDLE:
        return None
    return s._replace(producer=s.producer.except_(p, (P_CHECKED, post[0], False)))


def PublishUnregistered(c: Constants, s: Vars, p: str) -> object:
    """BUG: ... and publishes later, with nothing in the gate telling the drainer to wait for it."""
    post = sg.PostAt(c, s, p, P_CHECKED)
    if post is None:
        return None
    k, actor, item = post
    done = (P_IDLE, k + 1, False)
    return sg.Push(c, s, p, actor, item, if_full=done, if_ok=done)


CHECK_THEN_ACT = split(
    SPEC, "check-then-act", "AdmitJoin", CheckRunnable, PublishUnregistered, then_event="publish"
)

# --- release-before-decision: the worker gives the permit back when it defers ---------------


def DrainEndReleasingOnDefer(c: Constants, s: Vars, w: str) -> object:
    """BUG: FinalizationDeferred is taken as "this worker is done with the actor": it returns the permit."""
    return sg.DrainEndBy(c, s, w, sg.DrainEndWord, deferred_pc=W_OWES_RELEASE)


RELEASE_BEFORE_DECISION = variant(
    SPEC, "release-before-decision", replace_actions={"DrainEnd": DrainEndReleasingOnDefer}
)

# --- idle-ignoring-producers: the drainer goes Idle without looking at the producer count ------


def DrainEndWordIgnoringProducers(g: Gate, budget_spent: bool) -> tuple[Gate, str]:
    """BUG: the end-of-drain CAS never defers: an empty mailbox and no flag means Idle, count or not."""
    if budget_spent or g.resched:
        return Gate(SCHEDULED, False, False, g.inside), ENQUEUE
    return Gate(IDLE, False, False, g.inside), RELEASE  # keeps the count, ignores it


def DrainEndIgnoringProducers(c: Constants, s: Vars, w: str) -> object:
    return sg.DrainEndBy(c, s, w, DrainEndWordIgnoringProducers, deferred_pc=sg.W_IDLE)


IDLE_IGNORING_PRODUCERS = variant(
    SPEC, "idle-ignoring-producers", replace_actions={"DrainEnd": DrainEndIgnoringProducers}
)

# --- second-token: a producer that published to a Scheduled actor enqueues a token too -------


def AdmitEndEnqueueingAgain(c: Constants, s: Vars, p: str) -> object:
    """BUG: "I published, so the actor must run": a producer leaving a Scheduled gate enqueues a token."""
    return sg.AdmitEndBy(c, s, p, AdmitEndWordEnqueueingAgain)


def AdmitEndWordEnqueueingAgain(old: Gate, ok: bool) -> tuple[Gate, str]:
    new, directive = sg.AdmitEndWord(old, ok)
    if old.phase == SCHEDULED and ok:
        directive = ENQUEUE
    return new, directive


SECOND_TOKEN = variant(SPEC, "second-token", replace_actions={"AdmitEnd": AdmitEndEnqueueingAgain})

# --- last-outcome-only: the last producer decides from its own publish alone ------------------


def AdmitEndOwnOutcome(g: Gate, ok: bool) -> tuple[Gate, str]:
    """BUG: the last producer out decides from *its* publish result, forgetting the window's flag."""
    n = g.inside - 1
    if g.phase in (ADMITTING, COMPLETING) and n == 0:
        return (Gate(SCHEDULED, False, False, 0), ENQUEUE) if ok else (IDLE_GATE, RELEASE)
    return sg.AdmitEndWord(g, ok)


def AdmitEndLastOutcomeOnly(c: Constants, s: Vars, p: str) -> object:
    return sg.AdmitEndBy(c, s, p, AdmitEndOwnOutcome)


AdmitEndLastOutcomeOnly.__doc__ = AdmitEndOwnOutcome.__doc__
DrainEndIgnoringProducers.__doc__ = DrainEndWordIgnoringProducers.__doc__
LAST_OUTCOME_ONLY = variant(SPEC, "last-outcome-only", replace_actions={"AdmitEnd": AdmitEndLastOutcomeOnly})

MUTANTS: dict[str, SpecMutant] = by_name(
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
)
