"""The Schedule Gate word: one atomic int per actor, and the pure transitions of its CAS loops.

The bits (see ``schedule_gate`` for who changes them, and when)::

    bits 0-2  phase      Idle=0 Admitting=1 Scheduled=2 Draining=3 DrainCompleting=4
    bit  3    pending    a publish succeeded in this admission window (Admitting)
    bit  4    resched    a publish succeeded while Draining / DrainCompleting
    bits 5..  inside     producers between admit_begin and admit_end

Each ``*_word`` function maps the word a thread loaded to the word its CAS
writes (and, for the deciding steps, the ``Directive`` it must follow). They
are the table of docs/schedule-gate.md and the spec's ``*Word`` operators, bit
for bit; no locks, no threads, nothing but arithmetic on the word.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

IDLE, ADMITTING, SCHEDULED, DRAINING, COMPLETING = 0, 1, 2, 3, 4
PHASE_NAMES = ("Idle", "Admitting", "Scheduled", "Draining", "DrainCompleting")
PHASE_MASK = 0b111
PENDING = 1 << 3
RESCHED = 1 << 4
ONE = 1 << 5  # one producer inside
IDLE_WORD = IDLE


class Directive(Enum):
    """What a gate CAS tells the thread that made it to do next."""

    NO_ACTION = "no_action"
    FINALIZATION_DEFERRED = "finalization_deferred"
    ENQUEUE_READY_TOKEN = "enqueue_ready_token"
    RELEASE_PERMIT = "release_permit"


NO_ACTION = Directive.NO_ACTION
DEFERRED = Directive.FINALIZATION_DEFERRED
ENQUEUE = Directive.ENQUEUE_READY_TOKEN
RELEASE = Directive.RELEASE_PERMIT


class GateView(NamedTuple):
    """A gate word decoded, for tests and reports."""

    phase: str
    pending: bool
    resched: bool
    inside: int

    def show(self) -> str:
        flags = ("+P" if self.pending else "") + ("+R" if self.resched else "")
        return f"{self.phase}{flags} n={self.inside}"


def decode(word: int) -> GateView:
    return GateView(PHASE_NAMES[word & PHASE_MASK], bool(word & PENDING), bool(word & RESCHED), word // ONE)


def admit_first_word(old: int) -> int | None:
    """Idle(n=0) -> Admitting(n=1) for a producer holding a permit; None: the CAS would fail."""
    return ADMITTING | ONE if old == IDLE_WORD else None


def admit_join_word(old: int) -> int | None:
    """n -> n + 1 on a runnable actor (any phase but Idle); None: the actor is Idle, take a permit."""
    return None if old & PHASE_MASK == IDLE else old + ONE


def admit_end_word(old: int, ok: bool) -> tuple[int, Directive]:
    """n -> n - 1 with the publish result ``ok``; the last producer out decides (spec: AdmitEndWord)."""
    phase = old & PHASE_MASK
    n = old // ONE - 1
    if phase == ADMITTING:
        pending = bool(old & PENDING) or ok
        if n > 0:
            return ADMITTING | (PENDING if pending else 0) | n * ONE, NO_ACTION
        return (SCHEDULED, ENQUEUE) if pending else (IDLE_WORD, RELEASE)
    if phase == COMPLETING:
        resched = bool(old & RESCHED) or ok
        if n > 0:
            return COMPLETING | (RESCHED if resched else 0) | n * ONE, NO_ACTION
        return (SCHEDULED, ENQUEUE) if resched else (IDLE_WORD, RELEASE)
    if phase == DRAINING:
        return (old - ONE) | (RESCHED if ok else 0), NO_ACTION
    return old - ONE, NO_ACTION  # Scheduled: the token's drain begins after this publish


def drain_begin_word(old: int) -> int | None:
    """Scheduled -> Draining, needs-reschedule cleared; None: the gate is not Scheduled."""
    if old & PHASE_MASK != SCHEDULED:
        return None
    return DRAINING | (old & ~(PHASE_MASK | PENDING | RESCHED))


def drain_end_word(old: int, budget_spent: bool) -> tuple[int, Directive]:
    """The end-of-drain decision (spec: DrainEndWord)."""
    inside = old & ~(PHASE_MASK | PENDING | RESCHED)
    if budget_spent:
        return SCHEDULED | inside, ENQUEUE
    if inside:
        return COMPLETING | (old & RESCHED) | inside, DEFERRED
    if old & RESCHED:
        return SCHEDULED, ENQUEUE
    return IDLE_WORD, RELEASE


__all__ = [
    "ADMITTING",
    "COMPLETING",
    "DEFERRED",
    "DRAINING",
    "ENQUEUE",
    "IDLE",
    "IDLE_WORD",
    "NO_ACTION",
    "ONE",
    "PENDING",
    "PHASE_MASK",
    "PHASE_NAMES",
    "RELEASE",
    "RESCHED",
    "SCHEDULED",
    "Directive",
    "GateView",
    "admit_end_word",
    "admit_first_word",
    "admit_join_word",
    "decode",
    "drain_begin_word",
    "drain_end_word",
]
