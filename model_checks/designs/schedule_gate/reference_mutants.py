"""Seeded bugs in the *real* Schedule Gate reference, as subclasses that override one small method each.

They mirror the spec mutants of ``schedule_gate_spec`` (same names, "one
counterexample, three places"): the production algorithm runs unchanged but for
one step. ``REFERENCE_MUTANTS`` names them with the kind of failure a harness
run must report (see tests/gate/test_reference_harness.py for the scenarios).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from model_checks.mutant import by_name
from reference.results import Result
from reference.schedule_gate import (
    ADMITTING,
    COMPLETING,
    DEFERRED,
    ENQUEUE,
    IDLE,
    ONE,
    PENDING,
    PHASE_MASK,
    RELEASE,
    RESCHED,
    SCHEDULED,
    Directive,
    GateScheduler,
    admit_end_word,
)

T = TypeVar("T")


class CheckThenActScheduler(GateScheduler[T]):
    """BUG: a producer that *sees* a runnable actor publishes without registering in the gate."""

    def _post_joining(self, actor: int, event: T, old: int) -> Result | None:
        # The load said "runnable" ... but the drainer may decide Idle before we publish.
        ok = self._publish(actor, event)
        return Result.SUCCESS if ok else Result.CAPACITY_EXCEEDED


class ReleaseBeforeDecisionScheduler(GateScheduler[T]):
    """BUG: FinalizationDeferred read as "this worker is done": it returns the actor's permit."""

    def _finish_drain(self, actor: int, directive: Directive) -> None:
        if directive is ENQUEUE:
            self._enqueue(actor)
        elif directive is RELEASE or directive is DEFERRED:
            self._release_permit(actor, "idle")


class IdleIgnoringProducersScheduler(GateScheduler[T]):
    """BUG: the end-of-drain CAS never defers: empty mailbox and no flag means Idle, producers or not."""

    @staticmethod
    def _drain_end_word(old: int, budget_spent: bool) -> tuple[int, Directive]:
        inside = old & ~(PHASE_MASK | PENDING | RESCHED)
        if budget_spent or old & RESCHED:
            return SCHEDULED | inside, ENQUEUE
        return IDLE | inside, RELEASE


class SecondTokenScheduler(GateScheduler[T]):
    """BUG: "I published, so the actor must run": a producer leaving a Scheduled gate enqueues a token."""

    @staticmethod
    def _admit_end_word(old: int, ok: bool) -> tuple[int, Directive]:
        new, directive = admit_end_word(old, ok)
        if old & PHASE_MASK == SCHEDULED and ok:
            return new, ENQUEUE
        return new, directive


class LastOutcomeOnlyScheduler(GateScheduler[T]):
    """BUG: the last producer out decides from its own publish result, forgetting the window's flag."""

    @staticmethod
    def _admit_end_word(old: int, ok: bool) -> tuple[int, Directive]:
        phase = old & PHASE_MASK
        if phase in (ADMITTING, COMPLETING) and old // ONE == 1:
            return (SCHEDULED, ENQUEUE) if ok else (IDLE, RELEASE)
        return admit_end_word(old, ok)


@dataclass(frozen=True)
class ReferenceMutant:
    name: str
    doc: str
    build: Callable[..., GateScheduler[Any]]  # same signature as ``GateScheduler``
    expect: str  # the kind of failure a harness run must report
    spec_variant: str  # the same bug in the spec (schedule_gate_spec.MUTANTS)


REFERENCE_MUTANTS: dict[str, ReferenceMutant] = by_name(
    ReferenceMutant(
        "check-then-act",
        "admission by load-and-check, without the producer count",
        CheckThenActScheduler,
        expect="lost_wakeup",
        spec_variant="check-then-act",
    ),
    ReferenceMutant(
        "release-before-decision",
        "the permit returned at FinalizationDeferred, before the last producer decides",
        ReleaseBeforeDecisionScheduler,
        expect="invariant",
        spec_variant="release-before-decision",
    ),
    ReferenceMutant(
        "idle-ignoring-producers",
        "the worker going Idle without consulting producers inside the gate",
        IdleIgnoringProducersScheduler,
        expect="lost_wakeup",
        spec_variant="idle-ignoring-producers",
    ),
    ReferenceMutant(
        "second-token",
        "a second ready token for a Scheduled actor",
        SecondTokenScheduler,
        expect="exception",
        spec_variant="second-token",
    ),
    ReferenceMutant(
        "last-outcome-only",
        "the last producer deciding from its own publish result",
        LastOutcomeOnlyScheduler,
        expect="lost_wakeup",
        spec_variant="last-outcome-only",
    ),
)
