"""MODULE AdmissionState — the constants, variables and state operators of ``spec.admission``.

``spec.admission`` EXTENDS this module with the initial state, the actions and
fairness, and checks the invariants defined here; everything here is a pure function
of the constants and one state.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from spec.job_processes import Producers as Producers  # re-exported: spec/admission.py
from spec.job_processes import Timers as Timers
from spec.job_processes import Workers as Workers
from spec.language import Function

# ============================================================================ CONSTANTS

# Job statuses. UNBORN: still with its producer (not enqueued yet). CLAIMED: a worker took the row
# but has not decided admission yet; only the claim-first variants reach it (the design decides
# admission in the claim's own transaction). PROCESSING: admitted, its cost counts on the budgets.
UNBORN, PENDING, DEFERRED, CLAIMED, PROCESSING = "unborn", "pending", "deferred", "claimed", "processing"
DONE, FAILED, REFUSED = "done", "failed", "refused"

SETTLED = frozenset({DONE, FAILED, REFUSED})
HELD = frozenset({CLAIMED, PROCESSING})  # rows a worker holds under a lease

# Denial reasons, in the order admission checks them (the first that applies is named).
GROUP_LIMIT = "group_concurrency_limit"  # running jobs of the group >= its concurrency_limit
QUEUE_BUDGET = "queue_budget"  # active cost of the queue + cost > the queue's budget
GROUP_BUDGET = "group_budget"  # active cost of the group + cost > the group's budget
# (4) admission disabled: the process-level checks below are skipped and the job is admitted.
RESOURCE = "resource"  # handler profile, system / worker memory, time left: the environment's say

# Why a job is failed or refused.
ATTEMPTS_EXHAUSTED = "attempts_exhausted"
COST_OVER_QUEUE_BUDGET = "cost_exceeds_queue_budget"
COST_OVER_GROUP_BUDGET = "cost_exceeds_group_budget"

# Worker program counters: idle -> admitted -> running -> idle (the design);
# the claim-first variants pass through claimed, the split-transaction one through checked.
W_IDLE, W_CLAIMED, W_CHECKED, W_ADMITTED, W_RUNNING = "idle", "claimed", "checked", "admitted", "running"


@dataclass(frozen=True)
class JobSpec:
    """What an enqueue call carries: the queue, the concurrency group (or none) and the cost units."""

    queue: str
    group: str | None
    cost: int


@dataclass(frozen=True)
class Constants:
    workers: int
    jobs: tuple[JobSpec, ...]  # enqueued in this order by the one producer
    queue_budgets: tuple[tuple[str, int], ...] = ()  # queue -> cost budget (absent: unlimited)
    group_budgets: tuple[tuple[str, int], ...] = ()  # group -> cost budget
    group_limits: tuple[tuple[str, int], ...] = ()  # group -> concurrency_limit
    max_attempts: int = 1
    expiries: int = 0  # lease expiries the environment may cause in one behaviour
    resource_denials: int = 0  # resource denials it may cause (pressure is transient)
    releases: int = 0  # stops that make a worker give its held job back (SIGTERM twice, scale-down)
    admission_enabled: bool = True  # False: the process-level (resource) checks are skipped

    def job_names(self) -> tuple[str, ...]:
        return tuple(f"j{i}" for i in range(len(self.jobs)))

    def worker_names(self) -> tuple[str, ...]:
        return tuple(f"w{i}" for i in range(self.workers))

    def job(self, j: str) -> JobSpec:
        return self.jobs[int(j[1:])]

    def queue_budget(self, queue: str) -> int | None:
        return dict(self.queue_budgets).get(queue)

    def group_budget(self, group: str | None) -> int | None:
        return None if group is None else dict(self.group_budgets).get(group)

    def group_limit(self, group: str | None) -> int | None:
        return None if group is None else dict(self.group_limits).get(group)


def Jobs(c: Constants) -> tuple[str, ...]:
    return c.job_names()


# Workers, Producers (the client) and Timers (one per job: a deferred job's retry time comes) are
# spec/job_processes.py's.


def Reapers(c: Constants) -> tuple[str, ...]:
    """The lease reaper: it returns a job whose lease ran out (its worker stalled or died)."""
    return ("reaper",)


# ============================================================================ VARIABLES


class Job(NamedTuple):
    """One row of the jobs table."""

    status: str
    attempts: int = 0  # spent by admissions only, never by denials
    owner: str | None = None  # the worker holding its lease (CLAIMED / PROCESSING)
    reason: str | None = None  # the last denial (DEFERRED), or why it FAILED / was REFUSED


class Worker(NamedTuple):
    pc: str
    job: str | None = None
    attempt: int = 0  # the lease's fencing token: the job's attempts when this worker was admitted
    seen: tuple[str, ...] = ()  # the active jobs a separate check transaction read (that variant only)


class Vars(NamedTuple):
    job: Function[str, Job]
    worker: Function[str, Worker]
    # The claim order of the pending jobs: ``ORDER BY available_at, id`` (a retried or expired job
    # becomes available after the jobs already waiting).
    ready: tuple[str, ...]
    enqueued: int  # the producer's place in its script: jobs handed to the queue (or refused)
    pressure: int  # resource denials the environment may still cause
    expiries: int  # lease expiries it may still cause
    releases: int  # stops with a job in hand it may still cause
    # ghosts (history as counters, so that states stay small)
    admits: Function[str, int]  # admissions of each job
    finishes: Function[str, int]  # completions of each job that its lease accepted


# ============================================================================ operators


def Active(c: Constants, s: Vars, counted: Iterable[str], but: str) -> list[str]:
    """The jobs other than ``but`` whose status is one of ``counted``: what admission sums over."""
    statuses = frozenset(counted)
    return [k for k in Jobs(c) if k != but and s.job[k].status in statuses]


def CostOf(c: Constants, jobs: Iterable[str]) -> int:
    return sum(c.job(k).cost for k in jobs)


def Denial(c: Constants, s: Vars, j: str, counted: Iterable[str] = (PROCESSING,)) -> str | None:
    """The admission checks for ``j``, in order, over the jobs in ``counted``: the first reason to deny.

    The design counts PROCESSING rows (admitted jobs): the cost of what runs now.
    """
    return DenialOver(c, s, j, Active(c, s, counted, j))


def DenialOver(c: Constants, s: Vars, j: str, others: list[str]) -> str | None:
    """The admission checks for ``j`` against the active jobs ``others``, in order."""
    spec = c.job(j)
    group = [k for k in others if spec.group is not None and c.job(k).group == spec.group]
    limit = c.group_limit(spec.group)
    if limit is not None and len(group) >= limit:
        return GROUP_LIMIT
    budget = c.queue_budget(spec.queue)
    if (
        budget is not None
        and CostOf(c, (k for k in others if c.job(k).queue == spec.queue)) + spec.cost > budget
    ):
        return QUEUE_BUDGET
    budget = c.group_budget(spec.group)
    if budget is not None and CostOf(c, group) + spec.cost > budget:
        return GROUP_BUDGET
    return None


def Refusal(c: Constants, j: str) -> str | None:
    """Why ``j`` can never run, whatever else runs: its cost alone exceeds one of its budgets."""
    spec = c.job(j)
    budget = c.queue_budget(spec.queue)
    if budget is not None and spec.cost > budget:
        return COST_OVER_QUEUE_BUDGET
    budget = c.group_budget(spec.group)
    if budget is not None and spec.cost > budget:
        return COST_OVER_GROUP_BUDGET
    return None


def Admissible(c: Constants, j: str) -> bool:
    return Refusal(c, j) is None


def Holds(s: Vars, w: str, j: str, job: Job) -> bool:
    """Worker ``w`` holds ``j``'s current lease: it is where the job's status says, with its token."""
    me = s.worker[w]
    where = (W_CLAIMED,) if job.status == CLAIMED else (W_ADMITTED, W_RUNNING)
    return me.job == j and me.pc in where and me.attempt == job.attempts


def LeaseHeld(s: Vars, w: str, me: Worker) -> bool:
    """Worker ``w``'s lease on the job in its hand is still the job's: processing, owned by ``w``,
    at ``w``'s attempt (the fencing token)."""
    assert me.job is not None
    job = s.job[me.job]
    return job.status == PROCESSING and job.owner == w and job.attempts == me.attempt


def Stopping(s: Vars, w: str) -> tuple[Worker, str] | None:
    """Worker ``w`` is told to stop (a release is left) with a job in hand, not started or running:
    (its registers, the job); else None."""
    me = s.worker[w]
    if s.releases == 0 or me.pc not in (W_ADMITTED, W_RUNNING) or me.job is None:
        return None
    return me, me.job


# ======================================================== INVARIANTS (registered by spec.admission)


def GroupWithinLimit(c: Constants, s: Vars) -> str | None:
    """No concurrency group runs more jobs than its concurrency_limit."""
    for group, limit in c.group_limits:
        running = [k for k in Jobs(c) if c.job(k).group == group and s.job[k].status == PROCESSING]
        if len(running) > limit:
            return f"group {group} runs {running}, over its concurrency limit {limit}"
    return None


def _over_budget(c: Constants, s: Vars, kind: str, budgets: tuple[tuple[str, int], ...]) -> str | None:
    """The first ``kind`` (queue or group) whose processing jobs cost more than its budget."""
    for name, budget in budgets:
        running = [k for k in Jobs(c) if getattr(c.job(k), kind) == name and s.job[k].status == PROCESSING]
        if CostOf(c, running) > budget:
            return f"{kind} {name} processes {running} costing {CostOf(c, running)}, over its budget {budget}"
    return None


def QueueWithinBudget(c: Constants, s: Vars) -> str | None:
    """The cost of the jobs processing in a queue never exceeds the queue's budget."""
    return _over_budget(c, s, "queue", c.queue_budgets)


def GroupWithinBudget(c: Constants, s: Vars) -> str | None:
    """The cost of the jobs processing in a concurrency group never exceeds the group's budget."""
    return _over_budget(c, s, "group", c.group_budgets)


def NoJobLost(c: Constants, s: Vars) -> str | None:
    """Every job handed to the queue is pending, deferred, held by its worker, done, or failed (with why)."""
    for i, j in enumerate(Jobs(c)):
        job = s.job[j]
        if job.status == UNBORN:
            if i < s.enqueued:
                return f"job {j} was enqueued but the queue has no row for it"
            continue
        if (job.status == PENDING) != (j in s.ready) or s.ready.count(j) > 1:
            return f"job {j} is {job.status} but appears {s.ready.count(j)} times in the claim order"
        if job.status in HELD and (job.owner is None or not Holds(s, job.owner, j, job)):
            return (
                f"job {j} is {job.status} for {job.owner} but no worker holds its lease:"
                " nobody will run it or give it back"
            )
        if job.status == DONE and s.finishes[j] != 1:
            return f"job {j} is done but was never finished by a worker: it was dropped"
        if s.finishes[j] > 1:
            return f"job {j} was finished {s.finishes[j]} times"
        if job.status in (DEFERRED, FAILED, REFUSED) and job.reason is None:
            return f"job {j} is {job.status} without a reason"
    return None


def AttemptsWithinMax(c: Constants, s: Vars) -> str | None:
    """No job runs more often than ``max_attempts``: a give-back that spends an attempt breaks it."""
    for j in Jobs(c):
        if s.job[j].attempts > c.max_attempts:
            return f"job {j} is on attempt {s.job[j].attempts} of at most {c.max_attempts}"
    return None


def AttemptsCountAdmissions(c: Constants, s: Vars) -> str | None:
    """A job's attempts are its admissions: a denial gives the job back without spending one."""
    for j in Jobs(c):
        if s.job[j].attempts != s.admits[j]:
            return f"job {j} has spent {s.job[j].attempts} attempts but was admitted {s.admits[j]} times"
    return None


# ============================================================================ liveness predicates


def AdmissibleJobsRan(c: Constants, s: Vars) -> bool:
    """Every job whose cost fits its budgets was admitted and is done (or failed after its attempts ran)."""
    return all(s.job[j].status in (DONE, FAILED) and s.admits[j] > 0 for j in Jobs(c) if Admissible(c, j))


def EveryJobSettled(c: Constants, s: Vars) -> bool:
    """Every job is done, failed with a reason, or refused at enqueue: none waits forever."""
    return all(s.job[j].status in SETTLED for j in Jobs(c))


# ============================================================================ how a person reads a state


def Show(c: Constants, s: Vars) -> dict[str, object]:
    def row(job: Job) -> str:
        text = job.status + (f" by {job.owner}" if job.owner else "")
        text += f" attempts={job.attempts}" if job.attempts else ""
        return text + (f" ({job.reason})" if job.reason else "")

    def local(me: Worker) -> str:
        return me.pc if me.job is None else f"{me.pc} {me.job}#{me.attempt}"

    return {
        "jobs": {j: row(job) for j, job in s.job.items()},
        "claim order": list(s.ready),
        "workers": {w: local(me) for w, me in s.worker.items()},
        "enqueued": s.enqueued,
        "environment": (f"resource denials left {s.pressure}, expiries left {s.expiries}"),
    }
