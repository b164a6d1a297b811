"""PgStore's connections (``pg_session``): one of its own, held from step to step; a step of another
thread waits for the running one; a broken one given back to the pool and replaced."""

from __future__ import annotations

import threading

import pytest

from reference.jobs import Conditions, JobSpec, JobState
from reference.jobs.pg_store import PgStore

pytestmark = pytest.mark.timeout(60)

OPEN = Conditions(retry_after=0.0, lease=60.0)


def _checkouts(store: PgStore) -> int:
    return int(store._pool.get_stats().get("requests_num", 0))


def test_a_store_keeps_its_connection_from_step_to_step(pg_url: str) -> None:
    with PgStore(pg_url) as store:
        before = _checkouts(store)  # the schema set-up took the store's own connection already
        for n in range(3):
            store.enqueue(JobSpec("q", {"n": n}, concurrency_group="g"))
        for _ in range(3):
            claim = store.claim("w", OPEN).claim  # the one-statement claim and finish
            assert claim is not None
            assert store.finish(claim.job.id, claim.token, None, 0.1, 0).state is JobState.DONE
        assert store.status().counts["done"] == 3
        assert _checkouts(store) == before  # not one step took a connection from the pool


def test_a_step_of_another_thread_waits_for_the_running_one(pg_url: str) -> None:
    with PgStore(pg_url, pool_size=1) as store:  # the own connection is the whole pool
        store.enqueue(JobSpec("q"))
        before = _checkouts(store)
        claimed: list[object] = []
        other = threading.Thread(target=lambda: claimed.append(store.claim("w", OPEN).claim))
        with store._transaction():  # a step of this thread is running
            other.start()
            other.join(0.5)
            assert other.is_alive() and not claimed  # it waits: no second transaction interleaves
        other.join(10)
        assert not other.is_alive() and claimed and claimed[0] is not None
        assert _checkouts(store) == before  # and it took no connection from the pool


@pytest.mark.parametrize("step", ["claim", "finish"])
def test_a_one_statement_step_whose_connection_was_cut_runs_again_on_a_new_one(
    step: str, pg_url: str
) -> None:
    with PgStore(pg_url) as store, PgStore(pg_url, process="admin") as admin:
        store.enqueue(JobSpec("q", concurrency_group="g"))
        claim = None
        if step == "finish":
            claim = store.claim("w", OPEN).claim
            assert claim is not None
        with store._transaction():
            pid = store._db.info.backend_pid
        with admin._transaction():
            admin._db.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,))  # gone when it returns
        if claim is None:
            claim = store.claim("w", OPEN).claim
            assert claim is not None and claim.job.attempts == 1
        else:
            assert store.finish(claim.job.id, claim.token, None, 0.1, 0).state is JobState.DONE
        assert store.reconnects == 1
        with store._transaction():
            assert store._db.info.backend_pid != pid  # the broken one went back to the pool
