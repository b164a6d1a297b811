"""Giving a job back without spending an attempt (``release``): on every store, from a worker that
must stop now, and from the pool's shutdown timeout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reference.jobs import Budgets, Conditions, JobSpec, JobState, StaleLease, Worker, WorkerOptions
from reference.jobs.pool_policy import PoolPolicy
from reference.jobs.sqlite_store import SqliteStore
from reference.jobs.tracing import RecordingTracer
from tests.jobs.conftest import STORE_KINDS, StoreMaker
from tests.jobs.helpers import Clock, validate_events
from tests.jobs.test_pool import controller, counts, in_root, running, wait_for  # noqa: F401 (in_root: a fixture)

OPEN = Conditions(retry_after=5.0)


@pytest.fixture(params=STORE_KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_release_gives_the_job_back_at_once_with_its_attempt_unspent(
    kind: str, store_maker: StoreMaker
) -> None:
    clock, tracer = Clock(), RecordingTracer()
    store = store_maker(kind, clock, tracer)
    store.set_budgets(Budgets({"q": 1}))
    job = store.enqueue(JobSpec("q", {"n": 1}))
    first = store.claim("w0", OPEN).claim
    assert first is not None and first.job.attempts == 1
    released = store.release(job.id, first.token, "worker stopping")
    assert released.state is JobState.PENDING and released.attempts == 0
    assert released.reason == "released: worker stopping" and released.lease_token is None
    assert store.get(job.id) == released  # what it returns is what the store holds
    # the budget it held is free again, and the job is claimable now (no retry-after)
    again = store.claim("w1", OPEN).claim
    assert again is not None and again.job.id == job.id and again.job.attempts == 1
    with pytest.raises(StaleLease):  # the old lease is gone: nothing changes
        store.release(job.id, first.token, "late")
    with pytest.raises(StaleLease):
        store.finish(job.id, first.token, None, 0.0, 0)
    store.finish(job.id, again.token, None, 0.0, 0)
    events = tracer.events
    assert [e for e in events if e["event"] == "release"] == [
        {"seq": 6, "thread": "w0", "process": "t", "event": "release", "job": 1, "attempts": 0,
         "reason": "worker stopping"}
    ]  # fmt: skip
    verdict = validate_events(events, end=store.status(0).counts, complete=True)
    assert verdict.code == 0 and not verdict.prefix, verdict.message


def test_release_needs_a_reason(kind: str, store_maker: StoreMaker) -> None:
    store = store_maker(kind, Clock(), None)
    store.enqueue(JobSpec("q"))
    claim = store.claim("w", OPEN).claim
    assert claim is not None
    with pytest.raises(ValueError, match="reason"):
        store.release(claim.job.id, claim.token, "")
    assert store.get(claim.job.id).state is JobState.PROCESSING  # type: ignore[union-attr]


class _Stopping:
    """A handler that asks its own worker to stop now, as a signal handler in its thread would."""

    def __init__(self) -> None:
        self.worker: Worker | None = None
        self.runs = 0

    def __call__(self, payload: Any) -> Any:
        self.runs += 1
        assert self.worker is not None
        self.worker.stop(now=True)
        raise AssertionError("GiveBack was not raised into the handler")


def test_a_worker_told_to_stop_now_releases_its_job(kind: str, store_maker: StoreMaker) -> None:
    tracer = RecordingTracer()
    store = store_maker(kind, Clock(), tracer)
    job = store.enqueue(JobSpec("q", handler="h"))
    handler = _Stopping()
    worker = Worker(store, {"h": handler}, WorkerOptions(name="w", system_memory=False))
    handler.worker = worker
    report = worker.run()
    assert handler.runs == 1 and report.stopped == "interrupted"
    assert (report.released, report.done, report.failed, report.retried) == (1, 0, 0, 0)
    after = store.get(job.id)
    assert after is not None and after.state is JobState.PENDING and after.attempts == 0
    verdict = validate_events(tracer.events, end=store.status(0).counts, complete=True)
    assert verdict.code == 0, verdict.message


def test_a_first_stop_lets_the_job_finish_and_a_second_gives_it_back(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "jobs.db")
    store.enqueue(JobSpec("q", handler="h"))
    store.enqueue(JobSpec("q", handler="h"))
    seen: list[str] = []

    def h(payload: Any) -> Any:
        seen.append("run")
        worker.stop()  # the first request: this job finishes, no other is claimed
        return 1

    worker = Worker(store, {"h": h}, WorkerOptions(system_memory=False))
    report = worker.run()
    assert (report.done, report.released, seen) == (1, 0, ["run"])
    assert store.status(0).counts["pending"] == 1
    stopped = Worker(store, {"h": h}, WorkerOptions(system_memory=False))
    stopped.stop()
    stopped.stop(now=True)  # outside a handler there is nothing to interrupt: no GiveBack here
    assert stopped.stop_requested
    store.close()


def test_a_job_claimed_while_the_worker_was_stopping_is_released_unstarted(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "jobs.db")
    job = store.enqueue(JobSpec("q", handler="h"))
    worker = Worker(store, {"h": lambda p: 1}, WorkerOptions(system_memory=False))
    real_claim = store.claim

    def claim_then_told(*args: Any) -> Any:
        outcome = real_claim(*args)
        worker.stop_requested = True  # SIGTERM lands while the claim's transaction runs
        return outcome

    store.claim = claim_then_told  # type: ignore[method-assign,assignment]
    report = worker.run()
    assert (report.released, report.done, report.stopped) == (1, 0, "interrupted")
    after = store.get(job.id)
    assert after is not None and after.state is JobState.PENDING and after.attempts == 0
    store.close()


@pytest.mark.timeout(40)
@pytest.mark.usefixtures("in_root")
def test_the_pools_shutdown_timeout_gives_running_jobs_back_unspent(tmp_path: Path) -> None:
    db, log = tmp_path / "jobs.db", tmp_path / "runs.log"
    with SqliteStore(db) as store:
        for n in range(2):
            store.enqueue(JobSpec("q", {"n": n, "log": str(log), "sleep": 60}, handler="work"))
    pool = controller(db, None, PoolPolicy(2, 2, idle_grace=60), lease=120.0, shutdown_timeout=0.3)
    with running(pool) as thread:
        wait_for(lambda: counts(db).get("processing", 0) == 2, 20, "both jobs to be running")
    assert not thread.is_alive()
    report = pool.report
    assert (report.told_to_give_back, report.killed, report.lost, report.released) == (2, 0, 0, 2)
    with SqliteStore(db) as store:
        jobs = [store.get(n) for n in (1, 2)]
    assert all(j is not None and j.state is JobState.PENDING and j.attempts == 0 for j in jobs)
    assert all(j is not None and (j.reason or "").startswith("released: ") for j in jobs)
