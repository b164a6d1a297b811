"""Wakeups on PostgreSQL: an idle worker is woken by the enqueue's NOTIFY, in the order the
job-wakeup spec proves (LISTEN, claim, wait); the naive order misses it, shown deterministically
by enqueueing in the window between the empty claim and the LISTEN. The counters of the
listening session say what woke the worker: never a timing assertion."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from reference.jobs import JobSpec, Worker, WorkerOptions
from reference.jobs.core import StoreCore
from reference.jobs.pg_store import Listener, PgStore
from reference.jobs.sqlite_store import SqliteStore
from reference.jobs.worker import Handler

pytestmark = pytest.mark.timeout(60)

HANDLERS: dict[str, Handler] = {"work": lambda payload: payload}
LONG_POLL = 20.0  # a missed notification would show as a timeout, never as a pass
SHORT_POLL = 0.2


def job(n: int = 0) -> JobSpec:
    return JobSpec("work", {"n": n})


class EnqueueWhenIdle(Worker):
    """The design's order, with a hook in the window after the claim that found nothing."""

    def __init__(self, store: StoreCore, poll: float) -> None:
        super().__init__(store, HANDLERS, WorkerOptions(name="w", max_jobs=1, poll=poll))
        self.hooked = 0

    def idle(self) -> None:
        if self.hooked == 0:
            self.hooked += 1
            self.store.enqueue(job())  # commits (and notifies) between the empty claim and the wait
        super().idle()


class NaiveOrder(EnqueueWhenIdle):
    """The naive order: LISTEN only once a claim came back empty (spec mutant claim-then-listen)."""

    def listen(self) -> Any:
        return None  # not before the first claim

    def idle(self) -> None:
        if self.hooked == 0:
            self.hooked += 1
            self.store.enqueue(job())  # between the empty claim and the LISTEN
        if self.wakeups is None:
            self.wakeups = PgStore.listen(self.store)  # type: ignore[arg-type]
        self.wakeups.wait(self.options.poll)


@pytest.fixture
def pg(pg_url: str) -> Any:
    with PgStore(pg_url, process="t") as store:
        yield store


def test_an_enqueue_after_the_empty_claim_wakes_the_listening_worker(pg: PgStore) -> None:
    worker = EnqueueWhenIdle(pg, LONG_POLL)
    report = worker.run()
    assert report.done == 1 and report.stopped == "max_jobs"
    assert isinstance(worker.wakeups, Listener)
    assert (worker.wakeups.notified, worker.wakeups.timeouts) == (1, 0)  # woken by the NOTIFY


def test_the_naive_order_misses_that_enqueue_and_only_the_poll_finds_it(pg: PgStore) -> None:
    worker = NaiveOrder(pg, SHORT_POLL)
    report = worker.run()
    assert report.done == 1  # the poll fallback: the job is late, not lost
    assert isinstance(worker.wakeups, Listener)
    assert worker.wakeups.notified == 0  # the NOTIFY went out before anyone listened
    assert worker.wakeups.timeouts >= 1


def test_a_worker_waiting_on_an_empty_queue_is_woken_by_another_process_enqueue(
    pg: PgStore, pg_url: str
) -> None:
    waiting = threading.Event()

    class Signals(Worker):
        def idle(self) -> None:
            waiting.set()
            super().idle()

    with PgStore(pg_url, process="w") as own:
        worker = Signals(own, HANDLERS, WorkerOptions(name="w", max_jobs=1, poll=LONG_POLL))
        thread = threading.Thread(target=worker.run)
        thread.start()
        assert waiting.wait(30)
        pg.enqueue(job(7))  # another session (another host, as far as the worker can tell)
        thread.join(40)
    assert not thread.is_alive()
    assert worker.report.done == 1
    assert worker.wakeups is not None
    assert (worker.wakeups.notified, worker.wakeups.timeouts) == (1, 0)  # type: ignore[attr-defined]


def test_a_rolled_back_insert_notifies_nobody(pg: PgStore, pg_url: str) -> None:
    listener = pg.listen()
    try:
        with pytest.raises(RuntimeError), pg._transaction():
            pg._insert_job(job(), 0.0, None)
            raise RuntimeError("abort the step")
        assert listener.wait(SHORT_POLL) is False
        pg.enqueue(job())
        assert listener.wait(LONG_POLL) is True
        assert (listener.notified, listener.timeouts) == (1, 1)
    finally:
        listener.close()


def test_a_lost_listening_session_listens_again_before_the_worker_waits(pg: PgStore, pg_url: str) -> None:
    listener = pg.listen()
    try:
        assert listener._conn is not None
        pid = listener._conn.info.backend_pid
        with pg._pool.connection() as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert listener.wait(LONG_POLL) is False and listener.lost == 1
        pg.enqueue(job())  # while no session listens: announced to nobody
        # The next wait opens a new session, LISTENs, and returns without waiting: the worker
        # claims (and finds that job) before it waits again.
        assert listener.wait(LONG_POLL) is False and listener.listening
        assert (listener.notified, listener.timeouts) == (0, 0)
        pg.enqueue(job())
        assert listener.wait(LONG_POLL) is True
    finally:
        listener.close()


def test_a_step_whose_connection_broke_before_the_commit_runs_again(pg: PgStore) -> None:
    pg.enqueue(job())
    with pg._transaction():  # the connection the store's next step uses: its own
        pid = pg._db.info.backend_pid
    with PgStore(pg.dsn, process="admin") as admin, admin._pool.connection() as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    assert pg.status(0).counts["pending"] == 1  # the pool's broken connection, replaced
    assert pg.reconnects >= 1


def test_sqlite_announces_nothing_so_its_worker_polls(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "jobs.db") as store:
        slept: list[float] = []

        def sleep(seconds: float) -> None:  # the poll: meanwhile a job arrives, unannounced
            slept.append(seconds)
            store.enqueue(job())

        worker = Worker(store, HANDLERS, WorkerOptions(name="w", max_jobs=1, poll=0.5), sleep=sleep)
        report = worker.run()
    assert report.done == 1 and worker.wakeups is None and slept == [0.5]
