"""The job store in memory, on the runtime seam: the same semantics as ``SqliteStore``.

One runtime lock stands for SQLite's write lock (every step is one critical section), so under
the controlled-interleaving harness each step is atomic and the interleavings between steps are
what gets explored. Rows are immutable ``Job`` values replaced whole, so a reader never sees half
an update. For tests, the harness and single-process embedding: nothing survives the process.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from reference import arguments
from reference.jobs import workflow as wf
from reference.jobs.admission import Usage
from reference.jobs.budgets import Budgets
from reference.jobs.core import StoreCore
from reference.jobs.model import Job, JobSpec, JobState
from reference.jobs.rows import Ready, ready
from reference.jobs.tracing import Tracer
from reference.runtime import DEFAULT_RUNTIME, Runtime


class InMemoryStore(StoreCore):
    def __init__(
        self,
        *,
        runtime: Runtime | None = None,
        tracer: Tracer | None = None,
        process: str = "memory",
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(clock, tracer, process)
        chosen: Runtime = arguments.runtime(runtime) or DEFAULT_RUNTIME
        self._lock = chosen.lock("jobs.store")
        self._jobs: dict[int, Job] = {}
        self._runs: dict[int, wf.Run] = {}
        self._profiles: dict[str, list[list[float]]] = {}
        self._budgets = Budgets()
        self._seq = 0

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        # All-or-nothing like SQLite: a step that raises leaves the rows as they were.
        with self._lock:
            saved = (
                dict(self._jobs),
                copy.deepcopy(self._runs),
                dict(self._profiles),
                self._budgets,
                self._seq,
            )
            try:
                yield
            except BaseException:
                self._jobs, self._runs, self._profiles, self._budgets, self._seq = saved
                raise

    def _insert_job(self, spec: JobSpec, now: float, workflow: tuple[int, int, int | None] | None) -> Job:
        run, step, item = workflow if workflow is not None else (None, None, None)
        job = Job(
            id=len(self._jobs) + 1,
            queue=spec.queue,
            handler=spec.handler_name,
            payload=copy.deepcopy(spec.payload),
            priority=spec.priority,
            state=JobState.PENDING,
            attempts=0,
            max_attempts=spec.max_attempts,
            backoff=spec.backoff,
            concurrency_group=spec.concurrency_group,
            concurrency_limit=spec.concurrency_limit,
            cost_units=spec.cost_units,
            available_at=now + spec.delay,
            created_at=now,
            workflow_id=run,
            step=step,
            item_index=item,
        )
        self._jobs[job.id] = job
        return job

    def _load(self, job_id: int) -> Job | None:
        return self._jobs.get(job_id)

    def _update(self, job_id: int, changes: dict[str, Any]) -> None:
        self._jobs[job_id] = dataclasses.replace(self._jobs[job_id], **changes)

    def _lapsed(self, now: float) -> list[Job]:
        return [
            j
            for j in self._jobs.values()
            if j.state is JobState.PROCESSING and j.lease_until is not None and j.lease_until < now
        ]

    def _expired(self, now: float) -> list[int]:
        return [j.id for j in self._lapsed(now)]

    def _pending(self, now: float, queues: Sequence[str] | None) -> list[Job]:
        return [
            j
            for j in self._jobs.values()
            if j.state is JobState.PENDING and j.available_at <= now and (queues is None or j.queue in queues)
        ]

    def _candidates(self, now: float, queues: Sequence[str] | None, limit: int) -> list[Ready]:
        pending = sorted(self._pending(now, queues), key=lambda j: (-j.priority, j.available_at, j.id))
        return [ready(j) for j in pending[:limit]]

    def _count_claimable(self, now: float, queues: Sequence[str] | None) -> int:
        lapsed = [j for j in self._lapsed(now) if queues is None or j.queue in queues]
        return len(self._pending(now, queues)) + len(lapsed)

    def _usage(self, queue: str, group: str | None) -> Usage:
        running, queue_cost, group_cost = 0, 0, 0
        for job in self._jobs.values():
            if job.state is not JobState.PROCESSING:
                continue
            if job.queue == queue:
                queue_cost += job.cost_units
            if group is not None and job.concurrency_group == group:
                running += 1
                group_cost += job.cost_units
        return Usage(running, queue_cost, group_cost)

    def _samples(self, handler: str) -> list[list[float]]:
        return [list(s) for s in self._profiles.get(handler, [])]

    def _save_samples(self, handler: str, samples: list[list[float]]) -> None:
        self._profiles[handler] = samples

    def _read_budgets(self) -> Budgets:
        return self._budgets

    def _write_budgets(self, budgets: Budgets) -> None:
        self._budgets = budgets

    def _insert_run(self, flow: wf.Workflow, state: dict[str, Any], parent: int | None) -> wf.Run:
        run = wf.Run(len(self._runs) + 1, flow, copy.deepcopy(state), parent=parent)
        self._runs[run.id] = run
        return copy.deepcopy(run)

    def _load_run(self, run_id: int) -> wf.Run | None:
        run = self._runs.get(run_id)
        return None if run is None else copy.deepcopy(run)

    def _save_run(self, run: wf.Run) -> None:
        self._runs[run.id] = copy.deepcopy(run)

    def _pending_of_run(self, run_id: int) -> list[Job]:
        return [j for j in self._jobs.values() if j.workflow_id == run_id and j.state is JobState.PENDING]

    def _next_seq(self, count: int) -> int:
        self._seq += count
        return self._seq - count + 1

    def _failed_runs(self, limit: int) -> list[int]:
        return sorted((i for i, run in self._runs.items() if run.status == "failed"), reverse=True)[:limit]

    def _status_rows(self, limit: int) -> tuple[dict[str, int], list[Job], list[Job], list[Job]]:
        counts = {state.value: 0 for state in JobState}
        for job in self._jobs.values():
            counts[job.state.value] += 1
        processing = [j for j in self._jobs.values() if j.state is JobState.PROCESSING]
        deferred = sorted(
            (j for j in self._jobs.values() if j.state is JobState.PENDING and j.last_denial is not None),
            key=lambda j: j.available_at,
        )[:limit]
        failed = [j for j in reversed(self._jobs.values()) if j.state is JobState.FAILED][:limit]
        return counts, processing, deferred, failed
