"""The job store for many hosts: PostgreSQL, through psycopg 3 and its connection pool.

The semantics are ``StoreCore``'s, as for ``SqliteStore``; what changes is how one step is made
atomic. SQLite has one write lock for the whole file; here transactions run side by side at READ
COMMITTED and each takes only the locks its step needs:

* **Claims skip each other's rows.** Candidates are read ``FOR UPDATE SKIP LOCKED`` (the same order:
  priority, then available-at, then id): a row another claim is deciding is passed over, never
  claimed twice. Expired leases are reaped the same way, so two claims never reap one job.
* **Budgets are serialised by advisory locks, per budgeted queue and per concurrency group.** The
  claim locks, in sorted order, ``queue:Q`` for each candidate whose queue has a budget and
  ``group:G`` for each candidate with a group, *before* it reads the usage; every step that takes a
  job out of ``processing`` (finish, fail, lease expiry) takes the same locks of that job first.
  So the ``processing`` rows a claim sums for a key cannot change until it commits: the check and
  the claim are one step for that key, as in SQLite, while claims on unrelated queues and groups
  run in parallel. (Per key rather than budget rows ``FOR UPDATE``: a group has no row until it has
  a budget, but its concurrency limit needs serialising all the same. Rather than SERIALIZABLE: that
  would abort and retry exactly the contended claims a busy queue is made of.)
* **Budgets themselves** are read under a shared advisory lock that ``set_budgets`` takes exclusively,
  so no claim or enqueue decides on budgets that a committed change has already replaced.
* **Rows a step reads to change** (a job by id, a workflow run, a run's pending steps) are read
  ``FOR UPDATE``: a finish racing a reaper sees the reaper's result and gets ``StaleLease``, two
  for-each steps of one run finishing together do not lose one another's count.

The trace seq is reserved from the ``meta`` row as the step's last statement, so its row lock orders
every traced step by commit, and a step that observed another's effects always numbers after it.

A step waits for key locks only while it holds none, taking its batch in sorted order; a step
that already holds some only tries for more (a claim's later candidates whose keys are busy are
skipped, as ``SKIP LOCKED`` skips rows), so key locks never wait in a cycle. Should another lock
cycle form, PostgreSQL aborts one transaction and it is run again from the start (``RETRIES``
times), as is a serialization failure.

**The common claim and finish are one statement each** (``pg_fast``: server-side functions that
take the same locks in the same order, sent with ``BEGIN``/``COMMIT`` in one pipeline), so the key
locks are never held across a client round trip; whatever they do not cover (a lease to reap, a
denial, a refusal, a workflow step) runs the core's general steps below.

**Wakeups.** Every job insert sends ``NOTIFY lanecheck_jobs`` (payload: the queue) in its own
transaction, so the notification goes out at commit, with the job, or not at all. ``listen()``
opens a worker's own session that LISTENs on that channel (``Listener``); the worker LISTENs
*before* it claims and waits on the session with its poll interval as the timeout, the order
the ``job-wakeup`` spec (``spec/job_wakeup.py``) shows cannot lose a wakeup. Jobs that become
claimable with no insert (a delay or a retry-after passing, a lease expiring) are found by the
poll.

**A lost connection** (a server restart) fails the step that was using it; the pool replaces
the connection and a step that failed *before* its commit is run again, for up to
``reconnect_timeout`` seconds. A connection lost *during* the commit leaves the step in doubt
(it may have committed): that error is raised, never retried, so an enqueue is never doubled.

Times come from the store's ``clock`` (``time.time`` by default), as in SQLite: workers on several
hosts need synchronised clocks (NTP) for leases and retry times to mean the same everywhere.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors
from psycopg.pq import ExecStatus
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from reference.jobs import pg_fast, rows
from reference.jobs import workflow as wf
from reference.jobs.admission import Candidate, Conditions, Usage, decide, profile_bounds
from reference.jobs.budgets import Budgets
from reference.jobs.core import CLAIM_STEPS, PROFILE_SAMPLES, StoreCore, steps_unchanged
from reference.jobs.model import Job, JobSpec, JobState, encode_payload
from reference.jobs.pg_fast import BUDGETS_LOCK, LOCK_SPACE
from reference.jobs.pg_listen import CHANNEL, Listener
from reference.jobs.rows import READY_COLUMNS, SHARED_DDL, Ready, measured, profile_of, ready
from reference.jobs.store import Claim, ClaimOutcome, StaleLease
from reference.jobs.tracing import Tracer

__all__ = ["CHANNEL", "LOCK_SPACE", "RETRIES", "ConnectionLost", "Listener", "PgStore"]

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS jobs (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    queue TEXT NOT NULL, handler TEXT NOT NULL, payload TEXT NOT NULL, priority INTEGER NOT NULL,
    state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL,
    backoff DOUBLE PRECISION NOT NULL, concurrency_group TEXT, concurrency_limit INTEGER,
    cost_units INTEGER NOT NULL, available_at DOUBLE PRECISION NOT NULL,
    created_at DOUBLE PRECISION NOT NULL, lease_until DOUBLE PRECISION, lease_token TEXT, worker TEXT,
    denials INTEGER NOT NULL DEFAULT 0, last_denial TEXT, reason TEXT, result TEXT,
    workflow_id BIGINT, step INTEGER, item_index INTEGER
);
{SHARED_DDL}
CREATE TABLE IF NOT EXISTS profiles (handler TEXT PRIMARY KEY, samples JSONB NOT NULL);
CREATE TABLE IF NOT EXISTS workflows (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, definition TEXT NOT NULL,
    state TEXT NOT NULL, step INTEGER NOT NULL, pending INTEGER NOT NULL, results TEXT NOT NULL,
    status TEXT NOT NULL, reason TEXT, usage TEXT NOT NULL, parent BIGINT
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
INSERT INTO meta (key, value) VALUES ('trace_seq', 0) ON CONFLICT (key) DO NOTHING;
INSERT INTO meta (key, value) VALUES ('budgets_version', 0) ON CONFLICT (key) DO NOTHING
"""

SCHEMA_LOCK = 1
KEY_PREFIXES = ("queue:", "group:")
RETRIES = 8
"""How often a step aborted by a deadlock or serialization failure is run again before it raises."""
RETRYABLE: tuple[type[Exception], ...] = (errors.DeadlockDetected, errors.SerializationFailure)
RECONNECT_TIMEOUT = 60.0
_LEASE_MEMO = 256
"""Most started jobs a store remembers for their one-statement ``finish``."""
_FLOAT_COLUMNS = ("backoff", "available_at", "created_at", "lease_until")
"""Columns a row returned as JSON may carry as integers (``1.0`` becomes ``1``)."""
_CLAIM_STEPS = (*CLAIM_STEPS, "_lock_keys", "_keys")
"""The steps the server-side functions stand in for: the core's, and this store's key locks."""


def _succeeded(cursor: psycopg.Cursor[Any] | None) -> bool:
    """Did the statement queued on ``cursor`` in a pipeline get its (successful) result?"""
    result = None if cursor is None else cursor.pgresult
    return result is not None and result.status in (ExecStatus.TUPLES_OK, ExecStatus.COMMAND_OK)


class ConnectionLost(psycopg.OperationalError):
    """A step's connection broke before its commit: nothing it did happened; it can run again."""


_JSON_COLUMNS = ("payload", "result")


def _job(row: dict[str, Any]) -> Job:
    values = dict(row)
    for column in _JSON_COLUMNS:
        text = values[column]
        values[column] = None if text is None else json.loads(text)
    values["state"] = JobState(values["state"])
    return Job(**values)


class PgStore(StoreCore):
    """``StoreCore`` on PostgreSQL; ``dsn`` is a ``postgresql://`` URL or a libpq conninfo string.

    Thread-safe in the way the pool is: each step checks a connection out for its transaction.
    Close it (or use it as a context manager) to close the pool."""

    call_claim = pg_fast.CALL_CLAIM
    call_finish = pg_fast.CALL_FINISH

    def __init__(
        self,
        dsn: str,
        *,
        tracer: Tracer | None = None,
        process: str | None = None,
        clock: Callable[[], float] = time.time,
        pool_size: int = 4,
        connect_timeout: float = 30.0,
        reconnect_timeout: float = RECONNECT_TIMEOUT,
    ) -> None:
        super().__init__(clock, tracer, process if process is not None else f"pid{os.getpid()}")
        if pool_size < 1:
            raise ValueError(f"pool_size must be at least 1, got {pool_size}")
        self.dsn = dsn
        # One plain connection first: a server that is not there fails now with libpq's own reason
        # (refused, no such host, bad password), where the pool would retry until its timeout.
        psycopg.connect(dsn, connect_timeout=max(1, round(connect_timeout))).close()
        self.reconnect_timeout = reconnect_timeout
        self.reconnects = 0
        """Steps run again because their connection broke before the commit."""
        self._committing = False
        self._pool: ConnectionPool[psycopg.Connection[dict[str, Any]]] = ConnectionPool(
            dsn,
            connection_class=psycopg.Connection[dict[str, Any]],
            kwargs={"autocommit": True, "row_factory": dict_row},
            min_size=1,
            max_size=pool_size,
            timeout=connect_timeout,
            open=False,
            name=f"lanecheck-jobs-{self._process}",
        )
        self._pool.open(wait=True, timeout=connect_timeout)
        self._conn: psycopg.Connection[dict[str, Any]] | None = None
        self._held: set[str] = set()
        self._locked: dict[int, Job] = {}
        """Rows this transaction read ``FOR UPDATE`` and has not changed since: no one else can."""
        self._budgets_cache: tuple[int, Budgets] | None = None
        self._started: dict[str, Job] = {}
        """Jobs this store's fast claim started, by lease token, for their fast ``finish``."""
        self._fast = steps_unchanged(self, PgStore, _CLAIM_STEPS)
        try:
            with self._transaction():
                self._db.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, SCHEMA_LOCK))
                for statement in SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                pg_fast.install(self._db)
        except BaseException:
            self._pool.close()
            raise

    def close(self) -> None:
        self._pool.close()

    @property
    def _db(self) -> psycopg.Connection[dict[str, Any]]:
        if self._conn is None:
            raise RuntimeError("PgStore: a row primitive ran outside a transaction")
        return self._conn

    def listen(self) -> Listener:
        """A new session LISTENing on the store's channel, for one worker's wakeups."""
        return Listener(self.dsn)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._pool.connection() as conn:
            self._committing = False
            try:
                with conn.transaction():
                    self._conn, self._held, self._locked = conn, set(), {}
                    try:
                        yield
                    finally:
                        self._conn, self._held, self._locked = None, set(), {}
                    self._committing = True  # leaving the block commits
            except psycopg.OperationalError as problem:
                if conn.broken and not self._committing and not isinstance(problem, RETRYABLE):
                    raise ConnectionLost(f"connection lost before the commit: {problem}") from problem
                raise

    def _run(self, body: Callable[[], Any]) -> Any:
        # A deadlock victim or serialization failure rolled back everything it did and wrote no
        # trace (events go out only after a commit): running the whole step again is safe. So is
        # a step whose connection broke before its commit; the pool hands out a new one (waiting
        # while the server restarts).
        attempt = 0
        deadline = time.monotonic() + self.reconnect_timeout
        while True:
            try:
                return super()._run(body)
            except RETRYABLE:
                attempt += 1
                if attempt == RETRIES:
                    raise
                time.sleep(random.uniform(0, 0.002 * 2**attempt))
            except ConnectionLost:
                if time.monotonic() >= deadline:
                    raise
                self.reconnects += 1
                time.sleep(0.05)

    # ------------------------------------------------------------------ the fast paths
    # The common claim and finish as one autocommit statement each (``pg_fast``): no round trip
    # while the key locks are held. Anything else the function leaves to the core's general steps.

    def _statement(self, sql: str, params: tuple[Any, ...]) -> dict[str, Any]:
        """``sql`` (one row back) as one transaction, ``BEGIN``, it and ``COMMIT`` sent together in a
        pipeline: one round trip, and the server holds its locks only while it runs them. Run again
        after a deadlock or serialization failure, or a connection that broke before the
        statement's result came back (it rolled back). Once that result came, a break before the
        ``COMMIT``'s leaves the step in doubt: raised, as in ``_transaction``."""
        attempt = 0
        deadline = time.monotonic() + self.reconnect_timeout
        while True:
            ran: psycopg.Cursor[dict[str, Any]] | None = None
            committed: psycopg.Cursor[dict[str, Any]] | None = None
            broken = False
            try:
                with self._pool.connection() as conn:
                    try:
                        with conn.pipeline():
                            conn.execute("BEGIN")
                            ran = conn.execute(sql, params)
                            committed = conn.execute("COMMIT")
                    except psycopg.OperationalError:
                        broken = conn.broken
                        if not _succeeded(committed):
                            raise
                        # committed; the connection was lost after (the pool drops it)
                    assert ran is not None
                    row = ran.fetchone()
                    assert row is not None
                    return row
            except RETRYABLE:
                attempt += 1
                if attempt == RETRIES:
                    raise
                time.sleep(random.uniform(0, 0.002 * 2**attempt))
            except psycopg.OperationalError:
                if not broken or _succeeded(ran) or time.monotonic() >= deadline:
                    raise
                self.reconnects += 1
                time.sleep(0.05)

    def claim(self, worker: str, conditions: Conditions, queues: Sequence[str] | None = None) -> ClaimOutcome:
        if not self._fast or not isinstance(conditions, Conditions):
            return super().claim(worker, conditions, queues)
        token = secrets.token_hex(8)
        now = self._clock()
        lease_until = now + conditions.lease
        bounds = profile_bounds(conditions)
        row = self._statement(
            self.call_claim,
            (
                now,
                None if queues is None else list(queues),
                lease_until,
                token,
                worker,
                bounds.check,
                bounds.max_peak,
                bounds.max_duration,
                0 if self._tracer is None else 3,
            ),
        )
        if row["status"] == "empty":
            return ClaimOutcome(None)
        if row["status"] != "admitted":
            return super().claim(worker, conditions, queues)
        values = row["job"]
        for column in _FLOAT_COLUMNS:
            if values[column] is not None:
                values[column] = float(values[column])
        job = _job(values)
        samples = row["samples"]
        profile = profile_of([list(map(float, s)) for s in samples] if samples is not None else [])
        budgets = Budgets(
            {} if row["queue_budget"] is None else {job.queue: int(row["queue_budget"])},
            {} if row["group_budget"] is None else {str(job.concurrency_group): int(row["group_budget"])},
        )
        usage = Usage(int(row["running"]), int(row["queue_cost"]), int(row["group_cost"]))
        candidate = Candidate(job.queue, job.concurrency_group, job.concurrency_limit, job.cost_units)
        decision = decide(candidate, usage, budgets, profile, conditions)
        if not decision.admitted:  # the function and decide disagree: a bug, never a guess
            raise RuntimeError(
                f"{pg_fast.CLAIM_FUNCTION} admitted job {job.id} that admission denies"
                f" ({decision.label}: {decision.detail}); it stays leased to {worker} until {lease_until}"
            )
        if self._tracer is not None:
            scanned = ready(job)  # what the events name: id, queue, group, limit, cost
            self._emit_claim(worker, scanned)
            self._emit_started(worker, scanned, job.attempts, lease_until)
            self._write_events(int(row["seq"]))
        self._remember(token, job)
        return ClaimOutcome(Claim(job, token, lease_until, profile, decision), [], [], [])

    def _remember(self, token: str, job: Job) -> None:
        self._started[token] = job
        if len(self._started) > _LEASE_MEMO:
            # the oldest: its finish takes the general path (safe if another thread got it first)
            self._started.pop(next(iter(self._started), ""), None)

    def _write_events(self, first: int) -> None:
        """This step's events, numbered from the seq its statement reserved, to the tracer."""
        batch = [
            {"seq": first + i, "thread": t, "process": self._process, "event": e, **f}
            for i, (t, e, f) in enumerate(self._events)
        ]
        self._events.clear()
        if self._tracer is not None:
            self._tracer.write(batch)

    def finish(self, job_id: int, token: str, result: Any, duration: float, peak_memory: int) -> Job:
        started = self._started.get(token)
        if not self._fast or started is None or started.id != job_id or started.workflow_id is not None:
            return super().finish(job_id, token, result, duration, peak_memory)
        measured(duration, peak_memory)
        stored = None if result is None else encode_payload(result, "result")  # ValueError: unchanged
        self._started.pop(token, None)
        traced = self._tracer is not None
        sample = Jsonb([float(duration), float(peak_memory)])
        row = self._statement(
            self.call_finish,
            (job_id, token, stored, sample, PROFILE_SAMPLES, int(traced)),
        )
        if not row["finished"]:
            raise StaleLease(f"job {job_id} is no longer leased with this token (its lease expired)")
        if traced:
            self._emit(started.worker or self._process, "finish", job=job_id)
            self._write_events(int(row["seq"]))
        return dataclasses.replace(
            started,
            state=JobState.DONE,
            result=None if stored is None else json.loads(stored),
            lease_until=None,
            lease_token=None,
        )

    def release(self, job_id: int, token: str, why: str) -> Job:
        self._started.pop(token, None)  # its finish, should it come, takes the general path
        return super().release(job_id, token, why)

    # ------------------------------------------------------------------ locks

    def _lock_keys(self, keys: set[str]) -> set[str]:
        """Take the advisory locks of ``keys`` not yet held; the keys it could not take.

        Deadlock-free by construction: a step waits for key locks only while it holds none, and
        then takes the whole batch in sorted order; once it holds some, it only tries (a claim
        reading a second batch of candidates skips those whose keys are busy, as ``SKIP LOCKED``
        skips rows). No step waits while holding a lock another waiter needs out of order."""
        wanted = sorted(keys - self._held)
        if not wanted:
            return set()
        if not any(key.startswith(KEY_PREFIXES) for key in self._held):
            # One round trip; the function scan takes them in the array's (sorted) order.
            self._db.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(k)) FROM unnest(%s::text[]) AS k",
                (LOCK_SPACE, wanted),
            )
            self._held.update(wanted)
            return set()
        busy: set[str] = set()
        for key in wanted:
            row = self._db.execute(
                "SELECT pg_try_advisory_xact_lock(%s, hashtext(%s)) AS ok", (LOCK_SPACE, key)
            ).fetchone()
            if row is not None and row["ok"]:
                self._held.add(key)
            else:
                busy.add(key)
        return busy

    def _keys(self, jobs: Sequence[Job | Ready], budgets: Budgets) -> set[str]:
        """The locks that guard the usage these jobs count against (see the module docstring)."""
        keys: set[str] = set()
        for job in jobs:
            if job.queue in budgets.queues:
                keys.add(f"queue:{job.queue}")
            if job.concurrency_group is not None:
                keys.add(f"group:{job.concurrency_group}")
        return keys

    # ------------------------------------------------------------------ row primitives

    def _insert_job(self, spec: JobSpec, now: float, workflow: tuple[int, int, int | None] | None) -> Job:
        row = self._db.execute(
            f"INSERT INTO jobs ({rows.JOB_INSERT_COLUMNS})"
            " VALUES (%s, %s, %s, %s, 'pending', %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING *",
            rows.job_insert(spec, now, workflow),
        ).fetchone()
        assert row is not None
        # Delivered at commit, with the job, to the sessions listening then (rolled back with it).
        self._db.execute("SELECT pg_notify(%s, %s)", (CHANNEL, spec.queue))
        return _job(row)

    def _load(self, job_id: int) -> Job | None:
        held = self._locked.get(job_id)
        if held is not None:
            return held
        row = self._db.execute("SELECT * FROM jobs WHERE id = %s FOR UPDATE", (job_id,)).fetchone()
        if row is None:
            return None
        job = self._locked[job_id] = _job(row)
        return job

    def _update(self, job_id: int, changes: dict[str, Any]) -> None:
        if "state" in changes and JobState(changes["state"]) is not JobState.PROCESSING:
            current = self._load(job_id)
            if current is not None and current.state is JobState.PROCESSING:
                # Leaving processing frees budget: a claim summing this key must not see half of it.
                keys = self._keys([current], self._read_budgets())
                if self._lock_keys(keys):  # held some already and these are busy: wait after all
                    for key in sorted(keys - self._held):  # (a rare cycle is broken by RETRYABLE)
                        self._db.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (LOCK_SPACE, key))
                        self._held.add(key)
        values: list[Any] = []
        for column, value in changes.items():
            if column == "state":
                values.append(JobState(value).value)
            elif column in _JSON_COLUMNS:
                values.append(None if value is None else wf.dumps(value))
            else:
                values.append(value)
        columns = ", ".join(f"{column} = %s" for column in changes)
        self._locked.pop(job_id, None)
        self._db.execute(f"UPDATE jobs SET {columns} WHERE id = %s", (*values, job_id))

    def _start(self, job_id: int, changes: dict[str, Any]) -> Job:
        # The core's update and read back, in one statement. Nothing leaves processing here.
        self._locked.pop(job_id, None)
        row = self._db.execute(
            "UPDATE jobs SET state = %s, attempts = %s, lease_until = %s, lease_token = %s, worker = %s"
            " WHERE id = %s RETURNING *",
            (
                JobState(changes["state"]).value,
                changes["attempts"],
                changes["lease_until"],
                changes["lease_token"],
                changes["worker"],
                job_id,
            ),
        ).fetchone()
        assert row is not None
        return _job(row)

    def _jobs(self, sql: str, *params: Any) -> list[Job]:
        return [_job(row) for row in self._db.execute(sql, params).fetchall()]

    def _expired(self, now: float) -> list[int]:
        jobs = self._jobs(
            "SELECT * FROM jobs WHERE state = 'processing' AND lease_until < %s"
            " ORDER BY id FOR UPDATE SKIP LOCKED",
            now,
        )
        if jobs:
            self._lock_keys(self._keys(jobs, self._read_budgets()))
        return [job.id for job in jobs]

    def _queue_filter(self, queues: Sequence[str] | None) -> tuple[str, list[Any]]:
        if queues is None:
            return "", []
        return " AND queue = ANY(%s)", [list(queues)]

    def _candidates(self, now: float, queues: Sequence[str] | None, limit: int) -> list[Ready]:
        where, params = self._queue_filter(queues)
        rows = self._db.execute(
            f"SELECT {READY_COLUMNS} FROM jobs WHERE state = 'pending' AND available_at <= %s"
            f"{where} ORDER BY priority DESC, available_at, id LIMIT %s FOR UPDATE SKIP LOCKED",
            (now, *params, limit),
        ).fetchall()
        jobs = [Ready(**row) for row in rows]
        # Before any usage is read: from here until commit, no other step changes what these count.
        budgets = self._read_budgets()
        busy = self._lock_keys(self._keys(jobs, budgets))
        return [job for job in jobs if not self._keys([job], budgets) & busy]

    def _count_claimable(self, now: float, queues: Sequence[str] | None) -> int:
        where, params = self._queue_filter(queues)
        row = self._db.execute(rows.CLAIMABLE.format(p="%s") + where, (now, now, *params)).fetchone()
        assert row is not None
        return int(row["n"])

    def _usage(self, queue: str, group: str | None) -> Usage:
        # One pass over the processing rows for the queue and the group (no group counts nothing).
        row = self._db.execute(
            "SELECT COUNT(*) FILTER (WHERE concurrency_group = %(g)s) AS running,"
            " COALESCE(SUM(cost_units) FILTER (WHERE queue = %(q)s), 0) AS queue_cost,"
            " COALESCE(SUM(cost_units) FILTER (WHERE concurrency_group = %(g)s), 0) AS group_cost"
            " FROM jobs WHERE state = 'processing' AND (queue = %(q)s OR concurrency_group = %(g)s)",
            {"q": queue, "g": group},
        ).fetchone()
        assert row is not None
        return Usage(int(row["running"]), int(row["queue_cost"]), int(row["group_cost"]))

    def _samples(self, handler: str) -> list[list[float]]:
        row = self._db.execute("SELECT samples FROM profiles WHERE handler = %s", (handler,)).fetchone()
        return [] if row is None else [list(map(float, sample)) for sample in row["samples"]]

    def _save_samples(self, handler: str, samples: list[list[float]]) -> None:
        self._db.execute(
            "INSERT INTO profiles (handler, samples) VALUES (%s, %s)"
            " ON CONFLICT (handler) DO UPDATE SET samples = excluded.samples",
            (handler, Jsonb(samples)),
        )

    def _add_sample(self, handler: str, sample: list[float], keep: int) -> None:
        # Appended in SQL, to the row as it is when the upsert locks it: two workers finishing
        # runs of one handler at once (READ COMMITTED, side by side) keep both samples, where a
        # read here and a write back would drop one. The last ``keep`` stay.
        self._db.execute(
            "INSERT INTO profiles AS p (handler, samples) VALUES (%(h)s, jsonb_build_array(%(s)s::jsonb))"
            " ON CONFLICT (handler) DO UPDATE SET samples = ("
            "  SELECT COALESCE(jsonb_agg(kept.e ORDER BY kept.n), '[]'::jsonb) FROM ("
            "   SELECT e, n FROM jsonb_array_elements(p.samples || jsonb_build_array(%(s)s::jsonb))"
            "    WITH ORDINALITY AS t(e, n) ORDER BY n DESC LIMIT %(k)s) AS kept)",
            {"h": handler, "s": Jsonb(sample), "k": keep},
        )

    def _read_budgets(self) -> Budgets:
        # Every claim reads the budgets; they change rarely. Under the shared lock no change can
        # commit, and ``_write_budgets`` bumps the version: an unchanged version, the cache holds.
        cached = self._budgets_cache
        if "budgets" in self._held and cached is not None:
            return cached[1]  # read in this transaction already, under the lock
        if "budgets" not in self._held:
            row = self._db.execute(
                "SELECT pg_advisory_xact_lock_shared(%s, %s) AS locked,"
                " (SELECT value FROM meta WHERE key = 'budgets_version') AS version",
                (LOCK_SPACE, BUDGETS_LOCK),
            ).fetchone()
            self._held.add("budgets")
        else:
            row = self._db.execute(
                "SELECT value AS version FROM meta WHERE key = 'budgets_version'"
            ).fetchone()
        assert row is not None
        version = int(row["version"])
        if cached is not None and cached[0] == version:
            return cached[1]
        found = self._db.execute("SELECT kind, name, budget FROM budgets").fetchall()
        budgets = rows.budgets_of((r["kind"], r["name"], r["budget"]) for r in found)
        self._budgets_cache = (version, budgets)
        return budgets

    def _write_budgets(self, budgets: Budgets) -> None:
        # Exclusive: waits for the claims and enqueues deciding on the old budgets to commit.
        self._db.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, BUDGETS_LOCK))
        self._db.execute("UPDATE meta SET value = value + 1 WHERE key = 'budgets_version'")
        self._budgets_cache = None
        self._db.execute("DELETE FROM budgets")
        table = rows.budget_rows(budgets)
        if table:
            with self._db.cursor() as cursor:
                cursor.executemany("INSERT INTO budgets (kind, name, budget) VALUES (%s, %s, %s)", table)

    def _insert_run(self, flow: wf.Workflow, state: dict[str, Any], parent: int | None) -> wf.Run:
        run = wf.Run(0, flow, state, parent=parent)
        insert = rows.RUN_INSERT.format(p="%s") + " RETURNING id"
        row = self._db.execute(insert, (wf.dumps(flow.definition()), parent)).fetchone()
        assert row is not None
        run.id = int(row["id"])
        return run

    def _load_run(self, run_id: int) -> wf.Run | None:
        row = self._db.execute("SELECT * FROM workflows WHERE id = %s FOR UPDATE", (run_id,)).fetchone()
        return None if row is None else rows.run_of(row)

    def _save_run(self, run: wf.Run) -> None:
        self._db.execute(rows.RUN_SAVE.format(p="%s"), rows.run_params(run))

    def _pending_of_run(self, run_id: int) -> list[Job]:
        # Locked: a step a claim is deciding right now is waited for, then seen as it ends up.
        return self._jobs(
            "SELECT * FROM jobs WHERE workflow_id = %s AND state = 'pending' ORDER BY id FOR UPDATE", run_id
        )

    def _next_seq(self, count: int) -> int:
        row = self._db.execute(
            "UPDATE meta SET value = value + %s WHERE key = 'trace_seq' RETURNING value", (count,)
        ).fetchone()
        assert row is not None
        return int(row["value"]) - count + 1

    def _status_rows(self, limit: int) -> tuple[dict[str, int], list[Job], list[Job], list[Job]]:
        counts = {state.value: 0 for state in JobState}
        for row in self._db.execute("SELECT state, COUNT(*) AS n FROM jobs GROUP BY state").fetchall():
            counts[row["state"]] = int(row["n"])
        processing = self._jobs("SELECT * FROM jobs WHERE state = 'processing' ORDER BY id")
        deferred = self._jobs(
            "SELECT * FROM jobs WHERE state = 'pending' AND last_denial IS NOT NULL"
            " ORDER BY available_at, id LIMIT %s",
            limit,
        )
        failed = self._jobs("SELECT * FROM jobs WHERE state = 'failed' ORDER BY id DESC LIMIT %s", limit)
        return counts, processing, deferred, failed
