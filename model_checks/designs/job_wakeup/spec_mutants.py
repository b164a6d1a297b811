"""Seeded bugs in the job-wakeup spec: each must be caught, with a shortest counterexample.

Every mutant drops the poll (``Timeout``): a wait with a timeout finds a missed job anyway, one
poll interval late, which is why the reference keeps polling as a fallback; without it a lost
wakeup is a worker asleep beside a pending job, for ever — a deadlock.

* ``claim-then-listen`` — the naive order: claim, find nothing, LISTEN, wait. The enqueue that
  commits between the empty claim and the LISTEN notifies nobody.
* ``notify-only`` — the design's order, but waiting for notifications alone: a delayed job that
  comes due is announced by nobody.
* ``relisten-then-wait`` — after a lost connection, LISTEN again and go straight back to waiting:
  whatever was enqueued while the connection was down was never announced to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from model_checks.mutant import SpecMutant, by_name
from spec import job_wakeup as jw
from spec.job_processes import Workers
from spec.job_wakeup import SPEC, W_CLAIM, W_LISTEN, W_RUN, W_WAIT, Constants, Vars
from spec.language import Action, Spec, emit, variant


def _without_poll(
    name: str, replace_actions: Mapping[str, Callable[..., Any] | Action] | None = None
) -> Spec:
    """A variant that also drops the poll (``Timeout``), as every mutant here does: with it, a
    missed job is found one poll interval late and no run deadlocks."""
    return variant(SPEC, name, replace_actions=replace_actions, drop_actions=["Timeout"])


# --- claim-then-listen: LISTEN only once a claim found nothing -------------------------------


def ClaimUnlistened(c: Constants, s: Vars, w: str) -> object:
    """The naive worker claims whether or not it listens."""
    me = s.worker[w]
    j = jw.FirstPending(s)
    if me.pc != W_CLAIM or j is None:
        return None
    s = jw.SetWorker(s, w, me._replace(pc=W_RUN, job=j))
    return emit(s._replace(job=s.job.except_(j, jw.RUNNING)), worker=w, job=j)


def FindNothingThenListen(c: Constants, s: Vars, w: str) -> object:
    """BUG: the claim found nothing; only now does the worker go to LISTEN (if it does not yet)."""
    me = s.worker[w]
    if me.pc != W_CLAIM or jw.FirstPending(s) is not None:
        return None
    return emit(jw.SetWorker(s, w, me._replace(pc=W_WAIT if me.listening else W_LISTEN)), worker=w)


def ListenThenWait(c: Constants, s: Vars, w: str) -> object:
    """BUG: LISTEN, then wait: an enqueue that committed since the empty claim is never heard of."""
    me = s.worker[w]
    if me.pc != W_LISTEN:
        return None
    return emit(jw.SetWorker(s, w, me._replace(pc=W_WAIT, listening=True)), worker=w)


NAIVE_ORDER: dict[str, Callable[..., Any] | Action] = {
    "Listen": Action("ListenThenWait", ListenThenWait, (Workers,), "listen"),
    "Claim": ClaimUnlistened,
    "FindNothing": FindNothingThenListen,
}
"""Claim first, LISTEN only once a claim came back empty."""

CLAIM_THEN_LISTEN = _without_poll("claim-then-listen", replace_actions=NAIVE_ORDER)

# The naive order with the poll kept: the lost wakeup costs a poll interval, never the job.
CLAIM_THEN_LISTEN_POLLING = variant(SPEC, "claim-then-listen-polling", replace_actions=NAIVE_ORDER)

# --- notify-only: no poll at all ---------------------------------------------------------------

NOTIFY_ONLY = _without_poll("notify-only")

# --- relisten-then-wait: after a lost connection, LISTEN and wait without claiming ------------


def RelistenAndWait(c: Constants, s: Vars, w: str) -> object:
    """BUG: the wait finds its connection gone, runs LISTEN on a new one and waits again."""
    return jw.WorkerStep(s, w, W_WAIT, lambda me: not me.listening, listening=True)


RELISTEN_THEN_WAIT = _without_poll("relisten-then-wait", replace_actions={"ConnectionLost": RelistenAndWait})

MUTANTS: dict[str, SpecMutant] = by_name(
    SpecMutant(
        "claim-then-listen",
        "the naive order: claim, find nothing, then LISTEN and wait; the enqueue in between is lost",
        CLAIM_THEN_LISTEN,
        expect="Deadlock",
        length=3,
    ),
    SpecMutant(
        "notify-only",
        "wait for a notification with no poll: a delayed job that comes due wakes nobody",
        NOTIFY_ONLY,
        expect="Deadlock",
        length=4,
        config="delayed",
    ),
    SpecMutant(
        "relisten-then-wait",
        "after a lost connection, LISTEN again and wait without claiming: the jobs enqueued"
        " while it was down are never announced",
        RELISTEN_THEN_WAIT,
        expect="Deadlock",
        length=5,
        config="drop",
    ),
)
