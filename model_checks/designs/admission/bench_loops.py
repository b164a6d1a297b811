"""The worker loops the job benches time, one per phase; each runs in its own process.

Every loop drains one queue of no-op jobs and writes what it saw to ``out`` (JSON): the jobs it
claimed, each claim's latency, its denials, its span (first claim to end) and its CPU time.

* ``sqlite_bare``: ``BEGIN IMMEDIATE``; take the first pending job; mark it processing; ``COMMIT``;
  then mark it done — the least a correct SQLite claim loop does;
* ``sqlite_floor``: the same plus the least SQL admission needs (budgets' version, running cost
  of the job's queue and group, the handler's profile; the new sample at finish), hand-written;
* ``pg_bare``: PostgreSQL's bare loop: one ``UPDATE ... WHERE id = (SELECT ... FOR UPDATE SKIP
  LOCKED) RETURNING id`` per claim, then mark it done;
* ``pg_floor``: the store's own SQL with the bare loop's client: its claim and finish functions
  (``pg_fast``), one autocommit statement each on one plain connection, nothing decoded — the
  server's price of admission, without the store's Python;
* ``admission``: the store's own ``claim`` and ``finish`` (any store URL).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from reference.jobs.admission import Conditions
from reference.jobs.core import PROFILE_SAMPLES
from reference.jobs.location import open_store, sqlite_path
from reference.jobs.sqlite_store import BUSY_TIMEOUT

_PICK = (
    "SELECT id, handler, concurrency_group FROM jobs WHERE state = 'pending' AND queue = ?"
    " AND available_at <= ? ORDER BY priority DESC, available_at, id LIMIT 1"
)
_LEASE = (
    "UPDATE jobs SET state = 'processing', attempts = attempts + 1, lease_until = ?,"
    " lease_token = ?, worker = ? WHERE id = ?"
)
_DONE = "UPDATE jobs SET state = 'done', lease_until = NULL, lease_token = NULL WHERE id = ?"


Step = Callable[[], tuple[int | None, int, float, bool]]
"""One claim and its finish: the job's id (None: nothing claimed), the denials, the claim's
seconds, and whether a claim that got nothing should go on (jobs given back, claimable again)."""


def _drain(out: str, step: Step, close: Callable[[], None]) -> None:
    """Run ``step`` until the queue is drained, recording each claim's latency; then ``close`` the
    loop's connection or store (also if a step raised)."""
    claimed: list[int] = []
    latency: list[float] = []
    denied = 0
    first, cpu = time.time(), time.process_time()
    try:
        while True:
            job, denials, seconds, more = step()
            latency.append(seconds)
            denied += denials
            if job is None:
                if more:
                    continue
                break
            claimed.append(job)
        last, cpu = time.time(), time.process_time() - cpu  # the close is not the queue's
    finally:
        close()
    Path(out).write_text(
        json.dumps(
            {"claimed": claimed, "latency": latency, "denied": denied, "span": [first, last], "cpu": cpu}
        )
    )


def _sqlite(url: str) -> sqlite3.Connection:
    conn = sqlite3.connect(sqlite_path(url), timeout=BUSY_TIMEOUT, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def _sqlite_loop(url: str, queue: str, out: str, name: str, *, floor: bool) -> None:
    conn = _sqlite(url)

    def step() -> tuple[int | None, int, float, bool]:
        began = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        if floor:
            conn.execute("SELECT value FROM meta WHERE key = 'budgets_version'").fetchone()
        row = conn.execute(_PICK, (queue, time.time())).fetchone()
        if row is not None:
            if floor:
                conn.execute(
                    "SELECT SUM(concurrency_group = ?2), SUM(CASE WHEN queue = ?1 THEN cost_units END),"
                    " SUM(CASE WHEN concurrency_group = ?2 THEN cost_units END)"
                    " FROM jobs WHERE state = 'processing'",
                    (queue, row[2]),
                ).fetchone()
                conn.execute("SELECT samples FROM profiles WHERE handler = ?", (row[1],)).fetchone()
            conn.execute(_LEASE, (time.time() + 300.0, secrets.token_hex(8), name, row[0]))
        conn.execute("COMMIT")
        seconds = time.perf_counter() - began
        if row is None:
            return None, 0, seconds, False
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(_DONE, (row[0],))
        if floor:
            conn.execute(
                "INSERT INTO profiles (handler, samples) VALUES (?, '[[0.0,0.0]]')"
                " ON CONFLICT (handler) DO UPDATE SET samples = excluded.samples",
                (row[1],),
            )
        conn.execute("COMMIT")
        return int(row[0]), 0, seconds, False

    _drain(out, step, conn.close)


def sqlite_bare(url: str, queue: str, out: str, name: str) -> None:
    _sqlite_loop(url, queue, out, name, floor=False)


def sqlite_floor(url: str, queue: str, out: str, name: str) -> None:
    """A lower bound on admission's price on SQLite (``--floor``); never the result."""
    _sqlite_loop(url, queue, out, name, floor=True)


def pg_bare(url: str, queue: str, out: str, name: str) -> None:
    import psycopg

    conn = psycopg.connect(url, autocommit=False)

    def step() -> tuple[int | None, int, float, bool]:
        began = time.perf_counter()
        with conn.transaction():
            row = conn.execute(
                "UPDATE jobs SET state = 'processing', attempts = attempts + 1, lease_until = %s,"
                " lease_token = %s, worker = %s WHERE id = ("
                "  SELECT id FROM jobs WHERE state = 'pending' AND queue = %s AND available_at <= %s"
                "  ORDER BY priority DESC, available_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id",
                (time.time() + 300.0, secrets.token_hex(8), name, queue, time.time()),
            ).fetchone()
        seconds = time.perf_counter() - began
        if row is None:
            return None, 0, seconds, False
        with conn.transaction():
            conn.execute(_DONE.replace("?", "%s"), (row[0],))
        return int(row[0]), 0, seconds, False

    _drain(out, step, conn.close)


def pg_functions(
    url: str, queue: str, out: str, name: str, claim_function: str, finish_function: str
) -> None:
    """The bare loop's kind of client (one plain connection, one autocommit statement each,
    nothing decoded) calling a claim and a finish function of the PostgreSQL store's kind."""
    import psycopg
    from psycopg.types.json import Jsonb

    conn = psycopg.connect(url, autocommit=True)
    claim = (
        f"SELECT status, (job->>'id')::bigint AS id FROM {claim_function}"
        "(%s, %s, %s, %s, %s, true, NULL, %s, 0)"
    )
    finish = f"SELECT finished FROM {finish_function}(%s, %s, NULL, %s, %s, 0)"
    sample = Jsonb([0.0, 0.0])

    def step() -> tuple[int | None, int, float, bool]:
        began = time.perf_counter()
        token = secrets.token_hex(8)
        now = time.time()
        row = conn.execute(claim, (now, [queue], now + 300.0, token, name, 300.0)).fetchone()
        seconds = time.perf_counter() - began
        assert row is not None
        if row[0] == "empty":
            return None, 0, seconds, False
        if row[0] != "admitted":  # budgets that never bind, no lease to reap: never the case
            raise RuntimeError(f"{claim_function} went to the general path ({row[0]}) in {queue}")
        done = conn.execute(finish, (row[1], token, sample, PROFILE_SAMPLES)).fetchone()
        if done is None or not done[0]:
            raise RuntimeError(f"{finish_function}: job {row[1]}'s lease was gone")
        return int(row[1]), 0, seconds, False

    _drain(out, step, conn.close)


def pg_floor(url: str, queue: str, out: str, name: str) -> None:
    """A lower bound on the PostgreSQL store's price (``--floor``); never the result: the store's
    own two functions called from the bare loop's kind of client."""
    from reference.jobs import pg_fast  # psycopg's: an extra, not needed on SQLite

    pg_functions(url, queue, out, name, pg_fast.CLAIM_FUNCTION, pg_fast.FINISH_FUNCTION)


def admission(url: str, queue: str, out: str, name: str) -> None:
    store = open_store(url, process=name)
    conditions = Conditions(enabled=True, retry_after=0.0)

    def step() -> tuple[int | None, int, float, bool]:
        began = time.perf_counter()
        outcome = store.claim(name, conditions, [queue])
        seconds = time.perf_counter() - began
        if outcome.claim is None:
            # Given back (claimable again at once) or claimable: not drained yet. A job another
            # worker holds is that worker's to finish: like the bare loop, this one stops.
            again = bool(outcome.denied) or store.claimable([queue]) > 0
            return None, len(outcome.denied), seconds, again
        store.finish(outcome.claim.job.id, outcome.claim.token, None, 0.0, 0)
        return outcome.claim.job.id, len(outcome.denied), seconds, False

    _drain(out, step, store.close)
