"""MODULE JobWakeup — how an idle worker of the PostgreSQL job store learns that a job arrived.

Workers claim jobs from a shared table (``reference.jobs.pg_store``). A worker that finds the
queue empty waits, and an enqueue wakes it: the enqueue's transaction sends ``NOTIFY`` on the
store's channel, which PostgreSQL delivers at commit to **every session listening at that
moment**, and to no later one. A session that is listening keeps what it was sent until it
reads it (the notification sits in its socket), so a worker busy claiming or running a job
misses nothing — but a session that starts ``LISTEN`` only after the commit never hears of it.

The design's order: **LISTEN, then claim, then wait.** A worker that finds nothing was
already listening when it looked, so any enqueue that committed after its look has sent it a
notification, and its wait returns at once. Waiting also has a **timeout** (the worker's poll
interval): a job can become claimable with no enqueue to announce it — a delayed job comes
due, a denied job's retry-after passes, a lease expires — and only a poll finds those.

The naive order (claim, find nothing, LISTEN, wait) loses the wakeup: the enqueue that
commits between the empty claim and the LISTEN notifies nobody, and the worker waits for a
notification that never comes (``spec_mutants``: a deadlock in three steps).

The listening connection can drop (a server restart): its notifications are gone. The worker
learns it when it waits; it listens again *before* it claims again, the same order.

Each action is one transaction of the store or one step of a worker outside it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from spec.job_processes import Producers, Timers, Workers
from spec.language import WF, EventuallyAlways, Function, SpecBuilder, emit

# ============================================================================ CONSTANTS

UNBORN, DELAYED, PENDING, RUNNING, DONE = "unborn", "delayed", "pending", "running", "done"
# Worker program counters: claim (about to claim, or to LISTEN first when not listening),
# listen (the naive order only: LISTEN after an empty claim), run, wait.
W_CLAIM, W_LISTEN, W_RUN, W_WAIT = "claim", "listen", "run", "wait"


@dataclass(frozen=True)
class Constants:
    workers: int
    jobs: tuple[bool, ...]  # enqueued in this order; True: delayed (claimable later, silently)
    drops: int = 0  # listening connections the environment may drop in one behaviour

    def job_names(self) -> tuple[str, ...]:
        return tuple(f"j{i}" for i in range(len(self.jobs)))

    def worker_names(self) -> tuple[str, ...]:
        return tuple(f"w{i}" for i in range(self.workers))


# Workers, Producers (the client) and Timers (one per job: a delayed job comes due) are
# spec/job_processes.py's.


def Network(c: Constants) -> tuple[str, ...]:
    return ("network",)


# ============================================================================ VARIABLES


class Worker(NamedTuple):
    pc: str
    listening: bool = False  # its session has run LISTEN (and not lost its connection since)
    notified: bool = False  # a notification delivered to its session and not read yet
    job: str | None = None


class Vars(NamedTuple):
    job: Function[str, str]  # each job's status
    worker: Function[str, Worker]
    enqueued: int  # the producer's place in its script
    drops: int  # connection drops the environment may still cause


JobWakeup = SpecBuilder("job-wakeup", __doc__ or "")


@JobWakeup.assume
def SomethingToDo(c: Constants) -> str | None:
    """At least one worker and one job; drops are counted, never negative."""
    if c.workers < 1 or not c.jobs or c.drops < 0:
        return "workers and jobs must be at least 1, drops at least 0"
    return None


# ============================================================================ INIT


@JobWakeup.init
def Init(c: Constants) -> list[Vars]:
    return [
        Vars(
            job=Function.const(c.job_names(), UNBORN),
            worker=Function.const(Workers(c), Worker(W_CLAIM)),
            enqueued=0,
            drops=c.drops,
        )
    ]


# ============================================================================ helpers


def SetWorker(s: Vars, w: str, me: Worker) -> Vars:
    return s._replace(worker=s.worker.except_(w, me))


def WorkerStep(s: Vars, w: str, at: str, when: Callable[[Worker], bool], **changes: Any) -> object:
    """``w`` at ``at`` with ``when`` true of it takes a step that changes only its own record:
    ``pc[w] = at /\\ when /\\ worker' = [worker EXCEPT ![w] = changes]``."""
    me = s.worker[w]
    if me.pc != at or not when(me):
        return None
    return emit(SetWorker(s, w, me._replace(**changes)), worker=w)


def FirstPending(s: Vars) -> str | None:
    """The job a claim takes: the first pending one (``FOR UPDATE SKIP LOCKED``, in order)."""
    return next((j for j, status in s.job.items() if status == PENDING), None)


def Notify(s: Vars) -> Function[str, Worker]:
    """NOTIFY at commit: every session listening now is sent one; nobody else ever is."""
    return Function.of(s.worker.domain(), lambda w: s.worker[w]._replace(notified=s.worker[w].listening))


# ============================================================================ ACTIONS: the producer


@JobWakeup.action(Producers, event="enqueue")
def Enqueue(c: Constants, s: Vars, p: str) -> object:
    """One transaction: insert the next job (pending, or delayed) and NOTIFY; both commit together."""
    if s.enqueued == len(c.jobs):
        return None
    j = c.job_names()[s.enqueued]
    status = DELAYED if c.jobs[s.enqueued] else PENDING
    s = s._replace(job=s.job.except_(j, status), enqueued=s.enqueued + 1, worker=Notify(s))
    return emit(s, job=j, delayed=status == DELAYED)


@JobWakeup.action(Timers)
def Due(c: Constants, s: Vars, j: str) -> object:
    """A delayed job's time comes: claimable now, and no NOTIFY says so."""
    if s.job[j] != DELAYED:
        return None
    return s._replace(job=s.job.except_(j, PENDING))


@JobWakeup.action(Network, Workers)
def Drop(c: Constants, s: Vars, n: str, w: str) -> object:
    """``w``'s listening connection is lost (bounded): its unread notifications with it."""
    me = s.worker[w]
    if s.drops == 0 or not me.listening:
        return None
    return SetWorker(s, w, me._replace(listening=False, notified=False))._replace(drops=s.drops - 1)


# ============================================================================ ACTIONS: workers


@JobWakeup.program_counter(Workers)
def WorkerPc(c: Constants, s: Vars, w: str) -> str:
    return s.worker[w].pc


@JobWakeup.action(Workers, event="listen", at=W_CLAIM)
def Listen(c: Constants, s: Vars, w: str) -> object:
    """A worker about to claim that is not listening runs LISTEN first."""
    return WorkerStep(s, w, W_CLAIM, lambda me: not me.listening, listening=True)


@JobWakeup.action(Workers, event="claim", at=W_CLAIM)
def Claim(c: Constants, s: Vars, w: str) -> object:
    """A listening worker claims the first pending job."""
    me = s.worker[w]
    j = FirstPending(s)
    if me.pc != W_CLAIM or not me.listening or j is None:
        return None
    s = SetWorker(s, w, me._replace(pc=W_RUN, job=j))
    return emit(s._replace(job=s.job.except_(j, RUNNING)), worker=w, job=j)


@JobWakeup.action(Workers, event="idle", at=W_CLAIM)
def FindNothing(c: Constants, s: Vars, w: str) -> object:
    """A listening worker's claim finds no pending job: it waits."""
    return WorkerStep(s, w, W_CLAIM, lambda me: me.listening and FirstPending(s) is None, pc=W_WAIT)


@JobWakeup.action(Workers, event="finish", at=W_RUN)
def Finish(c: Constants, s: Vars, w: str) -> object:
    """The handler returns; the job is done and the worker claims again (it never waits first)."""
    me = s.worker[w]
    if me.pc != W_RUN or me.job is None:
        return None
    s = s._replace(job=s.job.except_(me.job, DONE))
    return emit(SetWorker(s, w, me._replace(pc=W_CLAIM, job=None)), worker=w, job=me.job)


@JobWakeup.action(Workers, event="wake", at=W_WAIT)
def Wake(c: Constants, s: Vars, w: str) -> object:
    """A notification is there: the wait returns, having read every one; claim again."""
    return WorkerStep(s, w, W_WAIT, lambda me: me.listening and me.notified, pc=W_CLAIM, notified=False)


@JobWakeup.action(Workers, event="timeout", at=W_WAIT)
def Timeout(c: Constants, s: Vars, w: str) -> object:
    """The poll interval passes with no notification: claim again (the fallback)."""
    return WorkerStep(s, w, W_WAIT, lambda me: me.listening and not me.notified, pc=W_CLAIM)


@JobWakeup.action(Workers, event="lost", at=W_WAIT)
def ConnectionLost(c: Constants, s: Vars, w: str) -> object:
    """The wait finds its connection gone: back to claiming, which listens again first."""
    return WorkerStep(s, w, W_WAIT, lambda me: not me.listening, pc=W_CLAIM)


# ============================================================================ INVARIANTS


@JobWakeup.invariant(reads=("job", "worker", "enqueued"))
def NoJobLost(c: Constants, s: Vars) -> str | None:
    """Every enqueued job is delayed, pending, done, or running under exactly the worker holding it."""
    for i, (j, status) in enumerate(s.job.items()):
        holders = [w for w, me in s.worker.items() if me.job == j]
        if (status == UNBORN) != (i >= s.enqueued):
            return f"{j} is {status} but the producer enqueued {s.enqueued} jobs"
        if status == RUNNING and len(holders) != 1:
            return f"{j} is running but held by {holders or 'no worker'}"
        if status != RUNNING and holders:
            return f"{j} is {status} but {holders} hold it"
    return None


# ============================================================================ FAIRNESS & LIVENESS

# Workers, the producer and the timers keep running; a dropped connection is a failure to survive.
JobWakeup.fairness(WF(Workers), WF(Producers), WF(Timers))


def AllDone(c: Constants, s: Vars) -> bool:
    return all(status == DONE for status in s.job.values())


JobWakeup.property(
    EventuallyAlways("EveryJobRuns", AllDone, "every enqueued job is eventually claimed and done")
)


@JobWakeup.terminal
def Finished(c: Constants, s: Vars) -> bool:
    """Every job done: workers waiting for more work are not deadlocked."""
    return AllDone(c, s)


@JobWakeup.describe
def Show(c: Constants, s: Vars) -> dict[str, object]:
    def local(me: Worker) -> str:
        text = me.pc + (f" {me.job}" if me.job else "")
        return text + (" listening" if me.listening else "") + (" notified" if me.notified else "")

    return {
        "jobs": dict(s.job.items()),
        "workers": {w: local(me) for w, me in s.worker.items()},
        "enqueued": s.enqueued,
        "drops left": s.drops,
    }


SPEC = JobWakeup.spec
