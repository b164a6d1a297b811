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
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_checks.conformance.streamed import DesignFormat, Event
from model_checks.conformance.verdict import Rejected
from model_checks.conformance.wording import some_of
from model_checks.designs.admission.trace_fields import (
    ADMISSION_RULES,
    BUDGET_REASONS,
    FIELDS,
    OPTIONAL,
    STATES,
)

DESIGN = "admission"
VERSION = 1
# What a worker logs next while its claim, or its admission, is open (rule 2).
NEXT_STEP = {"claim": ("admit", "deny"), "admit": ("start",)}
DONE = {"claim": "claimed", "admit": "admitted"}


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
        # What runs now, kept as jobs move: a check reads it in O(1), not by scanning every job
        # (a soak's trace has a hundred thousand jobs and a million events).
        self.queue_cost: Counter[str] = Counter()
        self.group_cost: Counter[str] = Counter()
        self.group_running: Counter[str] = Counter()

    # -- helpers -------------------------------------------------------------------------------

    def _job(self, ev: Event) -> _Job:
        job = self.jobs.get(ev["job"])
        if job is None:
            raise Rejected(1, f"{_show(ev)} — job {ev['job']} was never enqueued in this trace")
        return job

    def _move(self, job: _Job, state: str, holder: str | None, seq: int) -> None:
        """The job's new state (and lease holder), keeping the running totals."""
        sign = (state == "processing") - (job.state == "processing")
        if sign:
            self.queue_cost[job.queue] += sign * job.cost
            if job.group is not None:
                self.group_cost[job.group] += sign * job.cost
                self.group_running[job.group] += sign
        job.state, job.holder, job.last_seq = state, holder, seq

    def _active(self, kind: str, name: str) -> int:
        return (self.queue_cost if kind == "queue" else self.group_cost)[name]

    def _first_failing(self, job: _Job) -> tuple[str, str] | None:
        """The spec's ``Denial``: the first of checks 1-3 the job fails now, with its numbers."""
        if job.group is not None and job.limit is not None:
            running = self.group_running[job.group]
            if running >= job.limit:
                return (
                    "group_concurrency_limit",
                    f"group {job.group!r} runs {running} of its limit {job.limit}",
                )
        for kind, name, table in (("queue", job.queue, self.queues), ("group", job.group, self.groups)):
            budget = None if name is None else table.get(name)
            if name is None or budget is None:
                continue
            active = self._active(kind, name)
            if active + job.cost > budget:
                return (
                    f"{kind}_budget",
                    f"{kind} {name!r}: active {active} + cost {job.cost} > budget {budget}",
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
        if owed is not None and kind not in NEXT_STEP[owed.kind]:
            raise Rejected(
                2,
                f"{_show(ev)} — {thread} {DONE[owed.kind]} job {owed.job} at seq {owed.seq}: its next step"
                f" is the {' or '.join(NEXT_STEP[owed.kind])} of that job (claim-and-admit is one"
                " transaction)",
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
        self._move(job, "processing", ev["thread"], ev["seq"])
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
            parts.append(f"group {job.group!r} runs {self.group_running[job.group]} of {job.limit}")
        if job.queue in self.queues:
            active = self.queue_cost[job.queue]
            parts.append(f"queue {job.queue!r} at {active} + {job.cost} of {self.queues[job.queue]}")
        if job.group is not None and job.group in self.groups:
            active = self.group_cost[job.group]
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
        self._move(job, "done", None, ev["seq"])

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
        self._move(job, "pending", None, ev["seq"])

    def _on_release(self, ev: Event) -> None:
        job = self._job(ev)
        self._held(ev, job, "release")
        if ev["attempts"] != job.admits - 1:
            raise Rejected(
                7,
                f"{_show(ev)} — job {ev['job']} was admitted {job.admits} time(s): a release gives back"
                f" the attempt of this one, leaving {job.admits - 1}",
            )
        job.admits -= 1  # the cut-short run does not count: the next start is this attempt again
        self._move(job, "pending", None, ev["seq"])

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
        self._move(job, "failed", None, ev["seq"])

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
        self._move(job, ev["outcome"], None, ev["seq"])

    def _on_discard(self, ev: Event) -> None:
        job = self._job(ev)
        if job.state != "pending":
            raise Rejected(
                9, f"{_show(ev)} — job {ev['job']} is {job.state}: only a pending job is discarded"
            )
        self._move(job, "discarded", job.holder, ev["seq"])

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
            held = [f"job {n} (seq {j.last_seq})" for n, j in self.jobs.items() if j.state == state]
            said = f": {some_of(held[:5], len(held))}" if held else ""
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
        running = [f"job {n} ({j.holder})" for n, j in self.jobs.items() if j.state == "processing"]
        if running:
            shown = some_of(running[:5], len(running))
            raise Rejected(9, f"{head}the run is over but {shown} still processing: lost")

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
    "STATES",
    "AdmissionChecker",
    "end_event",
    "merged_lines",
    "trace_lines",
]
