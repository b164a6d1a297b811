"""Instructions per job of the SQLite loops, under callgrind: the load-independent measure of the
price of admission (``docs/jobs.md``, "Session 13").

One process, two connections (or two stores) taking turns on one file, so every claim and finish
is the one a worker of several makes, without waiting. The file is prepared before the measured
process starts (``prep``: 700 jobs per queue, the budgets of the bench, one finished run so the
handler has a profile); a run drains ``n`` jobs. ``instructions(loop)`` runs it under callgrind
for 200 and 600 jobs and returns ``(I600 - I200) / 400``: start-up and imports cancel out.

* ``bare``: ``bench_loops``' bare claim and finish, on two plain connections, as it runs them;
* ``minimal``: the store's own statements (read, ``START``, ``DONE``, the sample) with the least
  Python around them: what the store's SQL costs without the store;
* ``store``: ``SqliteStore.claim`` and ``finish``.

``python -m model_checks.designs.admission.bench_callgrind [LOOP ...]`` prints each loop's
instructions per job (valgrind on PATH; about a minute a loop).
"""

from __future__ import annotations

import re
import secrets
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from model_checks.designs.admission.bench_loops import _DONE, _LEASE, _PICK
from reference.jobs.admission import Conditions
from reference.jobs.budgets import Budgets
from reference.jobs.core import PROFILE_SAMPLES
from reference.jobs.model import JobSpec
from reference.jobs.sqlite_rows import ADD_SAMPLE, DONE, FAST, PLAIN, START, scan_sql
from reference.jobs.sqlite_store import SqliteStore

PREPARED = 700
"""Jobs per queue in a prepared file: more than the longest run drains."""
RUNS = (200, 600)
CONDITIONS = Conditions(enabled=True, retry_after=0.0)
_ID, _ATTEMPTS = FAST + PLAIN.index("id"), FAST + PLAIN.index("attempts")


def prep(path: Path, jobs: int = PREPARED) -> None:
    """A new file at ``path``: ``jobs`` bare jobs and ``jobs`` admission jobs (group, limit and
    budgets as ``bench``'s), and one admission job run so that ``noop`` has a profile."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with SqliteStore(path, process="prep") as store:
        store.set_budgets(Budgets({"adm": 64}, {"g": 64}))
        for _ in range(jobs):
            store.enqueue(JobSpec("bare", handler="noop"))
        spec = JobSpec("adm", handler="noop", concurrency_group="g", concurrency_limit=8)
        for _ in range(jobs):
            store.enqueue(spec)
        claim = store.claim("w", CONDITIONS, ["adm"]).claim
        assert claim is not None
        store.finish(claim.job.id, claim.token, None, 0.0, 0)


def _connections(path: Path) -> list[sqlite3.Cursor]:
    cursors = []
    for _ in range(2):
        db = sqlite3.connect(path, timeout=60.0, isolation_level=None)
        db.execute("PRAGMA synchronous = NORMAL")
        cursors.append(db.cursor())
    return cursors


def _next(row: tuple[Any, ...] | None) -> tuple[Any, ...]:
    if row is None:
        raise RuntimeError("the prepared file ran out of jobs")
    return row


def bare(path: Path, jobs: int) -> None:
    # ``Connection.execute`` (a cursor per statement), as the bench's bare loop runs them
    connections = [cursor.connection for cursor in _connections(path)]
    for i in range(jobs):
        cursor = connections[i % 2]
        cursor.execute("BEGIN IMMEDIATE")
        row = _next(cursor.execute(_PICK, ("bare", time.time())).fetchone())
        cursor.execute(_LEASE, (time.time() + 300.0, secrets.token_hex(8), "w", row[0]))
        cursor.execute("COMMIT")
        cursor.execute("BEGIN IMMEDIATE")
        cursor.execute(_DONE, (row[0],))
        cursor.execute("COMMIT")
    for connection in connections:
        connection.close()


def minimal(path: Path, jobs: int) -> None:
    read = scan_sql(1)[1]
    cursors = _connections(path)
    for i in range(jobs):
        cursor = cursors[i % 2]
        token = secrets.token_hex(8)
        cursor.execute("BEGIN IMMEDIATE")
        row = _next(cursor.execute(read, (time.time(), "adm")).fetchone())
        job = row[_ID]
        cursor.execute(START, (row[_ATTEMPTS] + 1, time.time() + 300.0, token, "w", job))
        cursor.execute("COMMIT")
        cursor.execute("BEGIN IMMEDIATE")
        if cursor.execute(DONE, (None, job, token)).rowcount != 1:
            raise RuntimeError(f"job {job} was not leased with the token just written")
        cursor.execute(ADD_SAMPLE, ("noop", "[0.0,0.0]", PROFILE_SAMPLES))
        cursor.execute("COMMIT")
    for cursor in cursors:
        cursor.connection.close()


def store(path: Path, jobs: int) -> None:
    stores = [SqliteStore(path, process=f"s{i}") for i in range(2)]
    for i in range(jobs):
        opened = stores[i % 2]
        claim = opened.claim("w", CONDITIONS, ["adm"]).claim
        if claim is None:
            raise RuntimeError("the prepared file ran out of jobs")
        opened.finish(claim.job.id, claim.token, None, 0.0, 0)
    for opened in stores:
        opened.close()


LOOPS: dict[str, Callable[[Path, int], None]] = {"bare": bare, "minimal": minimal, "store": store}


def _collected(stderr: str) -> int:
    found = re.search(r"Collected : (\d+)", stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in callgrind's output: {stderr[-500:]}")
    return int(found.group(1))


def instructions(loop: str) -> int:
    """``loop``'s instructions per job under callgrind (see the module's docstring)."""
    counts = []
    with tempfile.TemporaryDirectory(prefix="lanecheck-callgrind-") as tmp:
        for jobs in RUNS:
            path = Path(tmp) / f"{loop}-{jobs}.db"
            prep(path)
            done = subprocess.run(
                [
                    "valgrind",
                    "--tool=callgrind",
                    f"--callgrind-out-file={tmp}/callgrind.out",
                    sys.executable,
                    "-m",
                    "model_checks.designs.admission.bench_callgrind",  # not __name__: __main__ here
                    "--run",
                    loop,
                    str(path),
                    str(jobs),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            counts.append(_collected(done.stderr))
    return (counts[1] - counts[0]) // (RUNS[1] - RUNS[0])


def main(argv: list[str]) -> None:
    if argv[:1] == ["--run"]:  # the measured process
        LOOPS[argv[1]](Path(argv[2]), int(argv[3]))
        return
    for loop in argv or list(LOOPS):
        print(f"{loop}: {instructions(loop)} instructions per job", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
