"""SqliteStore specifics: readers beside a writer, the claim's index, the budgets cache, the scan."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from reference.jobs import Budgets, Conditions, JobSpec, JobState, Reason
from reference.jobs.sqlite_store import SqliteStore
from reference.jobs.store import SCAN_LIMIT

OPEN = Conditions(retry_after=0.0)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "jobs.db"


def test_read_steps_run_while_another_process_holds_the_write_lock(path: Path) -> None:
    with SqliteStore(path) as store:
        job = store.enqueue(JobSpec("q", {"n": 1}))
        store._db.execute("PRAGMA busy_timeout = 50")  # a step that waits for the lock fails fast
        writer = sqlite3.connect(path, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")
        try:
            assert store.status().counts["pending"] == 1
            assert store.claimable(["q"]) == 1
            found = store.get(job.id)
            assert found is not None and found.payload == {"n": 1}
            assert store.budgets() == Budgets()
            assert store.workflow(1) is None
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                store.claim("w", OPEN)  # a write step does wait: the lock above is real
        finally:
            writer.execute("ROLLBACK")
            writer.close()
        assert store.claim("w", OPEN).claim is not None


def _plan(store: SqliteStore, sql: str) -> str:
    return " | ".join(str(row[3]) for row in store._db.execute("EXPLAIN QUERY PLAN " + sql))


def test_the_claim_scan_walks_an_index_in_claim_order(path: Path) -> None:
    order = " ORDER BY priority DESC, available_at, id LIMIT 16"
    with SqliteStore(path) as store:
        one_queue = _plan(
            store,
            f"SELECT id FROM jobs WHERE state = 'pending' AND available_at <= 1 AND queue IN ('q'){order}",
        )
        assert "jobs_ready" in one_queue and "TEMP B-TREE" not in one_queue, one_queue
        any_queue = _plan(
            store,
            "SELECT id FROM jobs INDEXED BY jobs_claimable"
            f" WHERE state = 'pending' AND available_at <= 1{order}",
        )
        assert "jobs_claimable" in any_queue and "TEMP B-TREE" not in any_queue, any_queue


def test_a_budget_set_by_another_store_binds_the_next_claim(path: Path) -> None:
    with SqliteStore(path) as worker, SqliteStore(path) as admin:
        worker.enqueue(JobSpec("q", cost_units=2))
        worker.enqueue(JobSpec("q", cost_units=2))
        assert worker.claim("w", OPEN).claim is not None  # reads (and caches) the empty budgets
        admin.set_budgets(Budgets({"q": 3}))
        outcome = worker.claim("w", OPEN)
        assert outcome.claim is None
        assert [d.reason for _, d in outcome.denied] == [Reason.QUEUE_BUDGET]


def test_a_claim_denied_its_first_job_goes_on_to_the_next(path: Path) -> None:
    with SqliteStore(path) as store:
        store.set_budgets(Budgets({"q": 4}))
        big = store.enqueue(JobSpec("q", priority=1, cost_units=4))
        small = [store.enqueue(JobSpec("q", cost_units=1)) for _ in range(SCAN_LIMIT + 2)]
        assert store.claim("w", OPEN).claim is not None  # big runs: the queue is full
        store.set_budgets(Budgets({"q": 5}))
        held = store.claim("w", OPEN)
        assert held.claim is not None and held.claim.job.id == small[0].id
        # Now every job is denied: the claim looks at SCAN_LIMIT of them, each once, in order.
        outcome = store.claim("w", OPEN)
        assert outcome.claim is None
        assert [job for job, _ in outcome.denied] == [j.id for j in small[1 : SCAN_LIMIT + 1]]
        again = store.get(small[1].id)
        assert again is not None and again.state is JobState.PENDING and again.attempts == 0
        assert big.id not in [job for job, _ in outcome.denied]
