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

import dataclasses
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from reference.jobs import workflow as wf
from reference.jobs.admission import Usage
from reference.jobs.budgets import Budgets
from reference.jobs.core import Ready, StoreCore
from reference.jobs.model import Job, JobSpec, JobState
from reference.jobs.tracing import Tracer

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    queue TEXT NOT NULL, handler TEXT NOT NULL, payload TEXT NOT NULL, priority INTEGER NOT NULL,
    state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL,
    backoff REAL NOT NULL, concurrency_group TEXT, concurrency_limit INTEGER,
    cost_units INTEGER NOT NULL, available_at REAL NOT NULL, created_at REAL NOT NULL,
    lease_until REAL, lease_token TEXT, worker TEXT, denials INTEGER NOT NULL DEFAULT 0,
    last_denial TEXT, reason TEXT, result TEXT, workflow_id INTEGER, step INTEGER, item_index INTEGER
);
CREATE INDEX IF NOT EXISTS jobs_claimable ON jobs (priority DESC, available_at, id) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS jobs_ready ON jobs (state, queue, priority DESC, available_at, id);
CREATE INDEX IF NOT EXISTS jobs_leases ON jobs (lease_until) WHERE state = 'processing';
CREATE INDEX IF NOT EXISTS jobs_running_queue ON jobs (queue) WHERE state = 'processing';
CREATE INDEX IF NOT EXISTS jobs_running_group ON jobs (concurrency_group) WHERE state = 'processing';
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state, id);
CREATE INDEX IF NOT EXISTS jobs_workflow ON jobs (workflow_id) WHERE workflow_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS budgets (kind TEXT NOT NULL, name TEXT NOT NULL, budget INTEGER NOT NULL,
    PRIMARY KEY (kind, name));
CREATE TABLE IF NOT EXISTS profiles (handler TEXT PRIMARY KEY, samples TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS workflows (
    id INTEGER PRIMARY KEY AUTOINCREMENT, definition TEXT NOT NULL, state TEXT NOT NULL,
    step INTEGER NOT NULL, pending INTEGER NOT NULL, results TEXT NOT NULL, status TEXT NOT NULL,
    reason TEXT, usage TEXT NOT NULL, parent INTEGER
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta (key, value) VALUES ('trace_seq', 0);
INSERT OR IGNORE INTO meta (key, value) VALUES ('budgets_version', 0);
"""

_JSON_COLUMNS = ("payload", "result")
_READY_COLUMNS = ", ".join(Ready._fields)
_BUDGETS_VERSION = "SELECT value FROM meta WHERE key = 'budgets_version'"
BUSY_TIMEOUT = 60.0
"""Seconds a transaction waits for the write lock before ``sqlite3.OperationalError``."""


_FIELDS = tuple(f.name for f in dataclasses.fields(Job))
_JOB_COLUMNS = ", ".join(_FIELDS)
"""``Job``'s fields in order: a row selected with these builds a ``Job`` by position."""
_PAYLOAD, _STATE, _RESULT = (_FIELDS.index(c) for c in ("payload", "state", "result"))


def _decoded(text: str | None) -> Any:
    return None if text is None or text == "null" else json.loads(text)


def _job(row: Sequence[Any]) -> Job:
    values = list(row)
    values[_PAYLOAD] = _decoded(values[_PAYLOAD])
    values[_RESULT] = _decoded(values[_RESULT])
    values[_STATE] = JobState(values[_STATE])
    return Job(*values)


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
        self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
        self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
        with self._transaction():
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

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
        run, step, item = workflow if workflow is not None else (None, None, None)
        cursor = self._db.execute(
            "INSERT INTO jobs (queue, handler, payload, priority, state, max_attempts, backoff,"
            " concurrency_group, concurrency_limit, cost_units, available_at, created_at,"
            " workflow_id, step, item_index) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                spec.queue,
                spec.handler_name,
                spec.payload_json,
                spec.priority,
                spec.max_attempts,
                spec.backoff,
                spec.concurrency_group,
                spec.concurrency_limit,
                spec.cost_units,
                now + spec.delay,
                now,
                run,
                step,
                item,
            ),
        )
        job = self._load(int(cursor.lastrowid or 0))
        assert job is not None
        return job

    def _load(self, job_id: int) -> Job | None:
        row = self._db.execute(f"SELECT {_JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else _job(row)

    def _update(self, job_id: int, changes: dict[str, Any]) -> None:
        values: list[Any] = []
        for column, value in changes.items():
            if column == "state":
                values.append(JobState(value).value)
            elif column in _JSON_COLUMNS:
                values.append(None if value is None else wf.dumps(value))
            else:
                values.append(value)
        columns = ", ".join(f"{column} = ?" for column in changes)
        self._db.execute(f"UPDATE jobs SET {columns} WHERE id = ?", (*values, job_id))

    def _jobs(self, sql: str, *params: Any) -> list[Job]:
        return [_job(row) for row in self._db.execute(sql, params)]

    def _expired(self, now: float) -> list[int]:
        rows = self._db.execute(
            "SELECT id FROM jobs WHERE state = 'processing' AND lease_until < ? ORDER BY id", (now,)
        )
        return [int(row[0]) for row in rows]

    def _queue_filter(self, queues: Sequence[str] | None) -> tuple[str, list[str]]:
        if queues is None:
            return "", []
        return f" AND queue IN ({', '.join('?' for _ in queues)})", list(queues)

    def _candidates(self, now: float, queues: Sequence[str] | None, limit: int) -> list[Ready]:
        where, params = self._queue_filter(queues)
        # jobs_ready serves a queue filter in claim order; across all queues jobs_claimable does
        # (the planner, without statistics, would pick jobs_ready and sort every pending row).
        index = " INDEXED BY jobs_claimable" if queues is None else ""
        cursor = self._db.execute(
            f"SELECT {_READY_COLUMNS} FROM jobs{index} WHERE state = 'pending' AND available_at <= ?"
            f"{where} ORDER BY priority DESC, available_at, id LIMIT ?",
            (now, *params, limit),
        )
        return [Ready._make(row) for row in cursor]

    def _count_claimable(self, now: float, queues: Sequence[str] | None) -> int:
        where, params = self._queue_filter(queues)
        row = self._db.execute(
            "SELECT COUNT(*) FROM jobs WHERE ((state = 'pending' AND available_at <= ?)"
            f" OR (state = 'processing' AND lease_until < ?)){where}",
            (now, now, *params),
        ).fetchone()
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

    def _read_budgets(self) -> Budgets:
        # Every claim reads the budgets; they change rarely. ``_write_budgets`` bumps the version
        # in the same transaction, so an unchanged version means the cached table still holds.
        version = int(self._db.execute(_BUDGETS_VERSION).fetchone()[0])
        if self._budgets_cache is not None and self._budgets_cache[0] == version:
            return self._budgets_cache[1]
        queues: dict[str, int] = {}
        groups: dict[str, int] = {}
        for kind, label, budget in self._db.execute("SELECT kind, name, budget FROM budgets"):
            (queues if kind == "queue" else groups)[label] = budget
        budgets = Budgets(queues, groups)
        self._budgets_cache = (version, budgets)
        return budgets

    def _write_budgets(self, budgets: Budgets) -> None:
        self._db.execute("UPDATE meta SET value = value + 1 WHERE key = 'budgets_version'")
        self._db.execute("DELETE FROM budgets")
        rows = [("queue", k, v) for k, v in budgets.queues.items()]
        rows += [("group", k, v) for k, v in budgets.groups.items()]
        self._db.executemany("INSERT INTO budgets (kind, name, budget) VALUES (?, ?, ?)", rows)

    def _insert_run(self, flow: wf.Workflow, state: dict[str, Any], parent: int | None) -> wf.Run:
        run = wf.Run(0, flow, state, parent=parent)
        cursor = self._db.execute(
            "INSERT INTO workflows (definition, state, step, pending, results, status, reason, usage, parent)"
            " VALUES (?, '{}', -1, 0, '[]', 'running', NULL, '{}', ?)",
            (wf.dumps(flow.definition()), parent),
        )
        run.id = int(cursor.lastrowid or 0)
        return run

    def _load_run(self, run_id: int) -> wf.Run | None:
        row = self._db.execute(
            "SELECT id, definition, state, step, pending, results, status, reason, usage, parent"
            " FROM workflows WHERE id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            return None
        run_id, definition, state, step, pending, results, status, reason, usage, parent = row
        return wf.Run(
            run_id,
            wf.Workflow.from_definition(json.loads(definition)),
            json.loads(state),
            step,
            pending,
            json.loads(results),
            status,
            reason,
            json.loads(usage),
            parent,
        )

    def _save_run(self, run: wf.Run) -> None:
        self._db.execute(
            "UPDATE workflows SET state = ?, step = ?, pending = ?, results = ?, status = ?, reason = ?,"
            " usage = ? WHERE id = ?",
            (
                wf.dumps(run.state),
                run.step,
                run.pending,
                wf.dumps(run.results),
                run.status,
                run.reason,
                wf.dumps(run.usage),
                run.id,
            ),
        )

    def _pending_of_run(self, run_id: int) -> list[Job]:
        return self._jobs(
            f"SELECT {_JOB_COLUMNS} FROM jobs WHERE workflow_id = ? AND state = 'pending' ORDER BY id", run_id
        )

    def _next_seq(self, count: int) -> int:
        row = self._db.execute(
            "UPDATE meta SET value = value + ? WHERE key = 'trace_seq' RETURNING value", (count,)
        ).fetchone()
        return int(row[0]) - count + 1

    def _status_rows(self, limit: int) -> tuple[dict[str, int], list[Job], list[Job], list[Job]]:
        counts = {state.value: 0 for state in JobState}
        for state, n in self._db.execute("SELECT state, COUNT(*) FROM jobs GROUP BY state"):
            counts[state] = int(n)
        processing = self._jobs(f"SELECT {_JOB_COLUMNS} FROM jobs WHERE state = 'processing'")
        deferred = self._jobs(
            f"SELECT {_JOB_COLUMNS} FROM jobs WHERE state = 'pending' AND last_denial IS NOT NULL"
            " ORDER BY available_at LIMIT ?",
            limit,
        )
        failed = self._jobs(
            f"SELECT {_JOB_COLUMNS} FROM jobs WHERE state = 'failed' ORDER BY id DESC LIMIT ?", limit
        )
        return counts, processing, deferred, failed
