"""The store's semantics, written once over a few storage primitives.

``StoreCore`` implements every ``JobStore`` method as one transaction of the backend
(``_transaction``): SQLite's ``BEGIN IMMEDIATE`` for ``SqliteStore``, a runtime lock for
``InMemoryStore``. The backends only read and write rows; what a claim, a denial, a lease expiry
or a workflow step means is decided here, so both stores behave the same by construction.

Admission runs inside the claim transaction. This is what rules out the mutual-deferral livelock
the admission spec shows: when the claim marks a job ``processing`` in one transaction and the
admission check runs in another, two workers can each hold a claimed job whose cost, added to the
other's claimed-but-not-started one, exceeds the budget; both give back, both claim again, forever.
Here a job is ``processing`` only once admitted, so the usage a check sees is that of admitted
jobs, and of two racing workers the first to commit is admitted.
"""

from __future__ import annotations

import dataclasses
import math
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from reference.jobs import workflow as wf
from reference.jobs.admission import Candidate, Conditions, Decision, Reason, decide
from reference.jobs.budgets import BudgetRefusal, Budgets, cost_refusal
from reference.jobs.model import Job, JobSpec, JobState, encode_payload, retry_delay, storable_text
from reference.jobs.primitives import StorePrimitives
from reference.jobs.rows import Ready, lease, measured, ready, status_of
from reference.jobs.store import SCAN_LIMIT, Claim, ClaimOutcome, Status
from reference.jobs.tracing import Event, Tracer

PROFILE_SAMPLES = 8
"""A handler's profile is the worst of its last this-many runs: recent, and conservative."""
MAX_STATUS = 1000
PROFILE_PROBE_AFTER = 3
"""Denials after which a job is no longer denied on its handler's profile (check 5): it runs as a
probe, and its run is a new sample of the profile (the worst of 8: a one-off slow run ages out)."""

# The core's steps of a claim and a finish. A store that stands in for them with a faster path of
# its own (SQLite's hand-written claim, PostgreSQL's server-side functions) takes that path only
# when a subclass overrides none of them: a checker's variant (a mutant) of a step keeps its step.
CLAIM_STEPS = (
    "claim",
    "finish",
    "_run",
    "_transaction",
    "_claim",
    "_scan",
    "_expired",
    "_expire",
    "_read_budgets",
    "_candidates",
    "_load",
    "_give_up",
    "_profile",
    "_usage",
    "_update",
    "_start",
    "_emit",
    "_emit_claim",
    "_emit_started",
    "_leased",
    "_mark_done",
    "_record",
    "_add_sample",
)


def steps_unchanged(store: object, base: type, steps: tuple[str, ...] = CLAIM_STEPS) -> bool:
    """Whether ``store``'s class keeps ``base``'s every one of ``steps`` (no variant overrides one)."""
    return all(getattr(type(store), step) is getattr(base, step) for step in steps)


__all__ = ["MAX_STATUS", "PROFILE_PROBE_AFTER", "PROFILE_SAMPLES", "Ready", "StoreCore", "lease", "ready"]


def _admission_fields(job: Job | Ready) -> dict[str, Any]:
    """What the trace says of a job where admission is decided: its id, queue, group, limit, cost."""
    return {
        "job": job.id,
        "queue": job.queue,
        "group": job.concurrency_group,
        "limit": job.concurrency_limit,
        "cost": job.cost_units,
    }


class StoreCore(StorePrimitives):
    def __init__(self, clock: Callable[[], float], tracer: Tracer | None, process: str) -> None:
        self._clock = clock
        self._tracer = tracer
        self._process = process
        self._events: list[tuple[str, str, dict[str, Any]]] = []

    # ------------------------------------------------------------------ tracing

    def _emit(self, thread: str, event: str, **fields: Any) -> None:
        if self._tracer is not None:
            self._events.append((thread, event, fields))

    def _numbered(self) -> list[Event]:
        """Inside the transaction: number this step's events (their seq commits with it)."""
        if not self._events:
            return []
        first = self._next_seq(len(self._events))
        batch = [
            {"seq": first + i, "thread": t, "process": self._process, "event": e, **f}
            for i, (t, e, f) in enumerate(self._events)
        ]
        self._events.clear()
        return batch

    def _run(self, body: Callable[[], Any]) -> Any:
        """``body`` in one transaction; its events go to the tracer once it committed."""
        # The event buffer is the store's, shared by the threads using it: only the transaction
        # (the in-memory store's lock) keeps one thread's from another's, so it is emptied inside
        # it (emptied before the lock, a second thread's step dropped the first's events).
        with self._transaction():
            self._events.clear()
            try:
                value = body()
                batch = self._numbered() if self._events else []
            finally:
                self._events.clear()
        if batch and self._tracer is not None:
            self._tracer.write(batch)
        return value

    def _read(self, body: Callable[[], Any]) -> Any:
        """``body``, which only reads, as one consistent step. A backend whose readers need not
        wait for the writers (SQLite under WAL) overrides this; by default it is a write step."""
        return self._run(body)

    # ------------------------------------------------------------------ the interface

    def enqueue(self, spec: JobSpec) -> Job:
        if not isinstance(spec, JobSpec):
            raise TypeError(f"spec must be a JobSpec, got {type(spec).__name__}")
        refused: list[str] = []

        def body() -> Job | None:
            refusal = cost_refusal(spec.queue, spec.concurrency_group, spec.cost_units, self._read_budgets())
            if refusal is not None:
                self._emit(self._process, "refuse", queue=spec.queue, reason=refusal)
                refused.append(refusal)
                return None
            job = self._insert_job(spec, self._clock(), None)
            self._emit_enqueue(job)
            return job

        job = self._run(body)
        if job is None:
            raise BudgetRefusal(refused[0])
        assert isinstance(job, Job)
        return job

    def _emit_enqueue(self, job: Job) -> None:
        self._emit(self._process, "enqueue", **_admission_fields(job), max_attempts=job.max_attempts)

    def claim(self, worker: str, conditions: Conditions, queues: Sequence[str] | None = None) -> ClaimOutcome:
        if not isinstance(conditions, Conditions):
            raise TypeError(f"conditions must be a Conditions, got {type(conditions).__name__}")
        return self._run(lambda: self._claim(worker, conditions, queues))  # type: ignore[no-any-return]

    def _claim(self, worker: str, conditions: Conditions, queues: Sequence[str] | None) -> ClaimOutcome:
        now = self._clock()
        expired = self._expired(now)
        for job_id in expired:
            self._expire(job_id, now)
        budgets = self._read_budgets()
        denied: list[tuple[int, Decision]] = []
        failed: list[tuple[int, str]] = []
        for job in self._scan(now, queues):
            refusal = cost_refusal(job.queue, job.concurrency_group, job.cost_units, budgets)
            if refusal is not None:  # the budget shrank after it was queued: it can never run
                whole = self._load(job.id)
                assert whole is not None
                self._give_up(whole, refusal, worker)
                failed.append((job.id, refusal))
                continue
            self._emit_claim(worker, job)
            profile = self._profile(job.handler)
            candidate = Candidate(job.queue, job.concurrency_group, job.concurrency_limit, job.cost_units)
            usage = self._usage(job.queue, job.concurrency_group)
            decision = decide(candidate, usage, budgets, profile, conditions)
            if decision.reason is Reason.HANDLER_PROFILE and job.denials >= PROFILE_PROBE_AFTER:
                # Only a run can revise the profile that denies it: deferring on it forever would
                # starve the handler for good after one slow run (review 15, F05).
                decision = decide(candidate, usage, budgets, profile, conditions, probe=True)
            if not decision.admitted:
                assert decision.reason is not None
                label = f"{decision.reason.value}: {decision.detail}"
                retry_at = now + decision.retry_after
                self._update(
                    job.id, {"available_at": retry_at, "denials": job.denials + 1, "last_denial": label}
                )
                self._emit(
                    worker,
                    "deny",
                    job=job.id,
                    reason=decision.reason.value,
                    detail=decision.detail,
                    retry_at=retry_at,
                )
                denied.append((job.id, decision))
                continue
            token = secrets.token_hex(8)
            lease_until = now + conditions.lease
            attempts = job.attempts + 1
            started = self._start(job.id, lease(worker, token, attempts, lease_until))
            self._emit_started(worker, job, attempts, lease_until)
            return ClaimOutcome(
                Claim(started, token, lease_until, profile, decision), denied, failed, expired
            )
        return ClaimOutcome(None, denied, failed, expired)

    def _emit_claim(self, worker: str, job: Ready) -> None:
        self._emit(
            worker, "claim", job=job.id, queue=job.queue, group=job.concurrency_group, cost=job.cost_units
        )

    def _emit_started(self, worker: str, job: Ready, attempts: int, lease_until: float) -> None:
        self._emit(worker, "admit", **_admission_fields(job))
        self._emit(worker, "start", job=job.id, attempt=attempts, lease_until=lease_until)

    def _scan(self, now: float, queues: Sequence[str] | None) -> Iterator[Ready]:
        """The first ``SCAN_LIMIT`` claimable jobs, in claim order, as one read of them would give.

        Most claims admit the first job, so it is read alone; the rest are read only once it was
        given back or failed. That read skips the rows this claim already examined (a job given
        back with no delay is still claimable), and no other rows changed: the claim holds the
        store's write lock."""
        head = self._candidates(now, queues, 1)
        if not head:
            return
        yield head[0]
        seen = {head[0].id}
        for job in self._candidates(now, queues, SCAN_LIMIT):
            if len(seen) >= SCAN_LIMIT:
                return
            if job.id not in seen:
                seen.add(job.id)
                yield job

    def _expire(self, job_id: int, now: float) -> None:
        job = self._load(job_id)
        assert job is not None
        lapsed = {"lease_until": None, "lease_token": None, "worker": None}
        if job.attempts >= job.max_attempts:
            reason = f"lease expired on attempt {job.attempts} of {job.max_attempts} (worker {job.worker})"
            self._update(job_id, {**lapsed, "state": JobState.FAILED, "reason": reason})
            self._emit(self._process, "lease_expire", job=job_id, outcome="failed", worker=job.worker)
            self._step_failed(job, reason)
        else:
            when = now + retry_delay(job.backoff, job.attempts)
            # waiting out the backoff now, not a denial: the deferred list must not show the old one
            changes = {
                **lapsed,
                "state": JobState.PENDING,
                "available_at": when,
                "reason": "lease expired",
                "last_denial": None,
            }
            self._update(job_id, changes)
            self._emit(self._process, "lease_expire", job=job_id, outcome="pending", worker=job.worker)

    def _give_up(self, job: Job, reason: str, worker: str) -> None:
        self._update(job.id, {"state": JobState.FAILED, "reason": reason})
        self._emit(worker, "fail", job=job.id, reason=reason, final=True)
        self._step_failed(job, reason)

    def heartbeat(self, job_id: int, token: str, lease: float) -> float:
        def body() -> float:
            self._leased(job_id, token)
            until = self._clock() + lease
            self._update(job_id, {"lease_until": until})
            return until

        return self._run(body)  # type: ignore[no-any-return]

    def _record(self, job: Job, duration: float, peak_memory: int) -> None:
        self._add_sample(job.handler, [float(duration), float(peak_memory)], PROFILE_SAMPLES)

    def record_run(self, handler: str, duration: float, peak_memory: int) -> None:
        measured(duration, peak_memory)
        # Above all a run that outlived its lease: handler_profile exists to catch exactly that one.
        self._run(lambda: self._add_sample(handler, [float(duration), float(peak_memory)], PROFILE_SAMPLES))

    def finish(self, job_id: int, token: str, result: Any, duration: float, peak_memory: int) -> Job:
        measured(duration, peak_memory)
        if result is not None:  # ValueError before anything changes: the caller fails the job
            encode_payload(result, "result")

        def body() -> Job:
            job = self._mark_done(job_id, token, result)
            self._record(job, duration, peak_memory)
            if self._tracer is not None:
                self._emit(job.worker or self._process, "finish", job=job_id)
            if job.workflow_id is not None and job.step is not None:
                run = self._load_run(job.workflow_id)
                if run is not None:  # a workflow step touches only other rows: ``job`` stays as stored
                    self._apply(run, wf.step_done(run, job.step, job.item_index, result))
            return job

        return self._run(body)  # type: ignore[no-any-return]

    def fail(self, job_id: int, token: str, error: str, duration: float, peak_memory: int) -> Job:
        measured(duration, peak_memory)
        error = storable_text(error)  # a store refusing the text would leave the job to its lease

        def body() -> Job:
            job = self._leased(job_id, token)
            self._record(job, duration, peak_memory)
            released = {"lease_until": None, "lease_token": None}
            if job.attempts >= job.max_attempts:
                reason = f"attempt {job.attempts} of {job.max_attempts} failed: {error}"
                self._update(job_id, {**released, "state": JobState.FAILED, "reason": reason})
                self._emit(job.worker or self._process, "fail", job=job_id, reason=reason, final=True)
                self._step_failed(job, reason)
            else:
                when = self._clock() + retry_delay(job.backoff, job.attempts)
                retry = {
                    "state": JobState.PENDING,
                    "available_at": when,
                    "reason": error,
                    "last_denial": None,
                }
                self._update(job_id, {**released, **retry})
                self._emit(
                    job.worker or self._process, "retry", job=job_id, attempts=job.attempts, retry_at=when
                )
            failed = self._load(job_id)
            assert failed is not None
            return failed

        return self._run(body)  # type: ignore[no-any-return]

    def release(self, job_id: int, token: str, why: str) -> Job:
        if not isinstance(why, str) or not why:
            raise ValueError("release needs a reason (a non-empty string)")

        def body() -> Job:
            job = self._leased(job_id, token)
            # The run was cut short by the worker stopping, not by the job: it gives back the
            # attempt its admission spent, and the job is claimable at once.
            changes: dict[str, Any] = {
                "state": JobState.PENDING,
                "attempts": job.attempts - 1,
                "available_at": self._clock(),
                "lease_until": None,
                "lease_token": None,
                "worker": None,
                "reason": f"released: {why}",
            }
            self._update(job_id, changes)
            self._emit(
                job.worker or self._process, "release", job=job_id, attempts=job.attempts - 1, reason=why
            )
            return dataclasses.replace(job, **changes)

        return self._run(body)  # type: ignore[no-any-return]

    def get(self, job_id: int) -> Job | None:
        return self._read(lambda: self._load(job_id))  # type: ignore[no-any-return]

    def budgets(self) -> Budgets:
        return self._read(self._read_budgets)  # type: ignore[no-any-return]

    def set_budgets(self, budgets: Budgets) -> None:
        if not isinstance(budgets, Budgets):
            raise TypeError(f"budgets must be a Budgets, got {type(budgets).__name__}")

        def body() -> None:
            self._write_budgets(budgets)
            self._emit(self._process, "budgets", **budgets.as_json())

        self._run(body)

    def merge_budgets(
        self, queues: Mapping[str, int], groups: Mapping[str, int], *, clear: bool = False
    ) -> Budgets:
        """Merge these budgets into the current ones (or into none, ``clear``) in one transaction:
        two changes at once both hold, where a read in one step and a write in another loses one."""

        def body() -> Budgets:
            self._lock_budgets()
            current = Budgets() if clear else self._read_budgets()
            merged = Budgets({**current.queues, **queues}, {**current.groups, **groups})
            self._write_budgets(merged)
            self._emit(self._process, "budgets", **merged.as_json())
            return merged

        return self._run(body)  # type: ignore[no-any-return]

    def claimable(self, queues: Sequence[str] | None = None) -> int:
        return self._read(lambda: self._count_claimable(self._clock(), queues))  # type: ignore[no-any-return]

    def unfinished(self, queues: Sequence[str] | None = None) -> int:
        """Pending or processing jobs (of ``queues``): is there anything left for ``--until-done``?"""
        # Claimable at the end of time: every pending job is due then and every lease has lapsed.
        return self._read(lambda: self._count_claimable(math.inf, queues))  # type: ignore[no-any-return]

    def status(self, limit: int = 20) -> Status:
        limit = max(0, min(int(limit), MAX_STATUS))

        def body() -> Status:
            status = status_of(*self._status_rows(limit), self._read_budgets())
            runs = [self._load_run(run_id) for run_id in self._failed_runs(limit)]
            failed = [{"id": r.id, "name": r.flow.name, "reason": r.reason} for r in runs if r is not None]
            return dataclasses.replace(status, failed_workflows=failed)

        return self._read(body)  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ workflows

    def start_workflow(self, flow: wf.Workflow, state: dict[str, Any]) -> int:
        if not isinstance(flow, wf.Workflow):
            raise TypeError(f"flow must be a Workflow, got {type(flow).__name__}")
        if not flow.steps:
            raise ValueError("a workflow needs at least one step")
        if not isinstance(state, dict):
            raise TypeError(f"state must be a dict, got {type(state).__name__}")
        return self._run(lambda: self._start_run(flow, state, None))  # type: ignore[no-any-return]

    def _start_run(self, flow: wf.Workflow, state: dict[str, Any], parent: int | None) -> int:
        run = self._insert_run(flow, dict(state), parent)
        self._emit(self._process, "workflow_start", workflow=run.id, name=flow.name, parent=parent)
        self._apply(run, wf.start(run))
        return run.id

    def _apply(self, run: wf.Run, advance: wf.Advance) -> None:
        """Save ``run`` and carry out what it asked for (jobs, children); a failed run's jobs go."""
        budgets = self._read_budgets()
        for step_job in advance.jobs:
            spec = step_job.spec
            refusal = cost_refusal(spec.queue, spec.concurrency_group, spec.cost_units, budgets)
            if refusal is not None:
                run.status, run.reason = "failed", f"step {step_job.step}: {refusal}"
                break
        if run.status == "running":
            now = self._clock()
            for step_job in advance.jobs:
                job = self._insert_job(step_job.spec, now, (run.id, step_job.step, step_job.item_index))
                self._emit_enqueue(job)
        self._save_run(run)
        if run.status == "failed":
            self._emit(self._process, "workflow_fail", workflow=run.id, reason=run.reason)
            for job in self._pending_of_run(run.id):
                reason = f"workflow {run.id} failed: {run.reason}"
                self._update(job.id, {"state": JobState.DISCARDED, "reason": reason})
                self._emit(self._process, "discard", job=job.id, reason=reason)
            return
        if run.status == "completed":
            self._emit(self._process, "workflow_complete", workflow=run.id)
        for child, state in advance.children:
            self._start_run(child, state, run.id)

    def _step_failed(self, job: Job, reason: str) -> None:
        if job.workflow_id is None or job.step is None:
            return
        run = self._load_run(job.workflow_id)
        if run is not None and run.status == "running":
            wf.step_failed(run, job.step, reason)
            self._apply(run, wf.Advance())

    def workflow(self, run_id: int) -> dict[str, Any] | None:
        def body() -> dict[str, Any] | None:
            run = self._load_run(run_id)
            return None if run is None else run.as_json()

        return self._read(body)  # type: ignore[no-any-return]
