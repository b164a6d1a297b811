"""MODULE Admission — Queuety's resource layer: claim and admit jobs under budgets (seeds.md, design 004).

A producer enqueues jobs, each with a queue, an optional **concurrency group**
and a weight in **cost units**. Budgets are set per queue and per group
(``queue providers: 20``, ``group openai: 12``), and a group may also have a
**concurrency limit** (at most so many of its jobs running at once). Budgets
count the cost units of the jobs currently ``processing`` — admitted and not
yet finished — never of jobs merely queued.

Several workers race for the queue. A worker's **claim** and its **admission**
decision are one transaction (SQLite's ``BEGIN IMMEDIATE``: the write lock is
taken before the first read, so no other worker's claim or admission interleaves
with the check). In that one step the worker picks a pending job and checks, in
this order, naming the first that applies:

1. the job's group runs ``>= concurrency_limit`` jobs (``group_limit``);
2. the queue's active cost plus the job's cost exceeds its budget (``queue_budget``);
3. the group's active cost plus the job's cost exceeds its budget (``group_budget``);
4. when admission is disabled (``admission_enabled=False``) the checks stop
   here and the job is admitted;
5. the worker's own checks — the handler's recent duration and peak memory,
   system memory (cgroup v2, v1, ``/proc/meminfo``), the worker's memory
   headroom, the time left for a one-shot run — are **abstracted** as one
   nondeterministic ``resource`` denial the spec allows whenever checks 1-3 pass.

Admitted, the job becomes ``processing`` under a lease held by the worker and
spends one attempt; the worker starts the handler and finishes it, which frees
the job's cost. Denied, the job is given back ``deferred`` with its reason and
a retry-after, **without** spending an attempt; when the retry time comes it is
pending again. A job whose cost alone exceeds its queue or group budget could
never be admitted: the enqueue **refuses** it (the caller keeps it, with the
reason) instead of deferring it forever.

A lease can expire (the worker stalled or died): the reaper makes the job
claimable again, or fails it with ``attempts_exhausted`` when its attempts are
spent. The stale worker's late finish is fenced off by the lease's token (the
attempt number) and changes nothing.

A worker told to stop with a job in hand (a second SIGTERM, a pool scaling
down) **releases** it: under its lease (fenced by the token) the job is pending
again at once and the attempt its admission spent is given back, since the
cut-short run is not the job's failure. A release that comes after the lease
expired is refused by the store and changes nothing. No job runs more often than
``max_attempts`` (``AttemptsWithinMax``).

The environment's say is bounded so that liveness means something: at most
``resource_denials`` resource denials, ``expiries`` lease expiries and
``releases`` stops with a job in hand in one behaviour (pressure is transient).
Workers, the producer and the retry timers are weakly fair; the reaper is not.

Each action is one transaction of the store (or one step of a worker outside
it) and is labelled with the trace event the reference logs for it.
"""

# ruff: noqa: F405  (names from the state module this one EXTENDS)
from __future__ import annotations

from spec.admission_state import *  # noqa: F403
from spec.language import WF, EventuallyAlways, Function, SpecBuilder, emit

# ============================================================================ CONSTANTS

Admission = SpecBuilder("admission", __doc__ or "")


@Admission.assume
def PositiveSizes(c: Constants) -> str | None:
    """At least one worker and one job; costs, budgets, limits and attempts are positive."""
    if c.workers < 1 or not c.jobs or c.max_attempts < 1:
        return "workers, jobs and max_attempts must be at least 1"
    for name in ("queue_budgets", "group_budgets", "group_limits"):
        for key, value in getattr(c, name):
            if value < 1:
                return f"{name}[{key}] must be at least 1, not {value}"
    for j in Jobs(c):
        if c.job(j).cost < 1:
            return f"job {j} must cost at least 1 unit, not {c.job(j).cost}"
    return None


@Admission.assume
def EnvironmentBounded(c: Constants) -> str | None:
    """The environment's denials and expiries are counted, never negative."""
    for name in ("expiries", "resource_denials", "releases"):
        if getattr(c, name) < 0:
            return f"{name} must be at least 0"
    return None


# ============================================================================ INIT


@Admission.init
def Init(c: Constants) -> list[Vars]:
    jobs, workers = Jobs(c), Workers(c)
    return [
        Vars(
            job=Function.const(jobs, Job(UNBORN)),
            worker=Function.const(workers, Worker(W_IDLE)),
            ready=(),
            enqueued=0,
            pressure=c.resource_denials,
            expiries=c.expiries,
            releases=c.releases,
            admits=Function.const(jobs, 0),
            finishes=Function.const(jobs, 0),
        )
    ]


# ============================================================================ helpers


def Next(c: Constants, s: Vars) -> str | None:
    """The job the producer enqueues next, or None when its script is done."""
    return Jobs(c)[s.enqueued] if s.enqueued < len(c.jobs) else None


def SetJob(s: Vars, j: str, job: Job, **changes: object) -> Vars:
    return s._replace(job=s.job.except_(j, job), **changes)  # type: ignore[arg-type]


def SetWorker(s: Vars, w: str, me: Worker) -> Vars:
    return s._replace(worker=s.worker.except_(w, me))


def Admitted(s: Vars, w: str, j: str) -> Vars:
    """``j`` becomes processing under ``w``'s lease, spending one attempt (the lease's token)."""
    attempt = s.job[j].attempts + 1
    admits = s.admits.except_(j, s.admits[j] + 1)
    s = SetJob(s, j, Job(PROCESSING, attempt, w), admits=admits, ready=Without(s.ready, j))
    return SetWorker(s, w, Worker(W_ADMITTED, j, attempt))


def MadePending(s: Vars, j: str, attempts: int) -> Vars:
    """``j`` is claimable again, after the jobs already waiting."""
    return SetJob(s, j, Job(PENDING, attempts), ready=(*s.ready, j))


def UndoAdmission(s: Vars, j: str) -> Vars:
    """The released run is not an admission that counts (``AttemptsCountAdmissions``)."""
    return s._replace(admits=s.admits.except_(j, s.admits[j] - 1))


def Claimed(c: Constants, s: Vars, w: str) -> str | None:
    """The job an idle worker's claim takes (the head of the claim order) or None; no write yet."""
    return s.ready[0] if s.worker[w].pc == W_IDLE and s.ready else None


def GivenBack(s: Vars, j: str, reason: str) -> Vars:
    """A denied job goes back deferred with its reason and a retry-after; its attempts are untouched."""
    return SetJob(s, j, Job(DEFERRED, s.job[j].attempts, None, reason), ready=Without(s.ready, j))


def Without(ready: tuple[str, ...], j: str) -> tuple[str, ...]:
    return tuple(k for k in ready if k != j)


# ============================================================================ ACTIONS: the producer


@Admission.action(Producers, event="enqueue")
def Enqueue(c: Constants, s: Vars, p: str) -> object:
    """Insert the next job of the script as pending: its cost fits every budget it counts against."""
    j = Next(c, s)
    if j is None or Refusal(c, j) is not None:
        return None
    spec = c.job(j)
    return emit(
        MadePending(s, j, 0)._replace(enqueued=s.enqueued + 1),
        job=j,
        queue=spec.queue,
        group=spec.group,
        cost=spec.cost,
    )


@Admission.action(Producers, event="refuse")
def Refuse(c: Constants, s: Vars, p: str) -> object:
    """The job's cost alone exceeds its queue's or group's budget: refused, it stays with the caller."""
    j = Next(c, s)
    if j is None:
        return None
    reason = Refusal(c, j)
    if reason is None:
        return None
    return emit(SetJob(s, j, Job(REFUSED, reason=reason), enqueued=s.enqueued + 1), job=j, reason=reason)


# ============================================================================ ACTIONS: workers


@Admission.program_counter(Workers)
def WorkerPc(c: Constants, s: Vars, w: str) -> str:
    return s.worker[w].pc


@Admission.action(Workers, event="admit", at=W_IDLE)
def ClaimAndAdmit(c: Constants, s: Vars, w: str) -> object:
    """BEGIN IMMEDIATE; claim the first pending job; every check passes on the processing jobs: admit."""
    j = Claimed(c, s, w)
    if j is None or Denial(c, s, j) is not None:
        return None
    s = Admitted(s, w, j)
    return emit(s, job=j, worker=w, attempt=s.job[j].attempts)


@Admission.action(Workers, event="deny", at=W_IDLE)
def ClaimAndDeny(c: Constants, s: Vars, w: str) -> object:
    """BEGIN IMMEDIATE; claim the first pending job; the first failing check names the reason: give back."""
    j = Claimed(c, s, w)
    reason = None if j is None else Denial(c, s, j)
    if j is None or reason is None:
        return None
    return emit(GivenBack(s, j, reason), job=j, worker=w, reason=reason)


@Admission.action(Workers, event="deny", at=W_IDLE)
def ResourceDeny(c: Constants, s: Vars, w: str) -> object:
    """The budgets allow the claimed job but the worker's resource checks refuse it now (bounded)."""
    j = Claimed(c, s, w)
    if j is None or not c.admission_enabled or s.pressure == 0 or Denial(c, s, j) is not None:
        return None
    return emit(GivenBack(s, j, RESOURCE)._replace(pressure=s.pressure - 1), job=j, worker=w, reason=RESOURCE)


@Admission.action(Workers, event="start", at=W_ADMITTED)
def Start(c: Constants, s: Vars, w: str) -> object:
    """The admitted worker starts the job's handler (outside the transaction)."""
    me = s.worker[w]
    if me.pc != W_ADMITTED:
        return None
    return emit(SetWorker(s, w, me._replace(pc=W_RUNNING)), job=me.job, worker=w, attempt=me.attempt)


@Admission.action(Workers, event="finish", at=W_RUNNING)
def Finish(c: Constants, s: Vars, w: str) -> object:
    """The handler returns; the worker marks the job done if its lease is still the job's (fenced)."""
    me = s.worker[w]
    if me.pc != W_RUNNING or me.job is None:
        return None
    j = me.job
    held = LeaseHeld(s, w, me)
    s = SetWorker(s, w, Worker(W_IDLE))
    if held:
        s = SetJob(s, j, Job(DONE, me.attempt), finishes=s.finishes.except_(j, s.finishes[j] + 1))
        return emit(s, job=j, worker=w, attempt=me.attempt, stale=False)
    return emit(s, job=j, worker=w, attempt=me.attempt, stale=True)


@Admission.action(Workers, event="release", at=(W_ADMITTED, W_RUNNING))
def Release(c: Constants, s: Vars, w: str) -> object:
    """The worker is told to stop with a job in hand (not started, or cut short): under its lease
    (fenced by the token) the job goes back pending at once, and the attempt its admission spent is
    given back — the cut-short run does not count (bounded by ``releases``)."""
    stopping = Stopping(s, w)
    if stopping is None or not LeaseHeld(s, w, stopping[0]):
        return None  # the lease is gone: ReleaseFenced
    me, j = stopping
    s = UndoAdmission(s, j)
    s = SetWorker(MadePending(s, j, me.attempt - 1), w, Worker(W_IDLE))
    return emit(s._replace(releases=s.releases - 1), job=j, worker=w, attempts=me.attempt - 1)


@Admission.action(Workers, at=(W_ADMITTED, W_RUNNING))
def ReleaseFenced(c: Constants, s: Vars, w: str) -> object:
    """The stop comes after the lease expired: the store refuses the stale token, the job stays
    where the reaper put it, and the worker just stops holding it."""
    stopping = Stopping(s, w)
    if stopping is None or LeaseHeld(s, w, stopping[0]):
        return None  # still its lease: Release
    return SetWorker(s, w, Worker(W_IDLE))._replace(releases=s.releases - 1)


# ============================================================================ ACTIONS: the environment


@Admission.action(Timers)
def RetryDue(c: Constants, s: Vars, j: str) -> object:
    """A deferred job's retry-after passes: it is pending (claimable) again."""
    job = s.job[j]
    if job.status != DEFERRED:
        return None
    return MadePending(s, j, job.attempts)


@Admission.action(Reapers, Jobs, event="lease_expire")
def LeaseExpire(c: Constants, s: Vars, r: str, j: str) -> object:
    """``j``'s lease runs out: claimable again, or failed when its attempts are spent."""
    job = s.job[j]
    if s.expiries == 0 or job.status not in HELD:
        return None
    failed = job.attempts >= c.max_attempts
    if failed:
        s = SetJob(s, j, Job(FAILED, job.attempts, None, ATTEMPTS_EXHAUSTED))
    else:
        s = MadePending(s, j, job.attempts)
    return emit(
        s._replace(expiries=s.expiries - 1), job=j, worker=job.owner, attempt=job.attempts, failed=failed
    )


# ============================================================================ INVARIANTS
# The state predicates of spec.admission_state, checked in every reachable state.

Admission.invariant(reads="job")(GroupWithinLimit)
Admission.invariant(reads="job")(QueueWithinBudget)
Admission.invariant(reads="job")(GroupWithinBudget)
Admission.invariant(reads=("job", "worker", "ready", "enqueued", "finishes"))(NoJobLost)
Admission.invariant(reads=("job", "admits"))(AttemptsCountAdmissions)
Admission.invariant(reads="job")(AttemptsWithinMax)


# ============================================================================ FAIRNESS & LIVENESS

# Workers and the producer are processes that keep running; a deferred job's retry time
# comes. Lease expiry is a failure
# the system must survive, not a step it may count on: the reaper is not fair.
Admission.fairness(WF(Workers), WF(Producers), WF(Timers))

Admission.property(
    EventuallyAlways(
        "EveryAdmissibleJobRuns",
        AdmissibleJobsRan,
        "every job whose cost fits its budgets is eventually admitted and done (no job deferred for ever)",
    )
)
Admission.property(
    EventuallyAlways(
        "NoJobDeferredForever",
        EveryJobSettled,
        "every job ends done, failed with a reason or refused at enqueue: none is given back for ever",
    )
)

# ============================================================================ DONE


@Admission.terminal
def Finished(c: Constants, s: Vars) -> bool:
    """The script is enqueued, every job settled, every worker idle."""
    idle = all(me.pc == W_IDLE for me in s.worker.values())
    return s.enqueued == len(c.jobs) and EveryJobSettled(c, s) and idle


# How a person reads a state (counterexamples): spec.admission_state.Show.
Admission.describe(Show)


SPEC = Admission.spec
