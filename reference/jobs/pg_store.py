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
take the same locks in the same order, each called as one autocommit statement, its own
transaction), so the key locks are never held across a client round trip; whatever they do not
cover (a lease to reap, a denial, a refusal, a workflow step) runs the core's general steps below.
The store holds one connection between steps (``pg_session``), so a worker's steps take none from
the pool.

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

The store is built in layers, one module each: ``pg_rows`` (the schema and the row codec),
``pg_session`` (the pool, transactions, retries and reconnects), ``pg_primitives`` (the row
primitives and the key locks), and here the store itself with its one-statement claim and finish.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

from psycopg.types.json import Jsonb

from reference.jobs import pg_fast
from reference.jobs.admission import Candidate, Conditions, Usage, decide, profile_bounds
from reference.jobs.budgets import Budgets
from reference.jobs.core import CLAIM_STEPS, PROFILE_SAMPLES, steps_unchanged
from reference.jobs.model import Job, encode_payload
from reference.jobs.pg_fast import LOCK_SPACE
from reference.jobs.pg_listen import CHANNEL, Listener
from reference.jobs.pg_primitives import PgPrimitives
from reference.jobs.pg_rows import SCHEMA, SCHEMA_LOCK, job_of_json
from reference.jobs.pg_session import RECONNECT_TIMEOUT, RETRIES, ConnectionLost
from reference.jobs.rows import ProfileCache, finished, measured, ready
from reference.jobs.store import Claim, ClaimOutcome, StaleLease
from reference.jobs.tracing import Tracer

__all__ = ["CHANNEL", "LOCK_SPACE", "RETRIES", "ConnectionLost", "Listener", "PgStore"]

_LEASE_MEMO = 256
"""Most started jobs a store remembers for their one-statement ``finish``."""
_CLAIM_STEPS = (*CLAIM_STEPS, "_lock_keys", "_keys")
"""The steps the server-side functions stand in for: the core's, and this store's key locks."""
_BUDGETS_MEMO = 1024
"""Most (queue, budget, group, budget) combinations a store keeps as ``Budgets`` for ``decide``."""


class PgStore(PgPrimitives):
    """``StoreCore`` on PostgreSQL; ``dsn`` is a ``postgresql://`` URL or a libpq conninfo string.

    Thread-safe: a step runs on the store's own connection, or on one of the pool's while another
    thread is using that one (``pg_session``). Close it (or use it as a context manager) to close
    the pool."""

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
        super().__init__(
            dsn,
            clock,
            tracer,
            process if process is not None else f"pid{os.getpid()}",
            pool_size=pool_size,
            connect_timeout=connect_timeout,
            reconnect_timeout=reconnect_timeout,
        )
        self._started: dict[str, Job] = {}
        """Jobs this store's fast claim started, by lease token, for their fast ``finish``."""
        self._profiles = ProfileCache()
        self._budget_pairs: dict[tuple[str, int | None, str | None, int | None], Budgets] = {}
        """The budgets ``decide`` is given for what the claim function read, by what it read."""
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

    def listen(self) -> Listener:
        """A new session LISTENing on the store's channel, for one worker's wakeups."""
        return Listener(self.dsn)

    # ------------------------------------------------------------------ the fast paths
    # The common claim and finish as one autocommit statement each (``pg_fast``): no round trip
    # while the key locks are held. Anything else the function leaves to the core's general steps.

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
        job = job_of_json(row["job"])
        profile = self._profiles.get(job.handler, row["samples"])
        budgets = self._budgets_read(job, row["queue_budget"], row["group_budget"])
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

    def _budgets_read(self, job: Job, queue_budget: int | None, group_budget: int | None) -> Budgets:
        """The budgets the claim function read for ``job``'s queue and group, as ``Budgets``."""
        key = (job.queue, queue_budget, job.concurrency_group, group_budget)
        budgets = self._budget_pairs.get(key)
        if budgets is None:
            if len(self._budget_pairs) >= _BUDGETS_MEMO:
                self._budget_pairs.clear()
            budgets = self._budget_pairs[key] = Budgets(
                {} if queue_budget is None else {job.queue: int(queue_budget)},
                {} if group_budget is None else {str(job.concurrency_group): int(group_budget)},
            )
        return budgets

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
        return finished(started, stored)

    def release(self, job_id: int, token: str, why: str) -> Job:
        self._started.pop(token, None)  # its finish, should it come, takes the general path
        return super().release(job_id, token, why)
