"""The embedded default store: one SQLite file shared by any number of worker processes.

Every step that writes is one ``BEGIN IMMEDIATE`` transaction, which takes SQLite's single write lock at its
start: two processes' claims are serialised, so a job is never claimed twice, and the usage a claim
counts cannot change under it. The steps that only read (``status``, ``get``, ``budgets``,
``claimable``, ``workflow``) are deferred transactions instead: under WAL they read one snapshot
beside the writers, without taking or waiting for the write lock.
``synchronous=NORMAL`` keeps every commit safe from a crashed process (not from a power cut, which
may lose the last commits; use ``durable=True`` for ``FULL``). A store object belongs to one
thread; each process (or thread) opens its own.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from reference.jobs import rows
from reference.jobs import workflow as wf
from reference.jobs.admission import Candidate, Conditions, Decision, Profile, Usage, decide
from reference.jobs.budgets import Budgets, cost_refusal
from reference.jobs.core import PROFILE_SAMPLES, StoreCore, steps_unchanged
from reference.jobs.model import Job, JobSpec, JobState, encode_payload
from reference.jobs.rows import ProfileCache, Ready, finished, frozen, measured
from reference.jobs.sqlite_rows import (
    ADD_SAMPLE,
    ATTEMPTS,
    BUDGETS_VERSION,
    COST,
    DONE,
    FAST,
    GROUP,
    HANDLER,
    JOB_COLUMNS,
    LIMIT,
    PLAIN_FLAG,
    QUEUE,
    READY_AT,
    SCHEMA,
    SPECIAL,
    START,
    WHOLE,
    job_of,
    plain_job,
    scan_sql,
    setter,
    started_job,
    value_of,
)
from reference.jobs.store import Claim, ClaimOutcome, StaleLease
from reference.jobs.tracing import Tracer

BUSY_TIMEOUT = 60.0
"""Seconds a transaction waits for the write lock before ``sqlite3.OperationalError``."""
_LEASE_MEMO = 256
"""Most started jobs a store remembers for their ``finish`` (see ``_finish_started``)."""

_RUN = ", ".join(rows.RUN_COLUMNS)


class _Immediate:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on an exception); one per store, reused."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    def __enter__(self) -> None:
        self._store._cursor.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        store = self._store
        if kind is None:
            store._cursor.execute("COMMIT")
        elif store._db.in_transaction:  # SQLite may have rolled back itself (disk full, I/O error)
            store._cursor.execute("ROLLBACK")


class SqliteStore(StoreCore):
    def __init__(
        self,
        path: str | Path,
        *,
        tracer: Tracer | None = None,
        process: str | None = None,
        clock: Callable[[], float] = time.time,
        durable: bool = False,
    ) -> None:
        super().__init__(clock, tracer, process if process is not None else f"pid{os.getpid()}")
        self.path = Path(path)
        self._budgets_cache: tuple[int, Budgets] | None = None
        self._profiles = ProfileCache()
        self._immediate = _Immediate(self)
        self._started: dict[str, Job] = {}
        """Jobs this store's ``claim`` started, by lease token, for their ``finish``."""
        # The fast claim stands in for the core's claim steps: a subclass that changes one of them
        # (a reference mutant) must have it used, so it gets the general path.
        self._fast = steps_unchanged(self, SqliteStore)
        self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
        self._cursor = self._db.cursor()
        """The fast paths' statements run on this one cursor: ``Connection.execute`` makes a new
        cursor per statement, eight per job."""
        self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
        with self._transaction():
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)

    def close(self) -> None:
        self._db.close()

    def _transaction(self) -> AbstractContextManager[None]:
        return self._immediate

    def _run(self, body: Callable[[], Any]) -> Any:
        if self._tracer is None:  # no events to number and write: just the transaction
            with self._immediate:
                return body()
        return super()._run(body)

    def _read(self, body: Callable[[], Any]) -> Any:
        # A deferred transaction that only reads takes no write lock: under WAL it reads one
        # snapshot (the last commit before its first read) while the writers go on.
        self._db.execute("BEGIN")
        try:
            value = body()
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        return value

    def _insert_job(self, spec: JobSpec, now: float, workflow: tuple[int, int, int | None] | None) -> Job:
        cursor = self._db.execute(
            f"INSERT INTO jobs ({rows.JOB_INSERT_COLUMNS})"
            f" VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING {JOB_COLUMNS}",
            rows.job_insert(spec, now, workflow),
        )
        return job_of(cursor.fetchone())

    def _load(self, job_id: int) -> Job | None:
        row = self._db.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else job_of(row)

    def _update(self, job_id: int, changes: dict[str, Any]) -> None:
        values = [value_of(c, v) if c in SPECIAL else v for c, v in changes.items()]
        values.append(job_id)
        self._db.execute(f"UPDATE jobs SET {setter(tuple(changes))} WHERE id = ?", values)

    def _mark_done(self, job_id: int, token: str, result: Any) -> Job:
        # The lease check and the change in one statement: no row back, not leased with ``token``.
        row = self._db.execute(
            f"{DONE} RETURNING {JOB_COLUMNS}", (value_of("result", result), job_id, token)
        ).fetchone()
        if row is None:
            raise StaleLease(f"job {job_id} is no longer leased with this token (its lease expired)")
        return job_of(row)

    def _jobs(self, sql: str, *params: Any) -> list[Job]:
        return [job_of(row) for row in self._db.execute(sql, params)]

    # ------------------------------------------------------------------ the fast paths
    # The common claim and finish, each in the fewest statements and with the least Python inside
    # the write lock (what can be is done before it is taken or after it is released). They stand
    # in for the core's steps (``core.CLAIM_STEPS``), so a subclass that changes a step, as a reference
    # mutant does, gets the general path (``self._fast`` is False) and its step is used.

    def claim(self, worker: str, conditions: Conditions, queues: Sequence[str] | None = None) -> ClaimOutcome:
        if not self._fast or not isinstance(conditions, Conditions):
            return super().claim(worker, conditions, queues)
        token = secrets.token_hex(8)  # drawn before the lock: wasted if nothing is claimed
        # ``_run`` without events is just the transaction: inline, it saves the context manager's
        # calls on every claim (the bench's bare loop pays none; docs/jobs.md, "Session 12")
        if self._tracer is None:
            cursor = self._cursor
            cursor.execute("BEGIN IMMEDIATE")
            try:
                got = self._claim_first(worker, conditions, queues, token)
            except BaseException:
                if self._db.in_transaction:  # SQLite may have rolled back itself (as ``_Immediate``)
                    cursor.execute("ROLLBACK")
                raise
            cursor.execute("COMMIT")
        else:
            got = self._run(lambda: self._claim_first(worker, conditions, queues, token))
        if isinstance(got, ClaimOutcome):
            return got
        row, whole, attempts, lease_until, profile, decision = got
        if whole is None:
            job = plain_job(row, worker, token, attempts, lease_until)
        else:
            job = started_job(whole, worker, token, attempts, lease_until)
        started = self._started
        started[token] = job
        if len(started) > _LEASE_MEMO:
            del started[next(iter(started))]  # the oldest: its finish reads the row back
        # ClaimOutcome(Claim(job, token, lease_until, profile, decision)) without the frozen
        # __init__s (``rows.frozen``): a claim's Python is mostly the objects it returns.
        claim = frozen(
            Claim,
            {
                "job": job,
                "token": token,
                "lease_until": lease_until,
                "profile": profile,
                "decision": decision,
            },
        )
        return frozen(ClaimOutcome, {"claim": claim, "denied": [], "failed": [], "expired": []})

    def _claim_first(
        self, worker: str, conditions: Conditions, queues: Sequence[str] | None, token: str
    ) -> ClaimOutcome | tuple[Sequence[Any], Sequence[Any] | None, int, float, Profile | None, Decision]:
        """Inside the claim's transaction: no lease to reap, the budgets as cached, and the first
        candidate admitted: lease it (one read, one write) and return its ``PLAIN`` columns, its
        whole row if one of its ``RARE`` columns is set (else None), its attempts and lease end,
        the profile and the decision. Anything else (a lease to reap, budgets changed, a job to
        refuse, or to deny with its reason) is the core's general claim, run here: the read
        changed nothing, and that path reads again."""
        now = self._clock()
        params = () if queues is None else tuple(queues)
        cursor = self._cursor
        row = cursor.execute(scan_sql(None if queues is None else len(params))[1], (now, *params)).fetchone()
        version, samples, running, queue_cost, group_cost = row[:FAST]
        plain = row[FAST:]
        job_id = plain[0]
        if job_id is None and version is not None:
            return ClaimOutcome(None)  # nothing claimable, nothing to reap
        cached = self._budgets_cache
        if version is None or cached is None or cached[0] != version:  # a lapsed lease, or new budgets
            return super()._claim(worker, conditions, queues)
        budgets = cached[1]
        queue, group, cost = plain[QUEUE], plain[GROUP], plain[COST]
        if cost_refusal(queue, group, cost, budgets) is not None:
            return super()._claim(worker, conditions, queues)
        profile = self._profiles.get(plain[HANDLER], samples)
        decision = decide(
            # Candidate(...) and Usage(...) as ``rows.frozen`` builds them (see ``claim``)
            frozen(
                Candidate,
                {
                    "queue": queue,
                    "concurrency_group": group,
                    "concurrency_limit": plain[LIMIT],
                    "cost_units": cost,
                },
            ),
            frozen(Usage, {"group_running": running, "queue_cost": queue_cost, "group_cost": group_cost}),
            budgets,
            profile,
            conditions,
        )
        if not decision.admitted:
            return super()._claim(worker, conditions, queues)
        lease_until = now + conditions.lease
        attempts = plain[ATTEMPTS] + 1
        # The rare columns only when one is set; read before the update, as the plain ones were.
        whole = None if plain[PLAIN_FLAG] else cursor.execute(WHOLE, (job_id,)).fetchone()
        cursor.execute(START, (attempts, lease_until, token, worker, job_id))
        if self._tracer is not None:
            candidate = Ready._make([plain[i] for i in READY_AT])
            self._emit_claim(worker, candidate)
            self._emit_started(worker, candidate, attempts, lease_until)
        return plain, whole, attempts, lease_until, profile, decision

    def finish(self, job_id: int, token: str, result: Any, duration: float, peak_memory: int) -> Job:
        started = self._started.get(token)
        if not self._fast or started is None or started.id != job_id or started.workflow_id is not None:
            return super().finish(job_id, token, result, duration, peak_memory)
        measured(duration, peak_memory)
        # ValueError before anything changes (the caller fails the job); the text is what is stored
        stored = None if result is None else encode_payload(result, "result")
        del self._started[token]
        sample = f"[{float(duration)!r},{float(peak_memory)!r}]"
        worker = started.worker or self._process
        if self._tracer is None:  # ``_run`` without events, inline (as in ``claim``)
            cursor = self._cursor
            cursor.execute("BEGIN IMMEDIATE")
            try:
                done = self._finish_started(job_id, token, stored, started.handler, sample, worker)
            except BaseException:
                if self._db.in_transaction:
                    cursor.execute("ROLLBACK")
                raise
            cursor.execute("COMMIT")
        else:
            done = self._run(
                lambda: self._finish_started(job_id, token, stored, started.handler, sample, worker)
            )
        if not done:
            raise StaleLease(f"job {job_id} is no longer leased with this token (its lease expired)")
        return finished(started, stored)  # the row ``claim`` started, with this update's columns

    def release(self, job_id: int, token: str, why: str) -> Job:
        self._started.pop(token, None)  # its finish, should it come, reads the row and finds it gone
        return super().release(job_id, token, why)

    def _finish_started(
        self, job_id: int, token: str, stored: str | None, handler: str, sample: str, worker: str
    ) -> bool:
        """Inside the finish's transaction, for a job this store's ``claim`` started (not a workflow
        step): done, if still processing under ``token``. Such a row is the one that claim wrote
        (a token is 64 random bits, written once), changed since only by heartbeats: every other
        step that changes a leased job replaces its token. So it need not be read back."""
        cursor = self._cursor
        if cursor.execute(DONE, (stored, job_id, token)).rowcount != 1:
            return False  # the lease lapsed: nothing changed
        cursor.execute(ADD_SAMPLE, (handler, sample, PROFILE_SAMPLES))
        if self._tracer is not None:
            self._emit(worker, "finish", job=job_id)
        return True

    def _expired(self, now: float) -> list[int]:
        rows = self._db.execute(
            "SELECT id FROM jobs WHERE state = 'processing' AND lease_until < ? ORDER BY id", (now,)
        )
        return [int(row[0]) for row in rows]

    def _candidates(self, now: float, queues: Sequence[str] | None, limit: int) -> list[Ready]:
        params = () if queues is None else tuple(queues)
        scan = scan_sql(None if queues is None else len(params))[0]
        return [Ready._make(row) for row in self._db.execute(scan, (now, limit, *params))]

    def _queue_filter(self, queues: Sequence[str] | None) -> tuple[str, list[str]]:
        if queues is None:
            return "", []
        return f" AND queue IN ({', '.join('?' for _ in queues)})", list(queues)

    def _count_claimable(self, now: float, queues: Sequence[str] | None) -> int:
        where, params = self._queue_filter(queues)
        row = self._db.execute(rows.CLAIMABLE.format(p="?") + where, (now, now, *params)).fetchone()
        return int(row[0])

    def _usage(self, queue: str, group: str | None) -> Usage:
        # One pass over the processing rows (jobs_ready's prefix) for the queue and the group;
        # ``concurrency_group = NULL`` is never true, so no group counts nothing.
        running, queue_cost, group_cost = self._db.execute(
            "SELECT COALESCE(SUM(concurrency_group = ?2), 0),"
            " COALESCE(SUM(CASE WHEN queue = ?1 THEN cost_units END), 0),"
            " COALESCE(SUM(CASE WHEN concurrency_group = ?2 THEN cost_units END), 0)"
            " FROM jobs WHERE state = 'processing'",
            (queue, group),
        ).fetchone()
        return Usage(int(running), int(queue_cost), int(group_cost))

    def _samples(self, handler: str) -> list[list[float]]:
        row = self._db.execute("SELECT samples FROM profiles WHERE handler = ?", (handler,)).fetchone()
        return [] if row is None else list(json.loads(row[0]))

    def _save_samples(self, handler: str, samples: list[list[float]]) -> None:
        self._db.execute(
            "INSERT INTO profiles (handler, samples) VALUES (?, ?)"
            " ON CONFLICT (handler) DO UPDATE SET samples = excluded.samples",
            (handler, json.dumps(samples)),
        )

    def _add_sample(self, handler: str, sample: list[float], keep: int) -> None:
        # finite floats (``finish`` and ``fail`` checked them): their repr is JSON
        self._db.execute(ADD_SAMPLE, (handler, "[" + ",".join(map(repr, sample)) + "]", keep))

    def _profile(self, handler: str) -> Profile | None:
        row = self._db.execute("SELECT samples FROM profiles WHERE handler = ?", (handler,)).fetchone()
        return self._profiles.get(handler, None if row is None else row[0])

    def _read_budgets(self) -> Budgets:
        # Every claim reads the budgets; they change rarely. ``_write_budgets`` bumps the version
        # in the same transaction, so an unchanged version means the cached table still holds.
        version = int(self._db.execute(BUDGETS_VERSION).fetchone()[0])
        if self._budgets_cache is not None and self._budgets_cache[0] == version:
            return self._budgets_cache[1]
        budgets = rows.budgets_of(self._db.execute("SELECT kind, name, budget FROM budgets"))
        self._budgets_cache = (version, budgets)
        return budgets

    def _write_budgets(self, budgets: Budgets) -> None:
        self._db.execute("UPDATE meta SET value = value + 1 WHERE key = 'budgets_version'")
        self._db.execute("DELETE FROM budgets")
        self._db.executemany(
            "INSERT INTO budgets (kind, name, budget) VALUES (?, ?, ?)", rows.budget_rows(budgets)
        )

    def _insert_run(self, flow: wf.Workflow, state: dict[str, Any], parent: int | None) -> wf.Run:
        run = wf.Run(0, flow, state, parent=parent)
        cursor = self._db.execute(rows.RUN_INSERT.format(p="?"), (wf.dumps(flow.definition()), parent))
        run.id = int(cursor.lastrowid or 0)
        return run

    def _load_run(self, run_id: int) -> wf.Run | None:
        cursor = self._db.execute(
            f"SELECT {', '.join(rows.RUN_COLUMNS)} FROM workflows WHERE id = ?", (run_id,)
        )
        row = cursor.fetchone()
        return None if row is None else rows.run_of(dict(zip(rows.RUN_COLUMNS, row, strict=True)))

    def _save_run(self, run: wf.Run) -> None:
        self._db.execute(rows.RUN_SAVE.format(p="?"), rows.run_params(run))

    def _pending_of_run(self, run_id: int) -> list[Job]:
        return self._jobs(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE workflow_id = ? AND state = 'pending' ORDER BY id", run_id
        )

    def _next_seq(self, count: int) -> int:
        row = self._db.execute(
            "UPDATE meta SET value = value + ? WHERE key = 'trace_seq' RETURNING value", (count,)
        ).fetchone()
        return int(row[0]) - count + 1

    def _failed_runs(self, limit: int) -> list[int]:
        return [int(r[0]) for r in self._db.execute(rows.FAILED_RUNS.format(p="?"), (limit,))]

    def _status_rows(self, limit: int) -> tuple[dict[str, int], list[Job], list[Job], list[Job]]:
        counts = {state.value: 0 for state in JobState}
        for state, n in self._db.execute("SELECT state, COUNT(*) FROM jobs GROUP BY state"):
            counts[state] = int(n)
        processing = self._jobs(f"SELECT {JOB_COLUMNS} FROM jobs WHERE state = 'processing'")
        deferred = self._jobs(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE state = 'pending' AND last_denial IS NOT NULL"
            " ORDER BY available_at, id LIMIT ?",
            limit,
        )
        failed = self._jobs(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE state = 'failed' ORDER BY id DESC LIMIT ?", limit
        )
        return counts, processing, deferred, failed
