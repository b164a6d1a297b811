"""A job queue with resource-aware admission (design 004, Queuety's resource layer).

Jobs (``JobSpec``/``Job``) live in a store (``JobStore``: ``SqliteStore`` by default, shared by
processes; ``InMemoryStore`` on the runtime seam). A worker claims a job and the store decides,
in the same transaction, whether it may start (``admission.decide``: group limits, queue and group
budgets, then the worker's own memory and time checks); a denied job goes back without spending
an attempt. Workflows (``Workflow``) run their steps as jobs within per-run budgets.
"""

from reference.jobs.admission import Conditions, Decision, Profile, Reason, Usage, decide
from reference.jobs.budgets import BudgetRefusal, Budgets
from reference.jobs.inmemory import InMemoryStore
from reference.jobs.model import Job, JobSpec, JobState
from reference.jobs.sqlite_store import SqliteStore
from reference.jobs.store import Claim, ClaimOutcome, JobStore, StaleLease, Status
from reference.jobs.tracing import JsonlTraceFile, RecordingTracer
from reference.jobs.worker import Worker, WorkerOptions, WorkerReport, load_handlers
from reference.jobs.workflow import Workflow

__all__ = [
    "BudgetRefusal",
    "Budgets",
    "Claim",
    "ClaimOutcome",
    "Conditions",
    "Decision",
    "InMemoryStore",
    "Job",
    "JobSpec",
    "JobState",
    "JobStore",
    "JsonlTraceFile",
    "Profile",
    "Reason",
    "RecordingTracer",
    "SqliteStore",
    "StaleLease",
    "Status",
    "Usage",
    "Worker",
    "WorkerOptions",
    "WorkerReport",
    "Workflow",
    "decide",
    "load_handlers",
]
