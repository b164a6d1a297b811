"""Seeded bugs in the *real* job store, as mixins that override one small method of ``StoreCore``.

Each mirrors a spec mutant of the issue (design 004): the store runs unchanged but for one step,
on either backend (``build(SqliteStore)`` for the multi-process stress test, ``build(InMemoryStore)``
for the harness). ``REFERENCE_MUTANTS`` names them with the harness failure kind a scenario must
report and the validator rule that rejects their traces.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from model_checks.mutant import by_name
from reference.jobs.admission import Conditions, Usage
from reference.jobs.core import StoreCore
from reference.jobs.model import JobState
from reference.jobs.store import ClaimOutcome

QUEUE_SCAN = 1_000_000


class SplitCheckAndClaim(StoreCore):
    """BUG: admission is checked in one transaction and the job marked ``processing`` in a second.

    Between the two, another worker's check sees neither this job's cost nor that it is taken:
    it admits over the budget, or claims the same job again."""

    _held: dict[int, dict[str, Any]] | None = None

    def claim(self, worker: str, conditions: Conditions, queues: Sequence[str] | None = None) -> ClaimOutcome:
        held: dict[int, dict[str, Any]] = {}

        def check() -> ClaimOutcome:
            self._held = held
            try:
                return self._claim(worker, conditions, queues)
            finally:
                self._held = None

        outcome: ClaimOutcome = self._run(check)

        def take() -> None:
            for job_id, changes in held.items():
                self._update(job_id, changes)

        if held:
            self._run(take)
        return outcome

    def _update(self, job_id: int, changes: dict[str, Any]) -> None:
        if self._held is not None and changes.get("state") is JobState.PROCESSING:
            self._held[job_id] = changes  # written by the second transaction
            return
        super()._update(job_id, changes)  # type: ignore[safe-super]


class DenialSpendsAttempt(StoreCore):
    """BUG: the give-back counts the denied claim as an attempt."""

    def _update(self, job_id: int, changes: dict[str, Any]) -> None:
        if "last_denial" in changes:
            job = self._load(job_id)
            assert job is not None
            changes = {**changes, "attempts": job.attempts + 1}
        super()._update(job_id, changes)  # type: ignore[safe-super]


class DenialDropsJob(StoreCore):
    """BUG: the give-back acknowledges the job instead of returning it: gone, with no reason."""

    def _update(self, job_id: int, changes: dict[str, Any]) -> None:
        if "last_denial" in changes:
            changes = {**changes, "state": JobState.DISCARDED}
        super()._update(job_id, changes)  # type: ignore[safe-super]


class BudgetFromQueued(StoreCore):
    """BUG: the budgets are counted over the queued (pending) jobs instead of the processing ones."""

    def _usage(self, queue: str, group: str | None) -> Usage:
        queued = self._candidates(math.inf, None, QUEUE_SCAN)
        queue_cost = sum(j.cost_units for j in queued if j.queue == queue)
        members = [j for j in queued if group is not None and j.concurrency_group == group]
        return Usage(len(members), queue_cost, sum(j.cost_units for j in members))


@dataclass(frozen=True)
class ReferenceMutant:
    name: str
    doc: str
    mixin: type  # a StoreCore subclass overriding one method, mixed in before a backend
    expect: str  # the harness failure kind a scenario must report
    rules: tuple[int, ...]  # the trace rules (model_checks.designs.admission.trace) that reject its traces
    spec_variant: str  # the same bug in the spec, as its mutants name it
    # its failing harness trace alone is rejected (a dropped job shows only against the store's
    # final counts: in the stress test's ``end``, not in a failing execution's prefix)
    trace_shows: bool = True

    def build(self, base: type[StoreCore]) -> type[StoreCore]:
        """``base`` (``SqliteStore``, ``InMemoryStore``) with this bug."""
        return type(f"{self.mixin.__name__}{base.__name__}", (self.mixin, base), {})


REFERENCE_MUTANTS: dict[str, ReferenceMutant] = by_name(
    ReferenceMutant(
        "check-then-claim",
        "check and claim in separate transactions: over budget, or a double claim",
        SplitCheckAndClaim,
        expect="invariant",
        rules=(2, 3, 4, 5),
        spec_variant="check-then-claim",
    ),
    ReferenceMutant(
        "denial-spends-attempt",
        "a denial that spends an attempt",
        DenialSpendsAttempt,
        expect="invariant",
        rules=(7,),
        spec_variant="denial-spends-attempt",
    ),
    ReferenceMutant(
        "denial-drops-job",
        "a denial that drops the job",
        DenialDropsJob,
        expect="invariant",
        rules=(9,),
        spec_variant="denial-drops-job",
        trace_shows=False,
    ),
    ReferenceMutant(
        "budget-counts-queued",
        "budgets counted over queued instead of processing jobs",
        BudgetFromQueued,
        expect="invariant",
        rules=(6,),
        spec_variant="budget-counts-queued",
    ),
)
