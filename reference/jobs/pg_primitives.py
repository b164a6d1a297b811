"""The PostgreSQL store's row primitives (``primitives.StorePrimitives``) and the locks they take.

Each runs inside the step's transaction (``pg_session``). Rows a step reads to change are read
``FOR UPDATE``; claim candidates and expired leases ``FOR UPDATE SKIP LOCKED``; the usage a claim
sums for a budgeted queue or a concurrency group is guarded by that key's advisory lock, taken
before the usage is read and by every step that takes a job out of ``processing``; the budgets
are read under a shared advisory lock that ``_write_budgets`` takes exclusively. Why, and why
this cannot deadlock: the ``pg_store`` module docstring.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from reference.jobs import rows
from reference.jobs import workflow as wf
from reference.jobs.admission import Usage
from reference.jobs.budgets import Budgets
from reference.jobs.model import Job, JobSpec, JobState
from reference.jobs.pg_fast import BUDGETS_LOCK, LOCK_SPACE
from reference.jobs.pg_listen import CHANNEL
from reference.jobs.pg_rows import JSON_COLUMNS, job_of
from reference.jobs.pg_session import PgSession
from reference.jobs.rows import READY_COLUMNS, Ready

KEY_PREFIXES = ("queue:", "group:")


class PgPrimitives(PgSession):
    """The row primitives of ``StoreCore`` as SQL on the step's connection."""

    _budgets_cache: tuple[int, Budgets] | None = None
    """``(budgets_version, budgets)`` as last read: unchanged while the version is."""

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
        return job_of(row)

    def _load(self, job_id: int) -> Job | None:
        held = self._locked.get(job_id)
        if held is not None:
            return held
        row = self._db.execute("SELECT * FROM jobs WHERE id = %s FOR UPDATE", (job_id,)).fetchone()
        if row is None:
            return None
        job = self._locked[job_id] = job_of(row)
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
            elif column in JSON_COLUMNS:
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
        return job_of(row)

    def _jobs(self, sql: str, *params: Any) -> list[Job]:
        return [job_of(row) for row in self._db.execute(sql, params).fetchall()]

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

    def _lock_budgets(self) -> None:
        # Exclusive before the read: two changes that each read under the shared lock and then
        # waited for the exclusive one would deadlock, or (in separate transactions) lose one.
        self._db.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, BUDGETS_LOCK))
        self._budgets_cache = None

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

    def _failed_runs(self, limit: int) -> list[int]:
        found = self._db.execute(rows.FAILED_RUNS.format(p="%s"), (limit,)).fetchall()
        return [int(r["id"]) for r in found]

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
