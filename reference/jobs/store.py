"""The job store's interface, and the values its methods return.

A store holds jobs and workflow runs and makes each step one atomic transition: ``enqueue``,
``claim`` (claim-and-admit: reap expired leases, pick the best claimable job, decide admission
and either lease it as ``processing`` or give it back with a retry-after, all in one transaction),
``finish``, ``fail``, ``release``, ``heartbeat``. Every method that changes a leased job takes the
lease token, so a worker whose lease expired (and whose job went to another worker) changes nothing.

``SqliteStore`` is the embedded default; ``InMemoryStore`` implements the same interface on the
runtime seam so the controlled-interleaving harness can explore it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from reference.jobs.admission import Conditions, Decision, Profile
from reference.jobs.budgets import Budgets
from reference.jobs.model import Job, JobSpec
from reference.jobs.workflow import Workflow

DEFAULT_LEASE = 300.0
SCAN_LIMIT = 16
"""Most candidates one claim looks at: a claim denied for one job tries the next, within reason."""


class StaleLease(Exception):
    """The lease token no longer holds the job (it expired and the job moved on)."""


@dataclass(frozen=True)
class Claim:
    """A job leased to this worker, admitted and started (``attempts`` already counts this run)."""

    job: Job
    token: str
    lease_until: float
    profile: Profile | None
    decision: Decision


@dataclass(frozen=True)
class ClaimOutcome:
    """What one ``claim`` did: the job it started (or None) and every job it gave back, and why."""

    claim: Claim | None
    denied: list[tuple[int, Decision]] = field(default_factory=list)
    failed: list[tuple[int, str]] = field(default_factory=list)
    expired: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Status:
    counts: dict[str, int]
    """Jobs per state."""
    active_cost: dict[str, dict[str, int]]
    """``{"queues": {...}, "groups": {...}}``: cost units of ``processing`` jobs."""
    running: dict[str, int]
    """Processing jobs per concurrency group."""
    budgets: Budgets
    deferred: list[dict[str, Any]]
    """Pending jobs whose last claim was denied: id, queue, reason, retry at."""
    failed: list[dict[str, Any]]
    failed_workflows: list[dict[str, Any]] = field(default_factory=list)
    """The newest failed workflow runs: id, name, reason."""

    def as_json(self) -> dict[str, Any]:
        return {
            "counts": self.counts,
            "active_cost": self.active_cost,
            "running": self.running,
            "budgets": self.budgets.as_json(),
            "deferred": self.deferred,
            "failed": self.failed,
            "failed_workflows": self.failed_workflows,
        }


class JobStore(Protocol):
    def enqueue(self, spec: JobSpec) -> Job:
        """Add a job; ``BudgetRefusal`` when its cost alone exceeds a budget (nothing is stored)."""
        ...

    def claim(self, worker: str, conditions: Conditions, queues: Sequence[str] | None = None) -> ClaimOutcome:
        """Claim-and-admit in one transaction (see the module docstring)."""
        ...

    def heartbeat(self, job_id: int, token: str, lease: float) -> float:
        """Extend the lease to ``now + lease``; ``StaleLease`` if it is no longer ours."""
        ...

    def finish(self, job_id: int, token: str, result: Any, duration: float, peak_memory: int) -> Job:
        """Mark done, record the handler's profile, advance its workflow; ``StaleLease`` if not ours."""
        ...

    def fail(self, job_id: int, token: str, error: str, duration: float, peak_memory: int) -> Job:
        """Retry after backoff, or fail for good once attempts are spent; ``StaleLease`` if not ours."""
        ...

    def record_run(self, handler: str, duration: float, peak_memory: int) -> None:
        """Add a run's duration and peak to ``handler``'s profile without touching its job: for a
        run whose lease was lost (``finish``/``fail`` said ``StaleLease``), which they cannot record."""
        ...

    def release(self, job_id: int, token: str, why: str) -> Job:
        """Give the job back unrun, pending at once, its attempt not spent (the worker must stop);
        ``StaleLease`` if not ours."""
        ...

    def get(self, job_id: int) -> Job | None: ...

    def status(self, limit: int = 20) -> Status: ...

    def budgets(self) -> Budgets: ...

    def set_budgets(self, budgets: Budgets) -> None: ...

    def merge_budgets(
        self, queues: Mapping[str, int], groups: Mapping[str, int], *, clear: bool = False
    ) -> Budgets:
        """Merge into the current budgets (or none, ``clear``) in one transaction; the result."""
        ...

    def start_workflow(self, flow: Workflow, state: dict[str, Any]) -> int: ...

    def workflow(self, run_id: int) -> dict[str, Any] | None:
        """The run's status: state, step, ``budget`` (limits and usage), reason if it failed."""
        ...

    def unfinished(self, queues: Sequence[str] | None = None) -> int:
        """Pending or processing jobs of ``queues`` (every queue: None), due or not."""
        ...

    def claimable(self, queues: Sequence[str] | None = None) -> int:
        """Pending jobs available now (and expired leases): is there work for a one-shot run?"""
        ...
