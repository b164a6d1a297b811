"""Seeded bugs in the admission spec: each must be caught, with a shortest counterexample.

These are the bugs job queues ship when they add budgets: the budget check and
the claim in two transactions (two workers both see room and both claim); a
denial that spends an attempt, or acknowledges the job instead of giving it
back; budgets summed over queued rows instead of processing ones; a job whose
cost alone exceeds its budget accepted and deferred forever; and the
**mutual-deferral livelock** of the claim-first order: a claimed row already
counts as ``processing``, so two workers each holding a job that the other's
claimed cost pushes over budget both give back and retry, forever.

``expect`` and ``length`` are what the explorer must report (an invariant for
safety bugs, a liveness property under the spec's fairness for the others); the
tests assert both, and that a depth bound of ``length - 1`` finds nothing.
"""

from __future__ import annotations

from model_checks.mutant import SpecMutant, by_name
from model_checks.spec_mutation import split
from spec import admission as ad
from spec.admission import (
    CLAIMED,
    DEFERRED,
    DONE,
    PENDING,
    PROCESSING,
    RESOURCE,
    SPEC,
    W_CHECKED,
    W_CLAIMED,
    W_IDLE,
    Constants,
    Job,
    Vars,
    Worker,
    Workers,
)
from spec.language import Action, emit, variant

# --- check-then-claim: the budget check and the claim in two transactions -------------------


def CheckBudgets(c: Constants, s: Vars, w: str) -> object:
    """BUG: a read transaction sums the active cost (and finds room for the first pending job)."""
    j = ad.Claimed(c, s, w)
    if j is None or ad.Denial(c, s, j) is not None:
        return None
    seen = tuple(ad.Active(c, s, (PROCESSING,), ""))
    return ad.SetWorker(s, w, Worker(W_CHECKED, seen=seen))


def ClaimChecked(c: Constants, s: Vars, w: str) -> object:
    """BUG: a second transaction claims the first pending job if it fits the room read before."""
    me = s.worker[w]
    if me.pc != W_CHECKED:
        return None
    j = s.ready[0] if s.ready else None
    if j is None or ad.DenialOver(c, s, j, [k for k in me.seen if k != j]) is not None:
        return ad.SetWorker(s, w, Worker(W_IDLE))  # nothing fits the room it saw: look again
    s = ad.Admitted(s, w, j)
    return emit(s, job=j, worker=w, attempt=s.job[j].attempts)


CHECK_THEN_CLAIM = split(SPEC, "check-then-claim", "ClaimAndAdmit", CheckBudgets, ClaimChecked)

# --- denial-spends-attempt: the denial path increments attempts like a failure would ---------


def DenyCountingAttempt(c: Constants, s: Vars, w: str) -> object:
    """BUG: the resource denial releases the job through the failure path: attempts + 1."""
    j = ad.Claimed(c, s, w)
    if j is None or not c.admission_enabled or s.pressure == 0 or ad.Denial(c, s, j) is not None:
        return None
    s = ad.GivenBack(s, j, RESOURCE)
    s = ad.SetJob(s, j, s.job[j]._replace(attempts=s.job[j].attempts + 1), pressure=s.pressure - 1)
    return emit(s, job=j, worker=w, reason=RESOURCE)


DENIAL_SPENDS_ATTEMPT = variant(
    SPEC, "denial-spends-attempt", replace_actions={"ResourceDeny": DenyCountingAttempt}
)

# --- denial-drops-job: the denial acknowledges the job instead of giving it back ------------


def DenyByAck(c: Constants, s: Vars, w: str) -> object:
    """BUG: the resource denial ends the claim with ack (the completion path): the job is gone."""
    j = ad.Claimed(c, s, w)
    if j is None or not c.admission_enabled or s.pressure == 0 or ad.Denial(c, s, j) is not None:
        return None
    s = ad.SetJob(s, j, Job(DONE, s.job[j].attempts), pressure=s.pressure - 1, ready=s.ready[1:])
    return emit(s, job=j, worker=w, reason=RESOURCE)


DENIAL_DROPS_JOB = variant(SPEC, "denial-drops-job", replace_actions={"ResourceDeny": DenyByAck})

# --- budget-counts-queued: admission sums the cost of queued rows, not processing ones -------

QUEUED = (PENDING, DEFERRED, CLAIMED, PROCESSING)


def AdmitOnQueued(c: Constants, s: Vars, w: str) -> object:
    """BUG: claim the first pending job and admit it when the jobs *queued* beside it leave room."""
    j = ad.Claimed(c, s, w)
    if j is None or ad.Denial(c, s, j, QUEUED) is not None:
        return None
    s = ad.Admitted(s, w, j)
    return emit(s, job=j, worker=w, attempt=s.job[j].attempts)


def DenyOnQueued(c: Constants, s: Vars, w: str) -> object:
    """BUG: claim the first pending job and give it back when the jobs *queued* beside it leave no room."""
    j = ad.Claimed(c, s, w)
    reason = None if j is None else ad.Denial(c, s, j, QUEUED)
    if j is None or reason is None:
        return None
    return emit(ad.GivenBack(s, j, reason), job=j, worker=w, reason=reason)


BUDGET_COUNTS_QUEUED = variant(
    SPEC,
    "budget-counts-queued",
    replace_actions={"ClaimAndAdmit": AdmitOnQueued, "ClaimAndDeny": DenyOnQueued},
    drop_actions=["ResourceDeny"],
)

# --- oversized-deferred: a job whose cost alone exceeds its budget is accepted ---------------


def EnqueueAnything(c: Constants, s: Vars, p: str) -> object:
    """BUG: insert the next job as pending whatever its cost: admission will sort it out."""
    j = ad.Next(c, s)
    if j is None:
        return None
    spec = c.job(j)
    s = ad.MadePending(s, j, 0)._replace(enqueued=s.enqueued + 1)
    return emit(s, job=j, queue=spec.queue, group=spec.group, cost=spec.cost)


OVERSIZED_DEFERRED = variant(
    SPEC, "oversized-deferred", replace_actions={"Enqueue": EnqueueAnything}, drop_actions=["Refuse"]
)

# --- claim-then-admit: the naive order, and its mutual-deferral livelock ---------------------
# The claim marks the row processing (here CLAIMED, which the naive admission query cannot tell
# from PROCESSING), commits, and a second transaction sums the active rows — the other workers'
# fresh claims included — to decide.

CLAIM_FIRST_COUNTS = (CLAIMED, PROCESSING)


def Claim(c: Constants, s: Vars, w: str) -> object:
    """Transaction 1: claim the first pending job (its row is active from now on); COMMIT."""
    j = ad.Claimed(c, s, w)
    if j is None:
        return None
    job = s.job[j]
    s = ad.SetJob(s, j, Job(CLAIMED, job.attempts, w), ready=s.ready[1:])
    return emit(ad.SetWorker(s, w, Worker(W_CLAIMED, j, job.attempts)), job=j, worker=w)


def AdmitClaimed(c: Constants, s: Vars, w: str) -> object:
    """Transaction 2: every check passes on the other active rows (claimed ones too): admit."""
    me = s.worker[w]
    if me.pc != W_CLAIMED or me.job is None or s.job[me.job] != Job(CLAIMED, me.attempt, w):
        return None
    if ad.Denial(c, s, me.job, CLAIM_FIRST_COUNTS) is not None:
        return None
    s = ad.Admitted(s, w, me.job)
    return emit(s, job=me.job, worker=w, attempt=s.job[me.job].attempts)


def DenyClaimed(c: Constants, s: Vars, w: str) -> object:
    """Transaction 2: a check fails on the other active rows: give the job back, retry later."""
    me = s.worker[w]
    if me.pc != W_CLAIMED or me.job is None:
        return None
    if s.job[me.job] != Job(CLAIMED, me.attempt, w):  # the lease expired meanwhile: let it go
        return emit(ad.SetWorker(s, w, Worker(W_IDLE)), job=me.job, worker=w, reason="lease_lost")
    reason = ad.Denial(c, s, me.job, CLAIM_FIRST_COUNTS)
    if reason is None:
        return None
    s = ad.GivenBack(ad.SetWorker(s, w, Worker(W_IDLE)), me.job, reason)
    return emit(s, job=me.job, worker=w, reason=reason)


def ResourceDenyClaimed(c: Constants, s: Vars, w: str) -> object:
    """Transaction 2: the budgets allow the job but the resource checks refuse it (bounded)."""
    me = s.worker[w]
    if (
        not c.admission_enabled
        or s.pressure == 0
        or me.pc != W_CLAIMED
        or me.job is None
        or s.job[me.job] != Job(CLAIMED, me.attempt, w)
    ):
        return None
    if ad.Denial(c, s, me.job, CLAIM_FIRST_COUNTS) is not None:
        return None
    s = ad.GivenBack(ad.SetWorker(s, w, Worker(W_IDLE)), me.job, RESOURCE)._replace(pressure=s.pressure - 1)
    return emit(s, job=me.job, worker=w, reason=RESOURCE)


CLAIM_THEN_ADMIT = variant(
    SPEC,
    "claim-then-admit",
    replace_actions={
        "ClaimAndAdmit": Action("Claim", Claim, (Workers,), "claim"),
        "ClaimAndDeny": Action("AdmitClaimed", AdmitClaimed, (Workers,), "admit"),
        "ResourceDeny": Action("ResourceDenyClaimed", ResourceDenyClaimed, (Workers,), "deny"),
    },
    add_actions=[Action("DenyClaimed", DenyClaimed, (Workers,), "deny")],
)


# --- release-spends-attempt / release-unfenced: the give-back of a stopping worker ----------


def ReleaseSpending(c: Constants, s: Vars, w: str) -> object:
    """BUG: the stopping worker gives the job back through the retry path: the attempt stays spent."""
    stopping = ad.Stopping(s, w)
    if stopping is None or not ad.LeaseHeld(s, w, stopping[0]):
        return None
    me, j = stopping
    s = ad.SetWorker(ad.MadePending(s, j, me.attempt), w, Worker(W_IDLE))
    return emit(s._replace(releases=s.releases - 1), job=j, worker=w, attempts=me.attempt)


def ReleaseUnfenced(c: Constants, s: Vars, w: str) -> object:
    """BUG: the give-back does not check the lease's token: a stale worker releases a job that the
    reaper already handed to another worker."""
    stopping = ad.Stopping(s, w)
    if stopping is None:
        return None
    me, j = stopping
    if s.job[j].status not in (PROCESSING, PENDING):
        return None
    s = ad.UndoAdmission(s, j)
    s = ad.SetJob(s, j, Job(PENDING, me.attempt - 1), ready=(*ad.Without(s.ready, j), j))
    s = ad.SetWorker(s, w, Worker(W_IDLE))
    return emit(s._replace(releases=s.releases - 1), job=j, worker=w, attempts=me.attempt - 1)


RELEASE_SPENDS_ATTEMPT = variant(
    SPEC,
    "release-spends-attempt",
    replace_actions={"Release": ReleaseSpending},
    drop_actions=["ReleaseFenced"],
)
RELEASE_UNFENCED = variant(
    SPEC, "release-unfenced", replace_actions={"Release": ReleaseUnfenced}, drop_actions=["ReleaseFenced"]
)

MUTANTS: dict[str, SpecMutant] = by_name(
    SpecMutant(
        "check-then-claim",
        "the budget check and the claim run in two transactions: both workers see room, both claim",
        CHECK_THEN_CLAIM,
        expect="QueueWithinBudget",
        length=6,
    ),
    SpecMutant(
        "denial-spends-attempt",
        "a resource denial gives the job back through the failure path, spending an attempt",
        DENIAL_SPENDS_ATTEMPT,
        expect="AttemptsCountAdmissions",
        length=2,
    ),
    SpecMutant(
        "denial-drops-job",
        "a resource denial acknowledges the job instead of giving it back: it is never run",
        DENIAL_DROPS_JOB,
        expect="NoJobLost",
        length=2,
    ),
    SpecMutant(
        "budget-counts-queued",
        "admission sums the cost of queued rows, not processing ones: two queued jobs block each other",
        BUDGET_COUNTS_QUEUED,
        expect="EveryAdmissibleJobRuns",
        length=6,
        config="livelock",
    ),
    SpecMutant(
        "oversized-deferred",
        "a job whose cost alone exceeds its queue budget is accepted and deferred forever",
        OVERSIZED_DEFERRED,
        expect="NoJobDeferredForever",
        length=11,
    ),
    SpecMutant(
        "claim-then-admit",
        "the naive order: claim (the row counts as active), then admit in a second transaction;"
        " two workers defer each other forever",
        CLAIM_THEN_ADMIT,
        expect="EveryAdmissibleJobRuns",
        length=9,
        config="livelock",
    ),
    SpecMutant(
        "release-spends-attempt",
        "a stopping worker gives its job back through the retry path: the cut-short run spends an"
        " attempt, and the job runs more often than max_attempts",
        RELEASE_SPENDS_ATTEMPT,
        expect="AttemptsWithinMax",
        length=4,
        config="release",
    ),
    SpecMutant(
        "release-unfenced",
        "the give-back does not check the lease's token: a stale worker takes back a job another"
        " worker now runs",
        RELEASE_UNFENCED,
        expect="AttemptsCountAdmissions",
        length=5,
        config="release-expiry",
    ),
)
