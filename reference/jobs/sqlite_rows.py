"""The SQLite store's SQL and its row codec: the schema, the statements of the fast claim and
finish, and a ``Job`` from a row. Kept apart from ``sqlite_store`` (the steps) so each reads whole.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Sequence
from typing import Any

from reference.jobs import workflow as wf
from reference.jobs.model import Job, JobState
from reference.jobs.rows import READY_COLUMNS, SHARED_DDL, Ready, frozen, state_of

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    queue TEXT NOT NULL, handler TEXT NOT NULL, payload TEXT NOT NULL, priority INTEGER NOT NULL,
    state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL,
    backoff REAL NOT NULL, concurrency_group TEXT, concurrency_limit INTEGER,
    cost_units INTEGER NOT NULL, available_at REAL NOT NULL, created_at REAL NOT NULL,
    lease_until REAL, lease_token TEXT, worker TEXT, denials INTEGER NOT NULL DEFAULT 0,
    last_denial TEXT, reason TEXT, result TEXT, workflow_id INTEGER, step INTEGER, item_index INTEGER
);
{SHARED_DDL}
CREATE INDEX IF NOT EXISTS jobs_ready ON jobs (state, queue, priority DESC, available_at, id);
CREATE TABLE IF NOT EXISTS profiles (handler TEXT PRIMARY KEY, samples TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS workflows (
    id INTEGER PRIMARY KEY AUTOINCREMENT, definition TEXT NOT NULL, state TEXT NOT NULL,
    step INTEGER NOT NULL, pending INTEGER NOT NULL, results TEXT NOT NULL, status TEXT NOT NULL,
    reason TEXT, usage TEXT NOT NULL, parent INTEGER
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (key, value) VALUES ('trace_seq', 0);
INSERT OR IGNORE INTO meta (key, value) VALUES ('budgets_version', 0);
"""

JSON_COLUMNS = ("payload", "result")
BUDGETS_VERSION = "SELECT value FROM meta WHERE key = 'budgets_version'"


FIELDS = tuple(f.name for f in dataclasses.fields(Job))
JOB_COLUMNS = ", ".join(FIELDS)
"""``Job``'s fields in order: a row selected with these builds a ``Job`` by position."""
WHOLE = f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?"
FAST = 5
"""Columns the fast claim's read puts before the candidate's columns (see ``scan_sql``)."""
LEASED = ("state", "lease_until", "lease_token", "worker")
"""What a claim overwrites: the fast claim does not read them."""
RARE = ("last_denial", "reason", "result", "workflow_id", "step", "item_index")
"""Columns that are NULL for most claimable jobs (never denied, failed or part of a workflow): the
fast read asks whether all of them are, and reads them only when one is not."""
PLAIN = tuple(c for c in FIELDS if c not in LEASED and c not in RARE)
"""The columns the fast claim's read gives of its candidate, then the flag "every ``RARE`` column
is NULL". Python's ``sqlite3`` (3.11) costs about 1.7k instructions per column fetched (it lets go
of the GIL for each column's type), so the read fetches 20 columns, not 30."""
START = (
    "UPDATE jobs SET state = 'processing', attempts = ?, lease_until = ?, lease_token = ?, worker = ?"
    " WHERE id = ?"
)
"""The changes of ``core.lease``, in SQL."""
DONE = (
    "UPDATE jobs SET state = 'done', result = ?, lease_until = NULL, lease_token = NULL"
    " WHERE id = ? AND state = 'processing' AND lease_token = ?"
)
ADD_SAMPLE = (
    # Appended in SQL: one statement instead of a read and a write. A full list (the usual case)
    # drops its first sample; a longer one (``keep`` was lowered) is cut to the last ``keep``
    # (json_each walks the array in order).
    "INSERT INTO profiles (handler, samples) VALUES (?1, json_array(json(?2)))"
    " ON CONFLICT (handler) DO UPDATE SET samples = CASE json_array_length(samples) - ?3"
    "  WHEN -1 THEN json_insert(samples, '$[#]', json(?2))"
    "  WHEN 0 THEN json_remove(json_insert(samples, '$[#]', json(?2)), '$[0]')"
    "  WHEN 1 THEN json_remove(json_insert(samples, '$[#]', json(?2)), '$[0]', '$[0]')"
    "  ELSE (SELECT json_group_array(json(e.value))"
    "   FROM json_each(json_insert(samples, '$[#]', json(?2))) AS e"
    "   WHERE e.key > json_array_length(samples) - ?3) END"
)
"""Append sample ?2 (JSON) to handler ?1's samples, keeping the last ?3."""
QUEUE, HANDLER, GROUP, LIMIT, COST, ATTEMPTS = (
    PLAIN.index(c)
    for c in ("queue", "handler", "concurrency_group", "concurrency_limit", "cost_units", "attempts")
)
"""Positions in the fast read's candidate columns (``PLAIN``)."""
PLAIN_FLAG = len(PLAIN)
READY_AT = tuple(PLAIN.index(c) for c in Ready._fields)


STORED: dict[str, str] = {
    **{state: state.value for state in JobState},
    **{s.value: s.value for s in JobState},
}
SPECIAL = frozenset(("state", *JSON_COLUMNS))
"""Columns whose Python value is not what SQLite stores: a ``JobState``, JSON."""
SETTERS: dict[tuple[str, ...], str] = {}


def decoded(text: str | None) -> Any:
    return None if text is None or text == "null" else json.loads(text)


def value_of(column: str, value: Any) -> Any:
    """``value`` as the ``column`` stores it."""
    if column == "state":
        return STORED[value]
    if column in JSON_COLUMNS:
        return None if value is None else wf.dumps(value)
    return value


def job_of(row: Sequence[Any], changes: dict[str, Any] | None = None) -> Job:
    """The ``Job`` of a row selected with ``JOB_COLUMNS``; with ``changes``, as it is once
    ``_update`` has written them."""
    # A row of our own table is a Job already: its dict is built whole and handed to the instance
    # (``rows.frozen``), not set field by field through the frozen __init__ (two dozen calls).
    values = dict(zip(FIELDS, row, strict=True))
    if changes:
        values.update(changes)
        if not SPECIAL.isdisjoint(changes):
            for column in SPECIAL.intersection(changes):  # as stored, then read back
                values[column] = value_of(column, changes[column])
    for column in JSON_COLUMNS:
        text = values[column]
        if text is not None:
            values[column] = None if text == "null" else json.loads(text)
    values["state"] = state_of(values["state"])
    return frozen(Job, values)


def started_job(row: Sequence[Any], worker: str, token: str, attempts: int, lease_until: float) -> Job:
    """``job_of(row, rows.lease(worker, token, attempts, lease_until))`` for the row of a pending
    job the fast claim has just leased, with less work: the state is known, so it is set rather
    than written as stored and read back."""
    values = dict(zip(FIELDS, row, strict=True))
    values["state"] = JobState.PROCESSING
    values["attempts"] = attempts
    values["lease_until"] = lease_until
    values["lease_token"] = token
    values["worker"] = worker
    payload = values["payload"]
    values["payload"] = None if payload == "null" else json.loads(payload)
    result = values["result"]
    if result is not None:
        values["result"] = None if result == "null" else json.loads(result)
    return frozen(Job, values)


def plain_job(row: Sequence[Any], worker: str, token: str, attempts: int, lease_until: float) -> Job:
    """``started_job`` for a candidate the fast read gave as its ``PLAIN`` columns (``row``, from
    the candidate's first column) with every ``RARE`` column NULL."""
    # A dict display, not dict(zip(PLAIN, row)): a third of this function's time. The positions are
    # PLAIN's (``tests/jobs/test_fast_claim.py`` compares the result with ``started_job``'s).
    payload = row[3]
    return frozen(
        Job,
        {
            "id": row[0],
            "queue": row[1],
            "handler": row[2],
            "payload": None if payload == "null" else json.loads(payload),
            "priority": row[4],
            "state": JobState.PROCESSING,
            "attempts": attempts,
            "max_attempts": row[6],
            "backoff": row[7],
            "concurrency_group": row[8],
            "concurrency_limit": row[9],
            "cost_units": row[10],
            "available_at": row[11],
            "created_at": row[12],
            "lease_until": lease_until,
            "lease_token": token,
            "worker": worker,
            "denials": row[13],
            "last_denial": None,
            "reason": None,
            "result": None,
            "workflow_id": None,
            "step": None,
            "item_index": None,
        },
    )


def setter(columns: tuple[str, ...]) -> str:
    """``col = ?, ...`` for these columns, built once per set of columns."""
    clause = SETTERS.get(columns)
    if clause is None:
        clause = SETTERS[columns] = ", ".join(f"{column} = ?" for column in columns)
    return clause


@functools.cache
def scan_sql(queues: int | None) -> tuple[str, str]:
    """For a claim over ``queues`` queues (None: all): the scan of the candidates' admission
    columns in claim order (``LIMIT ?2``), and the fast claim's one read (see ``_claim``)."""

    def order(first: int) -> str:  # the queue names are parameters ?first, ?first+1, ...
        where = (
            "" if queues is None else f" AND queue IN ({', '.join(f'?{first + i}' for i in range(queues))})"
        )
        # jobs_ready serves a queue filter in claim order; across all queues jobs_claimable does
        # (the planner, without statistics, would pick jobs_ready and sort every pending row).
        index = " INDEXED BY jobs_claimable" if queues is None else ""
        return (
            f" FROM jobs{index} WHERE state = 'pending' AND available_at <= ?1{where}"
            " ORDER BY priority DESC, available_at, id LIMIT"
        )

    # An aggregate without GROUP BY: exactly one row, the candidate's columns NULL if there is none.
    fast = (
        # The budgets' version, NULL when a lease lapsed (one column, not two: see ``PLAIN``).
        # jobs_leases: one seek into the lapsed leases, where jobs_state (the planner's pick) reads
        # every processing row's lease from the table.
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_leases"
        f"  WHERE state = 'processing' AND lease_until < ?1) THEN NULL ELSE ({BUDGETS_VERSION}) END,"
        " (SELECT samples FROM profiles WHERE handler = c.handler),"
        " COALESCE(SUM(p.concurrency_group = c.concurrency_group), 0),"
        " COALESCE(SUM(CASE WHEN p.queue = c.queue THEN p.cost_units END), 0),"
        " COALESCE(SUM(CASE WHEN p.concurrency_group = c.concurrency_group THEN p.cost_units END), 0),"
        f" c.* FROM (SELECT {', '.join(PLAIN)}, COALESCE({', '.join(RARE)}) IS NULL{order(2)} 1) AS c"
        " LEFT JOIN jobs AS p ON p.state = 'processing'"
    )
    return f"SELECT {READY_COLUMNS}{order(3)} ?2", fast
