"""The admission trace format's events and their fields: what ``trace.py``'s checker may assume of
every event it is given (the streamed validator checks these before the checker sees one).
"""

from __future__ import annotations

from typing import Any

from model_checks.conformance.streamed import FieldCheck, is_bool, is_count, one_of

STATES = ("pending", "processing", "done", "failed", "discarded")
BUDGET_REASONS = ("group_concurrency_limit", "queue_budget", "group_budget")
RESOURCE_REASONS = ("handler_profile", "system_memory", "worker_memory", "time_left")

ADMISSION_RULES: dict[int, str] = {
    1: "jobs: every job is enqueued once, within its budgets, before any other event names it, and "
    "later events agree with its enqueue (queue, group, limit, cost)",
    2: "claim-and-admit is one transaction: a claim takes a pending job no worker holds and is followed "
    "at once by the same worker's admit and start, or deny, of that job (no double claim)",
    3: "group concurrency (GroupWithinLimit): a job is admitted only while its group runs fewer jobs "
    "than the job's concurrency_limit",
    4: "queue budget (QueueWithinBudget): a job is admitted only if the cost of the queue's processing "
    "jobs plus its own is within the queue's budget",
    5: "group budget (GroupWithinBudget): a job is admitted only if the cost of the group's processing "
    "jobs plus its own is within the group's budget",
    6: "denials: a denial names the first failing check of group limit, queue budget, group budget "
    "(over processing jobs), or a resource reason only when all three pass; a job whose cost alone "
    "exceeds a budget is failed with that reason, never deferred",
    7: "attempts count admissions (AttemptsCountAdmissions): start logs the job's number of admissions, "
    "so a denial spends none; a running job is retried only below max_attempts and fails for good "
    "only at it; a release (the worker stopping) gives back the attempt its admission spent",
    8: "leases: only the lease holder finishes, fails, retries or releases a processing job; a lease "
    "expires only on a processing job, failing it exactly when its attempts are spent",
    9: "no job lost (NoJobLost): the store's final counts (end) match the trace's account of every job; "
    "at the end of a run every job is done, failed or discarded with a reason, or pending, none "
    "processing and no claim undecided",
    10: "a trace without `end` (and not declared complete) is judged as a prefix of a run",
}


def _is_name(v: Any) -> bool:
    return type(v) is str and v != ""


def _is_opt_name(v: Any) -> bool:
    return v is None or _is_name(v)


def _is_opt_count(v: Any) -> bool:
    return v is None or is_count(v)


def _is_id(v: Any) -> bool:
    return type(v) is int and v >= 1


def _is_cost(v: Any) -> bool:
    return type(v) is int and v >= 1


def _is_number(v: Any) -> bool:
    return type(v) in (int, float)


def _is_opt_number(v: Any) -> bool:
    return v is None or _is_number(v)


def _is_text(v: Any) -> bool:
    return type(v) is str


def _is_table(v: Any) -> bool:
    return type(v) is dict and all(is_count(n) for n in v.values())


def _is_counts(v: Any) -> bool:
    return type(v) is dict and all(k in STATES and is_count(n) for k, n in v.items())


JOB: tuple[str, FieldCheck] = ("job", _is_id)
FIELDS: dict[str, tuple[tuple[str, FieldCheck], ...]] = {
    "enqueue": (
        JOB,
        ("queue", _is_name),
        ("group", _is_opt_name),
        ("limit", _is_opt_count),
        ("cost", _is_cost),
        ("max_attempts", _is_id),
    ),
    "refuse": (("queue", _is_name), ("reason", _is_name)),
    "budgets": (("queues", _is_table), ("groups", _is_table)),
    "claim": (JOB, ("queue", _is_name), ("group", _is_opt_name), ("cost", _is_cost)),
    "admit": (
        JOB,
        ("queue", _is_name),
        ("group", _is_opt_name),
        ("limit", _is_opt_count),
        ("cost", _is_cost),
    ),
    "deny": (JOB, ("reason", one_of(*BUDGET_REASONS, *RESOURCE_REASONS))),
    "start": (JOB, ("attempt", _is_id)),
    "finish": (JOB,),
    "fail": (JOB, ("reason", _is_name)),
    "retry": (JOB, ("attempts", _is_id)),
    "release": (JOB, ("attempts", is_count), ("reason", _is_name)),
    "lease_expire": (JOB, ("outcome", one_of("pending", "failed"))),
    "discard": (JOB, ("reason", _is_name)),
    "workflow_start": (("workflow", _is_id),),
    "workflow_complete": (("workflow", _is_id),),
    "workflow_fail": (("workflow", _is_id), ("reason", _is_name)),
    "end": (("counts", _is_counts),),
}
OPTIONAL: dict[str, tuple[tuple[str, FieldCheck], ...]] = {
    "deny": (("detail", _is_text), ("retry_at", _is_number)),
    "start": (("lease_until", _is_number),),
    "fail": (("final", is_bool),),
    "retry": (("retry_at", _is_number),),
    "lease_expire": (("worker", _is_opt_name),),
    "workflow_start": (("name", _is_text), ("parent", lambda v: v is None or _is_id(v))),
}
