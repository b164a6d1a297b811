"""PgStore's one-statement claim and finish (``pg_fast``) against the core's general path.

The server-side functions admit the common claim and finish a job this store started in one
statement each; everything else goes to the core's steps. Here: the same random runs with and
without them give the same results, rows, profiles and trace; the functions wait for the key
locks (a copy without them does not); a function that admitted what ``decide`` denies is caught;
and a subclass that changes a step takes the general path.
"""

from __future__ import annotations

from typing import Any

import pytest

from reference.jobs import Budgets, Conditions, JobSpec, JobState, pg_fast, pg_rows
from reference.jobs import pg_store as pg_store_module
from reference.jobs.admission import ProfileBounds
from reference.jobs.core import StoreCore
from reference.jobs.pg_store import PgStore
from reference.jobs.store import StaleLease
from reference.jobs.tracing import RecordingTracer
from tests.jobs.helpers import Clock
from tests.jobs.test_fast_claim import assert_fast_paths_match
from tests.jobs.test_pg_store import NoKeyLocks, _fresh, _waits_for_key

OPEN = Conditions(retry_after=0.0, lease=60.0)


def _pg_profiles(store: StoreCore) -> dict[str, Any]:
    assert isinstance(store, PgStore)

    def read() -> dict[str, Any]:
        found = store._db.execute("SELECT handler, samples FROM profiles ORDER BY handler").fetchall()
        return {row["handler"]: row["samples"] for row in found}

    return store._run(read)  # type: ignore[no-any-return]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("seed", range(3))
def test_the_functions_do_what_the_general_path_does(seed: int, pg_url: str) -> None:
    def open_store(fast: bool, clock: Clock, tracer: RecordingTracer) -> PgStore:
        return PgStore(_fresh(pg_url, 10 * seed + int(fast)), clock=clock, tracer=tracer, process="t")

    assert_fast_paths_match(seed, open_store, _pg_profiles)


def test_a_finish_returns_the_job_as_stored_and_a_lapsed_lease_is_stale(pg_url: str) -> None:
    clock = Clock()
    with PgStore(pg_url, clock=clock) as store, PgStore(pg_url, clock=clock) as other:
        job = store.enqueue(JobSpec("q", {"x": [1, 2]}, backoff=0.0, concurrency_group="g"))
        first = store.claim("w", OPEN).claim
        assert first is not None and first.job == store.get(job.id) and first.token in store._started
        store.fail(job.id, first.token, "boom", 1.0, 0)
        second = store.claim("w", OPEN).claim
        assert second is not None
        done = store.finish(job.id, second.token, {"ok": [1.5, None]}, 2.0, 1 << 20)
        assert done == store.get(job.id)
        assert done.state is JobState.DONE and done.attempts == 2 and done.result == {"ok": [1.5, None]}
        late = store.enqueue(JobSpec("q", backoff=0.0))
        mine = store.claim("w1", Conditions(lease=10.0)).claim
        assert mine is not None and mine.job.id == late.id
        clock.advance(11.0)
        theirs = other.claim("w2", OPEN).claim  # reaps the lease (general path), claims it again
        assert theirs is not None and theirs.job.id == late.id
        with pytest.raises(StaleLease):
            store.finish(late.id, mine.token, None, 1.0, 0)
        after = store.get(late.id)
        assert after is not None and after.state is JobState.PROCESSING and after.lease_token == theirs.token


class LocklessFunctions(PgStore):
    """The mutant: the same functions without the key locks (check and claim not serialised)."""

    def __init__(self, dsn: str, **extra: Any) -> None:
        super().__init__(dsn, **extra)
        names = {pg_fast.CLAIM_FUNCTION: "mutant_claim", pg_fast.FINISH_FUNCTION: "mutant_finish"}
        with self._pool.connection() as conn:
            for sql in (pg_fast.CLAIM_SQL, pg_fast.FINISH_SQL):
                for real, fake in names.items():
                    sql = sql.replace(real, fake)
                kept = [line for line in sql.splitlines() if "hashtext(" not in line]  # the key locks
                conn.execute("\n".join(kept))
        self.call_claim = pg_fast.CALL_CLAIM.replace(pg_fast.CLAIM_FUNCTION, "mutant_claim")
        self.call_finish = pg_fast.CALL_FINISH.replace(pg_fast.FINISH_FUNCTION, "mutant_finish")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("store_class", [PgStore, LocklessFunctions])
def test_the_functions_wait_for_the_key_locks(pg_url: str, store_class: type[PgStore]) -> None:
    with store_class(pg_url) as store:
        assert store._fast
        store.set_budgets(Budgets({"q": 5}))
        store.enqueue(JobSpec("q", concurrency_group="g"))
        claims: list[Any] = []
        queue_wait = _waits_for_key(pg_url, "queue:q", lambda: claims.append(store.claim("w", OPEN).claim))
        [claim] = claims
        assert claim is not None and claim.token in store._started  # the function admitted it
        finish_wait = _waits_for_key(
            pg_url, "group:g", lambda: store.finish(claim.job.id, claim.token, None, 0.0, 0)
        )
    expected = store_class is PgStore
    assert (queue_wait, finish_wait) == (expected, expected)


def test_an_admission_the_function_got_wrong_is_raised(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with PgStore(pg_url) as store:
        store.enqueue(JobSpec("q"))
        claim = store.claim("w", OPEN).claim
        assert claim is not None
        store.finish(claim.job.id, claim.token, None, 100.0, 0)  # the handler now takes 100 s
        store.enqueue(JobSpec("q"))
        # Bounds that forget the lease: the function admits what check 5 denies.
        monkeypatch.setattr(pg_store_module, "profile_bounds", lambda c: ProfileBounds(False, None, None))
        with pytest.raises(RuntimeError, match=r"admitted job 2 that admission denies .handler_profile"):
            store.claim("w", OPEN)
        monkeypatch.undo()
        store.enqueue(JobSpec("q"))
        denied = store.claim("w", Conditions(retry_after=5.0, lease=60.0))  # the real bounds: denied
        assert denied.claim is None and [d.label for _, d in denied.denied] == ["handler_profile"]


def test_a_store_whose_steps_were_changed_takes_the_general_path(pg_url: str) -> None:
    with NoKeyLocks(pg_url) as mutant:
        assert not mutant._fast


def test_a_row_that_is_not_a_jobs_row_is_refused_not_made_a_job(pg_url: str) -> None:
    with PgStore(pg_url) as store:
        job = store.enqueue(JobSpec("q", {"n": 1}))
        with store._transaction():
            row = store._db.execute("SELECT * FROM jobs WHERE id = %s", (job.id,)).fetchone()
    assert row is not None and pg_rows.job_of(row) == job  # the codec builds it without __init__
    with pytest.raises(ValueError, match="not a Job's"):
        pg_rows.job_of({**row, "extra": 1})  # a table of another version: refused, naming it
    with pytest.raises(ValueError, match="not a Job's"):
        pg_rows.job_of({k: v for k, v in row.items() if k != "worker"})
