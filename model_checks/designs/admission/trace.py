"""Trace conformance for the admission design: a job store's merged trace against the spec's invariants.

A job store traces one file per process (``reference.jobs.tracing``); ``merged_lines`` joins them
into one trace of this format: a header naming design ``admission``, then every event in ``seq``
order (the seq is allocated inside each store transaction, so it is the order the steps took effect
across processes). ``lanecheck validate`` then replays it against the invariants of
``spec/admission.py`` — the format's checker keeps, per job, what the spec's ``Job`` keeps (state,
holder, admissions) and judges each event as the spec's action would:

* rules 3-5 are ``GroupWithinLimit``, ``QueueWithinBudget``, ``GroupWithinBudget``, checked when a
  job is admitted (a later ``budgets`` event may shrink a budget below what already runs);
* rule 6 is ``ClaimAndDeny``'s guard: a denial names the first failing check over the
  ``processing`` jobs, or a resource reason (the spec's nondeterministic ``resource``) when none fails;
* rule 7 is ``AttemptsCountAdmissions`` (a ``start`` logs the attempt: the number of admissions);
* rule 9 is ``NoJobLost``: the trace's own account of every job must match the store's final counts
  (the ``end`` event a test or harness appends once every worker stopped).

A trace that does not start at the store's first step cannot be judged: every job must be enqueued
in it (the checker holds one small row per job, so memory grows with the jobs, not the events).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_checks.conformance.streamed import DesignFormat, Event, FieldCheck, is_bool, is_count, one_of
from model_checks.conformance.verdict import Rejected

DESIGN = "admission"
VERSION = 1
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
    "only at it",
    8: "leases: only the lease holder finishes, fails or retries a processing job; a lease expires only "
    "on a processing job, failing it exactly when its attempts are spent",
    9: "no job lost (NoJobLost): the store's final counts (end) match the trace's account of every job; "
    "at the end of a run every job is done, failed or discarded with a reason, or pending, none "
    "processing and no claim undecided",
    10: "a trace without `end` (and not declared complete) is judged as a prefix of a run",
}


# ------------------------------------------------------------------------------ field checks


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


# ------------------------------------------------------------------------------ the checker


@dataclass
class _Job:
    queue: str
    group: str | None
    limit: int | None
    cost: int
    max_attempts: int
    state: str = "pending"
    admits: int = 0
    holder: str | None = None
    last_seq: int = 0  # the seq of the last event that changed it (for people)


@dataclass
class _Open:
    """A claim waiting for its decision, or an admission waiting for its start."""

    thread: str
    job: int
    seq: int
    kind: str  # "claim" (admit or deny owed) or "admit" (start owed)


def _show(ev: Event) -> str:
    fields = {k: v for k, v in ev.items() if k not in ("seq", "thread", "event", "process")}
    return f"{ev['thread']} {ev['event']} {fields}"


class AdmissionChecker:
    """The judge of one merged job-store trace (a ``streamed.Checker``)."""

    def __init__(self, config: dict[str, Any]) -> None:
        budgets = config.get("budgets") or {}
        self.queues: dict[str, int] = dict(budgets.get("queues", {}))
        self.groups: dict[str, int] = dict(budgets.get("groups", {}))
        self.jobs: dict[int, _Job] = {}
        self.open: _Open | None = None
        self.complete = False

    # -- helpers -------------------------------------------------------------------------------

    def _job(self, ev: Event) -> _Job:
        job = self.jobs.get(ev["job"])
        if job is None:
            raise Rejected(1, f"{_show(ev)} — job {ev['job']} was never enqueued in this trace")
        return job

    def _running(self, *, queue: str | None = None, group: str | None = None) -> list[_Job]:
        return [
            j
            for j in self.jobs.values()
            if j.state == "processing"
            and (queue is None or j.queue == queue)
            and (group is None or j.group == group)
        ]

    def _first_failing(self, job: _Job) -> tuple[str, str] | None:
        """The spec's ``Denial``: the first of checks 1-3 the job fails now, with its numbers."""
        if job.group is not None and job.limit is not None:
            running = len(self._running(group=job.group))
            if running >= job.limit:
                return (
                    "group_concurrency_limit",
                    f"group {job.group!r} runs {running} of its limit {job.limit}",
                )
        budget = self.queues.get(job.queue)
        if budget is not None:
            active = sum(j.cost for j in self._running(queue=job.queue))
            if active + job.cost > budget:
                return (
                    "queue_budget",
                    f"queue {job.queue!r}: active {active} + cost {job.cost} > budget {budget}",
                )
        budget = self.groups.get(job.group) if job.group is not None else None
        if budget is not None:
            active = sum(j.cost for j in self._running(group=job.group))
            if active + job.cost > budget:
                return (
                    "group_budget",
                    f"group {job.group!r}: active {active} + cost {job.cost} > budget {budget}",
                )
        return None

    def _refusal(self, job: _Job) -> str | None:
        """Why the job's cost alone can never fit its budgets, or None."""
        budget = self.queues.get(job.queue)
        if budget is not None and job.cost > budget:
            return f"cost {job.cost} exceeds queue {job.queue!r} budget {budget}"
        budget = self.groups.get(job.group) if job.group is not None else None
        if budget is not None and job.cost > budget:
            return f"cost {job.cost} exceeds group {job.group!r} budget {budget}"
        return None

    def _agrees(self, ev: Event, job: _Job) -> None:
        for field_name, mine in (("queue", job.queue), ("group", job.group), ("cost", job.cost)):
            if field_name in ev and ev[field_name] != mine:
                raise Rejected(1, f"{_show(ev)} — job {ev['job']} was enqueued with {field_name} {mine!r}")
        if "limit" in ev and ev["limit"] != job.limit:
            raise Rejected(1, f"{_show(ev)} — job {ev['job']} was enqueued with limit {job.limit!r}")

    def _held(self, ev: Event, job: _Job, what: str) -> None:
        if job.state != "processing":
            raise Rejected(
                8, f"{_show(ev)} — {what} of job {ev['job']}, which is {job.state}, not processing"
            )
        if ev["thread"] != job.holder:
            raise Rejected(
                8,
                f"{_show(ev)} — {what} of job {ev['job']} by {ev['thread']}, but its lease is {job.holder}'s",
            )

    # -- the Checker protocol ------------------------------------------------------------------

    def step(self, ev: Event) -> None:
        kind, thread = ev["event"], ev["thread"]
        if self.complete:
            raise Rejected(9, f"{_show(ev)} — an event after end: the run was over")
        owed = self.open
        if owed is not None and thread != owed.thread:
            what = "claim" if owed.kind == "claim" else "admission (no start yet)"
            raise Rejected(
                2,
                f"{_show(ev)} — {owed.thread}'s {what} of job {owed.job} at seq {owed.seq} is open:"
                " claim-and-admit"
                " is one transaction, no other worker's step comes between",
            )
        handler = getattr(self, f"_on_{kind}")
        handler(ev)

    def _on_enqueue(self, ev: Event) -> None:
        if ev["job"] in self.jobs:
            raise Rejected(1, f"{_show(ev)} — job {ev['job']} was enqueued before")
        job = _Job(ev["queue"], ev["group"], ev["limit"], ev["cost"], ev["max_attempts"], last_seq=ev["seq"])
        refusal = self._refusal(job)
        if refusal is not None:
            raise Rejected(1, f"{_show(ev)} — {refusal}: it can never run and must be refused at enqueue")
        self.jobs[ev["job"]] = job

    def _on_refuse(self, ev: Event) -> None:
        return None

    def _on_budgets(self, ev: Event) -> None:
        self.queues, self.groups = dict(ev["queues"]), dict(ev["groups"])

    def _on_claim(self, ev: Event) -> None:
        job = self._job(ev)
        self._agrees(ev, job)
        if self.open is not None and self.open.thread == ev["thread"]:
            raise Rejected(
                2,
                f"{_show(ev)} — {ev['thread']} claimed job {self.open.job} at seq {self.open.seq}"
                " and did not decide",
            )
        if job.state != "pending":
            extra = f" by {job.holder}" if job.state == "processing" else ""
            raise Rejected(2, f"{_show(ev)} — job {ev['job']} is {job.state}{extra}: a double claim")
        self.open = _Open(ev["thread"], ev["job"], ev["seq"], "claim")

    def _decided(self, ev: Event) -> _Job:
        """The open claim this admit or deny decides (same worker, same job)."""
        owed = self.open
        job = self._job(ev)
        if owed is None or owed.kind != "claim" or owed.thread != ev["thread"] or owed.job != ev["job"]:
            if job.state == "processing":
                raise Rejected(
                    2, f"{_show(ev)} — job {ev['job']} is processing by {job.holder}: a double claim"
                )
            raise Rejected(
                2, f"{_show(ev)} — {ev['event']} of job {ev['job']} without {ev['thread']}'s claim of it"
            )
        return job

    def _on_admit(self, ev: Event) -> None:
        job = self._decided(ev)
        self._agrees(ev, job)
        failing = self._first_failing(job)
        if failing is not None:
            reason, detail = failing
            rule = {"group_concurrency_limit": 3, "queue_budget": 4, "group_budget": 5}[reason]
            raise Rejected(rule, f"{_show(ev)} — admitted over {reason.replace('_', ' ')}: {detail}")
        job.state, job.holder, job.last_seq = "processing", ev["thread"], ev["seq"]
        job.admits += 1
        self.open = _Open(ev["thread"], ev["job"], ev["seq"], "admit")

    def _on_deny(self, ev: Event) -> None:
        job = self._decided(ev)
        refusal = self._refusal(job)
        if refusal is not None:
            raise Rejected(6, f"{_show(ev)} — {refusal}: it can never run, so it is failed, never deferred")
        failing = self._first_failing(job)
        reason = ev["reason"]
        if failing is not None and reason != failing[0]:
            raise Rejected(6, f"{_show(ev)} — the first failing check is {failing[0]} ({failing[1]})")
        if failing is None and reason in BUDGET_REASONS:
            raise Rejected(
                6, f"{_show(ev)} — denied for {reason}, but the processing jobs leave room: {self._room(job)}"
            )
        job.last_seq = ev["seq"]  # given back: still pending, its attempts untouched
        self.open = None

    def _room(self, job: _Job) -> str:
        parts = []
        if job.group is not None and job.limit is not None:
            parts.append(f"group {job.group!r} runs {len(self._running(group=job.group))} of {job.limit}")
        if job.queue in self.queues:
            active = sum(j.cost for j in self._running(queue=job.queue))
            parts.append(f"queue {job.queue!r} at {active} + {job.cost} of {self.queues[job.queue]}")
        if job.group is not None and job.group in self.groups:
            active = sum(j.cost for j in self._running(group=job.group))
            parts.append(f"group {job.group!r} at {active} + {job.cost} of {self.groups[job.group]}")
        return "; ".join(parts) or "no limit or budget applies"

    def _on_start(self, ev: Event) -> None:
        owed = self.open
        job = self._job(ev)
        if owed is None or owed.kind != "admit" or owed.thread != ev["thread"] or owed.job != ev["job"]:
            raise Rejected(2, f"{_show(ev)} — a start must follow the same worker's admit of the job")
        if ev["attempt"] != job.admits:
            raise Rejected(
                7,
                f"{_show(ev)} — job {ev['job']} was admitted {job.admits} time(s), so this is attempt"
                f" {job.admits}: an attempt was spent without an admission (by a denial?)",
            )
        self.open = None

    def _on_finish(self, ev: Event) -> None:
        job = self._job(ev)
        self._held(ev, job, "finish")
        job.state, job.holder, job.last_seq = "done", None, ev["seq"]

    def _on_retry(self, ev: Event) -> None:
        job = self._job(ev)
        self._held(ev, job, "retry")
        if ev["attempts"] != job.admits or job.admits >= job.max_attempts:
            raise Rejected(
                7,
                f"{_show(ev)} — job {ev['job']} has run {job.admits} of {job.max_attempts} attempts: "
                + (
                    "it fails for good now" if job.admits >= job.max_attempts else f"attempts is {job.admits}"
                ),
            )
        job.state, job.holder, job.last_seq = "pending", None, ev["seq"]

    def _on_fail(self, ev: Event) -> None:
        job = self._job(ev)
        if job.state == "pending":
            refusal = self._refusal(job)
            if refusal is None:
                raise Rejected(
                    6,
                    f"{_show(ev)} — a pending job fails only when its cost alone exceeds a budget,"
                    " and it fits",
                )
        else:
            self._held(ev, job, "fail")
            if job.admits < job.max_attempts:
                raise Rejected(
                    7,
                    f"{_show(ev)} — job {ev['job']} has run {job.admits} of {job.max_attempts} attempts:"
                    " it is retried, not failed",
                )
        job.state, job.holder, job.last_seq = "failed", None, ev["seq"]

    def _on_lease_expire(self, ev: Event) -> None:
        job = self._job(ev)
        if job.state != "processing":
            raise Rejected(8, f"{_show(ev)} — job {ev['job']} is {job.state}: only a lease can expire")
        if "worker" in ev and ev["worker"] is not None and ev["worker"] != job.holder:
            raise Rejected(8, f"{_show(ev)} — job {ev['job']}'s lease is {job.holder}'s")
        spent = job.admits >= job.max_attempts
        if (ev["outcome"] == "failed") != spent:
            raise Rejected(
                8,
                f"{_show(ev)} — job {ev['job']} has run {job.admits} of {job.max_attempts} attempts: it "
                + ("fails" if spent else "goes back pending"),
            )
        job.state, job.holder, job.last_seq = ev["outcome"], None, ev["seq"]

    def _on_discard(self, ev: Event) -> None:
        job = self._job(ev)
        if job.state != "pending":
            raise Rejected(
                9, f"{_show(ev)} — job {ev['job']} is {job.state}: only a pending job is discarded"
            )
        job.state, job.last_seq = "discarded", ev["seq"]

    def _on_workflow_start(self, ev: Event) -> None:
        return None

    def _on_workflow_complete(self, ev: Event) -> None:
        return None

    def _on_workflow_fail(self, ev: Event) -> None:
        return None

    def _on_end(self, ev: Event) -> None:
        mine = self.counts()
        for state in STATES:
            theirs = ev["counts"].get(state)
            if theirs is None or theirs == mine[state]:
                continue
            held = [f"job {n} (seq {j.last_seq})" for n, j in self.jobs.items() if j.state == state][:5]
            said = f": {', '.join(held)}" if held else ""
            raise Rejected(
                9,
                f"{_show(ev)} — the store holds {theirs} {state} job(s), the trace accounts for {mine[state]}"
                f"{said}: a job was lost or changed without an event",
            )
        self._settled(f"{_show(ev)} — ")
        self.complete = True

    def _settled(self, head: str) -> None:
        if self.open is not None:
            raise Rejected(
                9, f"{head}{self.open.thread}'s {self.open.kind} of job {self.open.job} is undecided"
            )
        running = [f"job {n} ({j.holder})" for n, j in self.jobs.items() if j.state == "processing"][:5]
        if running:
            raise Rejected(9, f"{head}the run is over but {', '.join(running)} still processing: lost")

    def finish(self, complete: bool) -> None:
        if complete and not self.complete:
            self._settled("the run is over: ")

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(STATES, 0)
        for job in self.jobs.values():
            counts[job.state] += 1
        return counts

    def pending(self) -> tuple[dict[str, Any], list[str]]:
        counts = self.counts()
        phrases = [f"{counts['processing']} job(s) processing"] if counts["processing"] else []
        if self.open is not None:
            phrases.append(
                f"{self.open.thread}'s {self.open.kind} of job {self.open.job} owes its next event"
            )
        return {"counts": counts}, phrases

    def describe(self) -> list[dict[str, Any]]:
        running = {
            str(n): {"queue": j.queue, "group": j.group, "cost": j.cost, "holder": j.holder}
            for n, j in self.jobs.items()
            if j.state == "processing"
        }
        return [
            {
                "counts": self.counts(),
                "processing": dict(list(running.items())[:16]),
                "budgets": {"queues": self.queues, "groups": self.groups},
            }
        ]


def _make(config: dict[str, Any]) -> AdmissionChecker:
    return AdmissionChecker(config)


FORMAT = DesignFormat(
    design=DESIGN,
    schema_file="trace-schema.json",
    schema_package=__package__ or "",
    fields=FIELDS,
    optional=OPTIONAL,
    # Job ids are not bounded by the header (a queue runs for ever): no indexed field.
    index="",
    bound="",
    make=_make,
    rules=ADMISSION_RULES,
    completion="end (the store's final counts, once every worker stopped)",
)


# ------------------------------------------------------------------------------ building a trace


def header(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {"trace": "lanecheck", "version": VERSION, "design": DESIGN, "config": dict(config or {})}


def end_event(seq: int, counts: Mapping[str, int], thread: str = "check") -> dict[str, Any]:
    """The snapshot that closes a trace: the store's counts per state once every worker stopped."""
    return {
        "seq": seq,
        "thread": thread,
        "event": "end",
        "counts": {s: int(counts.get(s, 0)) for s in STATES},
    }


def trace_lines(
    events: Iterable[Event], *, end: Mapping[str, int] | None = None, config: Mapping[str, Any] | None = None
) -> list[str]:
    """One trace of this format from a store's events (already in seq order), with ``end`` counts."""
    listed = list(events)
    lines = [json.dumps(header(config))] + [json.dumps(e) for e in listed]
    if end is not None:
        last = listed[-1]["seq"] if listed else 0
        lines.append(json.dumps(end_event(int(last) + 1, end)))
    return lines


def merged_lines(paths: Iterable[Path], *, end: Mapping[str, int] | None = None) -> list[str]:
    """The per-process trace files of one store, merged (``tracing.merge``), as one trace of this format.

    ``ValueError`` from ``merge`` when the files do not join up (a seq missing or twice)."""
    from reference.jobs.tracing import merge

    headers, events = merge(paths)
    processes = sorted(str(h.get("process")) for h in headers)
    return trace_lines(events, end=end, config={"processes": processes})


__all__ = [
    "ADMISSION_RULES",
    "DESIGN",
    "FORMAT",
    "AdmissionChecker",
    "end_event",
    "merged_lines",
    "trace_lines",
]
