"""SqliteStore's fast claim and finish against the core's general path they stand in for.

The fast paths (``SqliteStore.claim``/``finish``) admit the common claim in one read and one write
and finish a job this store started without reading it back; everything else goes to the core's
steps. These tests run the same operations on a store with and without them and require the same
results, the same rows and the same trace; and check the pieces the fast paths rely on.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from model_checks.designs.admission.reference_mutants import REFERENCE_MUTANTS
from reference.jobs import Budgets, Conditions, JobSpec, JobState
from reference.jobs.admission import ADMIT, Candidate, Usage
from reference.jobs.core import PROFILE_SAMPLES, StoreCore
from reference.jobs.model import Job
from reference.jobs.rows import frozen, lease
from reference.jobs.sqlite_rows import JOB_COLUMNS, LEASED, PLAIN, RARE, job_of, plain_job, started_job
from reference.jobs.sqlite_store import SqliteStore
from reference.jobs.store import Claim, ClaimOutcome, StaleLease
from reference.jobs.tracing import RecordingTracer
from tests.jobs.helpers import Clock

if TYPE_CHECKING:
    from reference.jobs.pg_store import PgStore

OPEN = Conditions(retry_after=0.0)


def _store(path: Path, clock: Clock, *, fast: bool) -> tuple[SqliteStore, RecordingTracer]:
    tracer = RecordingTracer()
    store = SqliteStore(path, clock=clock, tracer=tracer, process="t")
    assert store._fast  # a plain SqliteStore takes the fast paths
    store._fast = fast
    return store, tracer


def _row(job: Job | None) -> dict[str, Any] | None:
    """A job without its lease token (random per claim)."""
    return None if job is None else {**job.as_json(), "lease_token": job.lease_token is not None}


def _outcome(outcome: ClaimOutcome) -> dict[str, Any]:
    claim = outcome.claim
    return {
        "job": None if claim is None else _row(claim.job),
        "lease_until": None if claim is None else claim.lease_until,
        "profile": None if claim is None else claim.profile,
        "decision": None if claim is None else claim.decision,
        "denied": outcome.denied,
        "failed": outcome.failed,
        "expired": outcome.expired,
    }


def _script(seed: int, steps: int) -> list[tuple[str, Any]]:
    """A random run: enqueues of varied jobs, budget changes, claims under varied conditions,
    finishes, failures, heartbeats and clock jumps that let leases lapse."""
    rng = random.Random(seed)
    ops: list[tuple[str, Any]] = []
    for _ in range(steps):
        kind = rng.choice(
            ["enqueue"] * 4 + ["claim"] * 5 + ["finish"] * 3 + ["fail", "heartbeat", "budgets", "tick"]
        )
        if kind == "enqueue":
            group = rng.choice([None, "g", "h"])
            ops.append(
                (
                    kind,
                    JobSpec(
                        rng.choice(["q", "r"]),
                        {"n": rng.randrange(100)},
                        handler=rng.choice(["a", "b"]),
                        priority=rng.randrange(3),
                        max_attempts=rng.choice([1, 2, 3]),
                        backoff=rng.choice([0.0, 1.0]),
                        concurrency_group=group,
                        concurrency_limit=None if group is None else rng.choice([None, 1, 2]),
                        cost_units=rng.randrange(4),
                    ),
                )
            )
        elif kind == "claim":
            conditions = Conditions(
                enabled=rng.random() < 0.9,
                worker_limit=rng.choice([None, 1 << 30, 100 << 20]),
                time_left=rng.choice([None, 5.0, 50.0]),
                lease=rng.choice([10.0, 300.0]),
                retry_after=rng.choice([0.0, 2.0]),
            )
            ops.append((kind, (rng.choice(["w1", "w2"]), conditions, rng.choice([None, ["q"], ["q", "r"]]))))
        elif kind in ("finish", "fail", "heartbeat"):
            ops.append((kind, (rng.randrange(1 << 16), rng.choice([1.0, 20.0]), rng.choice([0, 80 << 20]))))
        elif kind == "budgets":
            ops.append(
                (
                    kind,
                    Budgets({"q": rng.randrange(2, 8), "r": rng.randrange(2, 8)}, {"g": rng.randrange(2, 6)}),
                )
            )
        else:
            ops.append((kind, rng.choice([1.0, 5.0, 20.0, 400.0])))
    # and at the end a lease that lapses, whatever came before
    claim = ("claim", ("w1", Conditions(lease=10.0, retry_after=0.0), None))
    ops += [("enqueue", JobSpec("r", priority=9)), claim, ("tick", 1000.0), claim]
    return ops


def _sqlite_profiles(store: StoreCore) -> dict[str, Any]:
    assert isinstance(store, SqliteStore)
    return dict(store._db.execute("SELECT handler, samples FROM profiles ORDER BY handler").fetchall())


def _play(
    store: StoreCore,
    clock: Clock,
    ops: list[tuple[str, Any]],
    profiles: Callable[[StoreCore], dict[str, Any]] = _sqlite_profiles,
) -> list[Any]:
    """Run ``ops`` on ``store``: everything it answered, then its rows, profiles and status."""
    held: list[tuple[int, str]] = []  # (job, token) claims not yet finished, oldest first
    seen: list[Any] = []
    for kind, arg in ops:
        try:
            if kind == "enqueue":
                seen.append(_row(store.enqueue(arg)))
            elif kind == "claim":
                outcome = store.claim(*arg)
                if outcome.claim is not None:
                    held.append((outcome.claim.job.id, outcome.claim.token))
                seen.append(_outcome(outcome))
            elif kind in ("finish", "fail", "heartbeat") and held:
                pick, duration, peak = arg
                job_id, token = held.pop(pick % len(held)) if kind != "heartbeat" else held[pick % len(held)]
                if kind == "finish":
                    seen.append(_row(store.finish(job_id, token, {"done": job_id}, duration, peak)))
                elif kind == "fail":
                    seen.append(_row(store.fail(job_id, token, "boom", duration, peak)))
                else:
                    seen.append(store.heartbeat(job_id, token, 30.0))
            elif kind == "budgets":
                store.set_budgets(arg)
            elif kind == "tick":
                clock.advance(arg)
        except StaleLease as lapsed:
            seen.append(str(lapsed))
        except ValueError as refused:  # BudgetRefusal: a cost above a budget
            seen.append(str(refused))
    rows = [_row(store.get(i)) for i in range(1, 200)]
    return [seen, rows, profiles(store), store.status(50).as_json()]


def assert_fast_paths_match(
    seed: int,
    open_store: Callable[[bool, Clock, RecordingTracer], SqliteStore | PgStore],
    profiles: Callable[[StoreCore], dict[str, Any]] = _sqlite_profiles,
) -> None:
    """Plays seed's script on a store with its fast paths (``open_store(True, ...)``) and on one
    without: the same answers, rows, profiles, status and trace, from a run that went everywhere."""
    ops = _script(seed, 220)
    runs = []
    for fast in (True, False):
        clock = Clock()
        tracer = RecordingTracer()
        with open_store(fast, clock, tracer) as store:
            assert store._fast  # a plain store takes the fast paths
            store._fast = fast
            runs.append((_play(store, clock, ops, profiles), tracer.events))
    (fast_run, fast_trace), (general_run, general_trace) = runs
    assert fast_run == general_run
    assert fast_trace == general_trace
    kinds = {e["event"] for e in fast_trace}
    assert {"admit", "deny", "finish", "retry", "lease_expire"} <= kinds, kinds


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", range(6))
def test_the_fast_paths_do_what_the_general_path_does(seed: int, tmp_path: Path) -> None:
    def open_store(fast: bool, clock: Clock, tracer: RecordingTracer) -> SqliteStore:
        return SqliteStore(tmp_path / f"{fast}.db", clock=clock, tracer=tracer, process="t")

    assert_fast_paths_match(seed, open_store)


def test_a_finish_returns_the_job_as_stored(tmp_path: Path) -> None:
    clock = Clock()
    store, _ = _store(tmp_path / "jobs.db", clock, fast=True)
    with store:
        job = store.enqueue(JobSpec("q", {"x": [1, 2]}, max_attempts=3, backoff=0.0, concurrency_group="g"))
        first = store.claim("w", OPEN).claim
        assert first is not None
        store.fail(job.id, first.token, "boom", 1.0, 0)  # a retry: reason and attempts now set
        second = store.claim("w", OPEN).claim
        assert second is not None and second.job == store.get(job.id)
        clock.advance(5.0)
        store.heartbeat(job.id, second.token, 60.0)  # the one change a leased row may see
        done = store.finish(job.id, second.token, {"ok": [1.5, None]}, 2.0, 1 << 20)
        assert done == store.get(job.id)
        assert done.state is JobState.DONE and done.attempts == 2 and done.reason == "boom"
        assert done.result == {"ok": [1.5, None]} and done.lease_until is None


def test_a_lapsed_lease_is_stale_for_the_fast_finish(tmp_path: Path) -> None:
    clock = Clock()
    store, _ = _store(tmp_path / "jobs.db", clock, fast=True)
    with store, SqliteStore(tmp_path / "jobs.db", clock=clock) as other:
        job = store.enqueue(JobSpec("q", backoff=0.0))
        mine = store.claim("w1", Conditions(lease=10.0)).claim
        assert mine is not None
        clock.advance(11.0)
        theirs = other.claim("w2", OPEN).claim  # reaps the lease, then claims the job again
        assert theirs is not None and theirs.job.id == job.id
        with pytest.raises(StaleLease):
            store.finish(job.id, mine.token, None, 1.0, 0)
        after = store.get(job.id)
        assert after is not None and after.state is JobState.PROCESSING and after.lease_token == theirs.token
        assert other.finish(job.id, theirs.token, None, 1.0, 0).state is JobState.DONE


@pytest.mark.parametrize("name", list(REFERENCE_MUTANTS))
def test_a_store_whose_steps_were_changed_takes_the_general_path(name: str, tmp_path: Path) -> None:
    mutant: Any = REFERENCE_MUTANTS[name].build(SqliteStore)  # a SqliteStore subclass
    store = mutant(tmp_path / "jobs.db")
    assert isinstance(store, SqliteStore) and not store._fast
    store.close()

    class Renamed(SqliteStore):  # a subclass that changes no step keeps them
        pass

    with Renamed(tmp_path / "jobs.db") as plain:
        assert plain._fast


@pytest.mark.parametrize(
    "stored", [None, 0, 3, PROFILE_SAMPLES - 1, PROFILE_SAMPLES, PROFILE_SAMPLES + 1, 12]
)
def test_a_sample_is_appended_keeping_the_last_ones(stored: int | None, tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "jobs.db") as store:
        before = None if stored is None else [[float(i), float(i * 10)] for i in range(stored)]
        with store._transaction():
            if before is not None:
                store._save_samples("h", before)
            store._add_sample("h", [0.25, 1048576.0], PROFILE_SAMPLES)
            after = store._samples("h")
            # the core's own read-modify-write, for comparison
            StoreCore._add_sample(store, "k", [0.25, 1048576.0], PROFILE_SAMPLES) if before is None else None
        expected = ([] if before is None else before) + [[0.25, 1048576.0]]
        assert after == expected[-PROFILE_SAMPLES:]
        if before is None:
            assert store._samples("k") == after


@pytest.mark.parametrize(
    ("duration", "peak", "error"),
    [
        (math.nan, 0, ValueError),
        (math.inf, 0, ValueError),
        (-1.0, 0, ValueError),
        (1.0, -5, ValueError),
        (True, 0, TypeError),
        ("1", 0, TypeError),
    ],
)
def test_a_bad_measurement_changes_nothing(
    duration: Any, peak: Any, error: type[Exception], tmp_path: Path
) -> None:
    with SqliteStore(tmp_path / "jobs.db") as store:
        job = store.enqueue(JobSpec("q"))
        claim = store.claim("w", OPEN).claim
        assert claim is not None
        with pytest.raises(error, match=r"duration|peak_memory"):
            store.finish(job.id, claim.token, None, duration, peak)
        with pytest.raises(error, match=r"duration|peak_memory"):
            store.fail(job.id, claim.token, "boom", duration, peak)
        assert store.get(job.id) == claim.job  # still processing under the same lease
        assert store._samples(job.handler) == []
        done = store.finish(job.id, claim.token, None, 1.0, 0)  # the fast path still knows it
        assert done == store.get(job.id) and done.state is JobState.DONE


def test_the_profile_decoded_once_is_reused_until_it_changes(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "jobs.db") as store:
        for _ in range(3):
            store.enqueue(JobSpec("q", handler="h"))
        first = store.claim("w", OPEN).claim
        assert first is not None and first.profile is None
        store.finish(first.job.id, first.token, None, 2.0, 5)
        second = store.claim("w", OPEN).claim
        assert second is not None and second.profile is not None and second.profile.duration == 2.0
        store.finish(second.job.id, second.token, None, 3.0, 5)
        third = store.claim("w", OPEN).claim
        assert third is not None and third.profile is not None
        assert (third.profile.duration, third.profile.samples) == (3.0, 2)
        assert json.loads(store._db.execute("SELECT samples FROM profiles").fetchone()[0]) == [
            [2.0, 5.0],
            [3.0, 5.0],
        ]
        assert dataclasses.asdict(third.profile) == {"duration": 3.0, "peak_memory": 5, "samples": 2}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", range(3))
def test_the_untraced_fast_paths_do_what_the_general_path_does(seed: int, tmp_path: Path) -> None:
    """Without a tracer the fast paths run their transaction inline (not through ``_run``)."""
    ops = _script(seed, 220)
    runs = []
    for fast in (True, False):
        clock = Clock()
        with SqliteStore(tmp_path / f"{fast}.db", clock=clock, process="t") as store:
            assert store._fast
            store._fast = fast
            runs.append(_play(store, clock, ops))
    assert runs[0] == runs[1]


def test_a_step_that_raises_inside_the_inline_transaction_rolls_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SqliteStore(tmp_path / "jobs.db") as store:
        job = store.enqueue(JobSpec("q"))

        def broken(*_: object) -> None:
            store._cursor.execute("UPDATE jobs SET state = 'failed'")  # a change the rollback undoes
            raise RuntimeError("broken step")

        monkeypatch.setattr(store, "_claim_first", broken)
        with pytest.raises(RuntimeError, match="broken step"):
            store.claim("w", OPEN)
        assert not store._db.in_transaction
        monkeypatch.undo()
        claim = store.claim("w", OPEN).claim
        assert claim is not None and claim.job.id == job.id
        monkeypatch.setattr(store, "_finish_started", broken)
        with pytest.raises(RuntimeError, match="broken step"):
            store.finish(job.id, claim.token, None, 1.0, 0)
        assert not store._db.in_transaction
        assert store.get(job.id) == claim.job  # still processing: the failed finish changed nothing


def test_an_error_after_sqlite_rolled_back_by_itself_is_the_error_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A disk-full or I/O error ends the transaction inside SQLite; a ROLLBACK then would raise
    # "no transaction is active" and hide the error that matters.
    with SqliteStore(tmp_path / "jobs.db") as store:
        store.enqueue(JobSpec("q"))

        def fails_after_sqlite_rolled_back(*_: object) -> None:
            store._cursor.execute("ROLLBACK")  # as SQLite does on such an error
            raise sqlite3.OperationalError("database or disk is full")

        monkeypatch.setattr(store, "_claim_first", fails_after_sqlite_rolled_back)
        with pytest.raises(sqlite3.OperationalError, match="disk is full"):
            store.claim("w", OPEN)
        assert not store._db.in_transaction
        monkeypatch.undo()
        assert store.claim("w", OPEN).claim is not None  # the store goes on


def _fields(instance: object) -> dict[str, Any]:
    return {f.name: getattr(instance, f.name) for f in dataclasses.fields(instance)}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("cls", "values"),
    [
        (Candidate, {"queue": "q", "concurrency_group": "g", "concurrency_limit": 3, "cost_units": 2}),
        (Usage, {"group_running": 1, "queue_cost": 4, "group_cost": 5}),
        (Claim, {"job": None, "token": "t", "lease_until": 2.5, "profile": None, "decision": ADMIT}),
        (ClaimOutcome, {"claim": None, "denied": [], "failed": [(1, "x")], "expired": [3]}),
    ],
)
def test_frozen_builds_what_the_constructor_builds(cls: type, values: dict[str, Any]) -> None:
    built: Any = frozen(cls, dict(values))
    constructed = cls(**values)
    assert type(built) is cls and built == constructed and repr(built) == repr(constructed)
    assert _fields(built) == values
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(built, next(iter(values)), "other")
    # what the comparison would catch: a field left out is missing, or is its class default
    partial = frozen(cls, {k: v for k, v in list(values.items())[:-1]})
    try:
        differs = _fields(partial) != values
    except AttributeError:
        differs = True
    assert differs


@pytest.mark.parametrize(
    ("payload", "result"), [("null", None), ('{"n": [1, 2.5]}', None), ("[]", '{"r": 1}')]
)
def test_the_started_job_is_the_row_with_its_lease(payload: str, result: str | None) -> None:
    row = [7, "q", "h", payload, 2, "pending", 1, 3, 0.5, "g", 4, 2, 10.0, 9.0]
    row += [None, None, None, 2, "queue_budget: full", "lease expired", result, None, None, None]
    assert len(row) == len(dataclasses.fields(Job))
    expected = job_of(row, lease("w", "tok", 2, 40.0))
    got = started_job(row, "w", "tok", 2, 40.0)
    assert got == expected and _fields(got) == _fields(expected)
    assert got.state is JobState.PROCESSING and got.payload == (
        None if payload == "null" else json.loads(payload)
    )
    # the fast read's columns of the same row, when its rare columns are all NULL
    plain_row = dict(zip([f.name for f in dataclasses.fields(Job)], row, strict=True))
    plain_row.update(dict.fromkeys(RARE))
    plain = plain_job([plain_row[c] for c in PLAIN] + [1], "w", "tok", 2, 40.0)
    expected = started_job(list(plain_row.values()), "w", "tok", 2, 40.0)
    assert plain == expected and _fields(plain) == _fields(expected)
    assert list(plain.__dict__) == [f.name for f in dataclasses.fields(Job)]  # as __init__ orders them


@pytest.mark.parametrize("cls", [Job, Candidate, Usage, Claim, ClaimOutcome])
def test_the_classes_built_by_frozen_meet_its_preconditions(cls: type) -> None:
    # ``frozen`` skips ``__init__``: a ``__post_init__`` would never run, and ``__slots__`` leave
    # no ``__dict__`` to hold the values; a class that gains either must stop using it.
    params = getattr(cls, "__dataclass_params__", None)
    assert params is not None and params.frozen, f"{cls.__name__} is not a frozen dataclass"
    assert not hasattr(cls, "__post_init__"), f"{cls.__name__} has a __post_init__"
    assert "__slots__" not in cls.__dict__, f"{cls.__name__} has __slots__"


def test_the_fast_read_columns_with_the_overwritten_and_the_rare_ones_are_the_job() -> None:
    columns = (*PLAIN, *RARE, *LEASED)
    assert sorted(columns) == sorted(f.name for f in dataclasses.fields(Job))
    assert len(set(columns)) == len(columns)


@pytest.mark.parametrize(
    ("column", "value"),
    [
        (None, None),
        ("last_denial", "queue_budget: full"),
        ("reason", "boom"),
        ("result", '{"r": 1}'),
        ("workflow_id", 7),
        ("step", 0),
        ("item_index", 2),
    ],
)
def test_the_fast_claim_reads_the_rare_columns_only_when_one_is_set(
    column: str | None, value: object, tmp_path: Path
) -> None:
    with SqliteStore(tmp_path / "jobs.db") as store:
        job = store.enqueue(JobSpec("q", {"n": 1}, concurrency_group="g", concurrency_limit=2))
        if column is not None:  # as a denial, a failed attempt or a workflow would have left it
            store._db.execute(f"UPDATE jobs SET {column} = ? WHERE id = ?", (value, job.id))
        store.claim("w", OPEN, ["other"])  # fills the budgets' cache: the next claim is the fast one
        statements: list[str] = []
        store._db.set_trace_callback(statements.append)
        claim = store.claim("w", OPEN).claim
        store._db.set_trace_callback(None)
        assert claim is not None and claim.job == store.get(job.id)
        assert claim.job.state is JobState.PROCESSING and claim.job.payload == {"n": 1}
        whole = [s for s in statements if s.startswith(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id =")]
        assert len(whole) == (column is not None), statements
        # BEGIN, the read, the lease, COMMIT (and the whole row): not the general claim's statements
        assert len(statements) == 4 + len(whole), statements
