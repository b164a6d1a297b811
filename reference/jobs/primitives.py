"""What a job store's backend supplies: the row primitives ``StoreCore`` writes its steps over.

A backend (``SqliteStore``, ``PgStore``, ``InMemoryStore``) implements the abstract ones; the
others have defaults over those, which a backend overrides to do the same in fewer round trips.
Every primitive runs inside the step's transaction (``_transaction``).
"""

from __future__ import annotations

import dataclasses
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Self

from reference.jobs import workflow as wf
from reference.jobs.admission import Profile, Usage
from reference.jobs.budgets import Budgets
from reference.jobs.model import Job, JobSpec, JobState
from reference.jobs.rows import Ready, profile_of
from reference.jobs.store import StaleLease


class StorePrimitives(ABC):
    def close(self) -> None:
        """Release the backend's connections (a store in memory holds none)."""
        return None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ------------------------------------------------------------------ backend primitives

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[None]:
        """Run the block atomically and exclusively (a write transaction)."""

    @abstractmethod
    def _insert_job(self, spec: JobSpec, now: float, workflow: tuple[int, int, int | None] | None) -> Job: ...

    @abstractmethod
    def _load(self, job_id: int) -> Job | None: ...

    @abstractmethod
    def _update(self, job_id: int, changes: dict[str, Any]) -> None:
        """Set columns of one job (``state`` as a ``JobState``, ``result`` as a JSON value)."""

    @abstractmethod
    def _expired(self, now: float) -> list[int]:
        """Ids of the processing jobs whose lease ended before ``now``, in id order."""

    @abstractmethod
    def _candidates(self, now: float, queues: Sequence[str] | None, limit: int) -> list[Ready]:
        """Pending jobs available at ``now``: highest priority first, then oldest available, then id."""

    @abstractmethod
    def _usage(self, queue: str, group: str | None) -> Usage: ...

    @abstractmethod
    def _samples(self, handler: str) -> list[list[float]]: ...

    @abstractmethod
    def _save_samples(self, handler: str, samples: list[list[float]]) -> None: ...

    # The primitives below have defaults over the ones above; a backend overrides them to do the
    # same in fewer round trips (SQLite: ``UPDATE ... RETURNING``, one upsert per sample).

    def _start(self, job_id: int, changes: dict[str, Any]) -> Job:
        """Lease the admitted job: apply ``changes`` (state ``processing``, attempts, lease) and
        return the job as now stored."""
        self._update(job_id, changes)
        started = self._load(job_id)
        assert started is not None
        return started

    def _mark_done(self, job_id: int, token: str, result: Any) -> Job:
        """Mark the job leased with ``token`` done with ``result``; the job as now stored.
        ``StaleLease`` (nothing changed) if the lease is no longer ``token``'s."""
        job = self._leased(job_id, token)
        self._update(
            job_id, {"state": JobState.DONE, "result": result, "lease_until": None, "lease_token": None}
        )
        # The row as stored, without reading it back.
        stored = json.loads(wf.dumps(result))
        return dataclasses.replace(
            job, state=JobState.DONE, result=stored, lease_until=None, lease_token=None
        )

    def _profile(self, handler: str) -> Profile | None:
        """The handler's profile from its stored samples (None: never run)."""
        return profile_of(self._samples(handler))

    def _add_sample(self, handler: str, sample: list[float], keep: int) -> None:
        """Append ``sample`` to the handler's samples, keeping the last ``keep``, as one atomic
        change: a backend whose transactions run side by side appends to the row as it is then, so
        two workers finishing runs of one handler keep both samples."""
        samples = self._samples(handler)
        samples.append(sample)
        self._save_samples(handler, samples[-keep:])

    @abstractmethod
    def _read_budgets(self) -> Budgets: ...

    @abstractmethod
    def _write_budgets(self, budgets: Budgets) -> None: ...

    def _lock_budgets(self) -> None:
        """Inside the transaction, before a read-modify-write of the budgets: hold them so that no
        other change reads them until this one commits. A backend whose transaction already
        excludes every other writer (SQLite's ``BEGIN IMMEDIATE``, the in-memory lock) needs nothing."""
        return None

    @abstractmethod
    def _insert_run(self, flow: wf.Workflow, state: dict[str, Any], parent: int | None) -> wf.Run: ...

    @abstractmethod
    def _load_run(self, run_id: int) -> wf.Run | None: ...

    @abstractmethod
    def _save_run(self, run: wf.Run) -> None: ...

    @abstractmethod
    def _pending_of_run(self, run_id: int) -> list[Job]: ...

    @abstractmethod
    def _next_seq(self, count: int) -> int:
        """Reserve ``count`` trace seqs; the first. Called inside the transaction."""

    @abstractmethod
    def _status_rows(self, limit: int) -> tuple[dict[str, int], list[Job], list[Job], list[Job]]:
        """Counts per state; the processing jobs; deferred pending jobs; failed jobs (newest)."""

    @abstractmethod
    def _failed_runs(self, limit: int) -> list[int]:
        """The ids of the newest ``limit`` failed workflow runs, newest first."""

    @abstractmethod
    def _count_claimable(self, now: float, queues: Sequence[str] | None) -> int: ...

    def _leased(self, job_id: int, token: str) -> Job:
        job = self._load(job_id)
        if job is None or job.state is not JobState.PROCESSING or job.lease_token != token:
            raise StaleLease(f"job {job_id} is no longer leased with this token (its lease expired)")
        return job
