"""Session 48: the findings of outside review 15 of `lanecheck jobs` (F01..F14), each pinned by a test."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from model_checks.cli import app
from reference.jobs import Conditions, JobSpec, JobState, Worker, WorkerOptions
from reference.jobs.budgets import Budgets
from reference.jobs.core import PROFILE_PROBE_AFTER, StoreCore
from reference.jobs.pool import PoolController, PoolOptions
from reference.jobs.pool_policy import PoolPolicy
from reference.jobs.sqlite_store import SqliteStore
from tests.jobs.conftest import STORE_KINDS, StoreMaker
from tests.jobs.helpers import Clock
from tests.jobs.test_pool import counts, in_root, running, wait_for  # noqa: F401 (in_root: a fixture)

Opener = Callable[[], StoreCore]


@pytest.fixture(params=("sqlite", "postgresql"))
def open_shared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens another store on one database each call (two processes' view of one store); the
    caller closes it, in the thread that opened it (SQLite's rule)."""
    if request.param == "postgresql":
        from reference.jobs.pg_store import PgStore

        url: str = request.getfixturevalue("pg_url")

        def make() -> StoreCore:
            return PgStore(url, process="t")
    else:

        def make() -> StoreCore:
            return SqliteStore(tmp_path / "jobs.db", process="t")

    yield make


def _slow_reads(store: StoreCore, pause: float) -> None:
    """Widen the gap between reading the budgets and writing them back, as a loaded machine does."""
    read = store._read_budgets

    def slow() -> Budgets:
        budgets = read()
        time.sleep(pause)
        return budgets

    store._read_budgets = slow  # type: ignore[method-assign]


@pytest.mark.timeout(60)
def test_f01_two_budget_changes_at_once_both_hold(open_shared: Opener) -> None:
    """Two `jobs budgets --queue/--group` at once: each merges in one transaction, so both hold."""
    with open_shared() as checker:
        _check_merges(open_shared, checker)


def _change(
    open_shared: Opener,
    start: threading.Barrier,
    said: dict[str, Budgets],
    queues: dict[str, int],
    groups: dict[str, int],
) -> None:
    with open_shared() as store:  # its own connection, in its own thread (SQLite's rule)
        _slow_reads(store, 0.2)
        start.wait()
        said[next(iter(queues or groups))] = store.merge_budgets(queues, groups)


def _check_merges(open_shared: Opener, checker: StoreCore) -> None:
    for _ in range(3):
        checker.set_budgets(Budgets())
        start = threading.Barrier(2)
        said: dict[str, Budgets] = {}
        threads = [
            threading.Thread(target=_change, args=(open_shared, start, said, {"a": 1}, {})),
            threading.Thread(target=_change, args=(open_shared, start, said, {}, {"g": 2})),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert set(said) == {"a", "g"}
        assert checker.budgets() == Budgets({"a": 1}, {"g": 2}), said


class _NoStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str for you")


def _surrogate(payload: object) -> None:
    raise RuntimeError("cannot open " + b"caf\xe9.txt".decode("utf-8", "surrogateescape"))


def _no_str(payload: object) -> None:
    raise _NoStr()


def _nul(payload: object) -> None:
    raise ValueError("bad \x00 byte")


@pytest.fixture(params=STORE_KINDS)
def any_store(request: pytest.FixtureRequest, store_maker: StoreMaker) -> StoreCore:
    return store_maker(str(request.param), Clock(), None)


@pytest.mark.timeout(60)
def test_f02_a_handler_error_that_cannot_be_stored_as_is_fails_the_job_with_it(any_store: StoreCore) -> None:
    handlers = {"surrogate": _surrogate, "badstr": _no_str, "nul": _nul}
    ids = {name: any_store.enqueue(JobSpec("t", handler=name, max_attempts=1)).id for name in handlers}
    options = WorkerOptions(name="w", until_done=True, poll=0.01, system_memory=False)
    report = Worker(any_store, handlers, options).run()
    assert report.failed == 3 and report.stopped == "done"
    reasons = {name: any_store.get(job_id) for name, job_id in ids.items()}
    assert all(job is not None and job.state is JobState.FAILED for job in reasons.values())
    text = {name: (job.reason if job is not None else None) or "" for name, job in reasons.items()}
    assert "RuntimeError: cannot open caf\\udce9.txt" in text["surrogate"]
    assert "_NoStr: <str() of the exception raised RuntimeError>" in text["badstr"]
    assert "ValueError: bad \\x00 byte" in text["nul"]


def _exits(payload: object) -> None:
    sys.exit(3)


def _interrupted(payload: object) -> None:
    raise KeyboardInterrupt


def _ok(payload: object) -> str:
    return "ok"


@pytest.mark.timeout(60)
def test_f06_a_handlers_sys_exit_fails_its_job_and_the_worker_goes_on(any_store: StoreCore) -> None:
    exits = any_store.enqueue(JobSpec("t", handler="exits", max_attempts=1))
    ok = any_store.enqueue(JobSpec("t", handler="ok"))
    options = WorkerOptions(name="w", until_done=True, poll=0.01, system_memory=False)
    report = Worker(any_store, {"exits": _exits, "ok": _ok}, options).run()
    assert (report.failed, report.done, report.stopped) == (1, 1, "done")
    failed = any_store.get(exits.id)
    assert failed is not None and failed.state is JobState.FAILED
    assert failed.reason == "attempt 1 of 1 failed: SystemExit: 3"
    done = any_store.get(ok.id)
    assert done is not None and done.state is JobState.DONE


@pytest.mark.timeout(60)
def test_f06_a_keyboard_interrupt_in_a_handler_gives_the_job_back_and_stops(any_store: StoreCore) -> None:
    job = any_store.enqueue(JobSpec("t", handler="interrupted"))
    options = WorkerOptions(name="w", until_done=True, poll=0.01, system_memory=False)
    report = Worker(any_store, {"interrupted": _interrupted}, options).run()
    assert (report.released, report.stopped) == (1, "interrupted")
    back = any_store.get(job.id)
    assert back is not None and back.state is JobState.PENDING and back.attempts == 0
    assert back.lease_token is None and "KeyboardInterrupt" in (back.reason or "")


def _sleeps(payload: dict[str, str]) -> str:
    Path(payload["marker"]).touch()
    time.sleep(60)
    return "slept"


def _mojibake(payload: object) -> int:
    # Into the pipe the pool reads the worker's events from: 16 KiB of bytes UTF-8 cannot decode.
    sys.stdout.flush()
    sys.stdout.buffer.write(b"\xff\xfe not utf-8\n" * 1024)
    sys.stdout.buffer.flush()
    return 1


HANDLERS = {"sleeps": _sleeps, "mojibake": _mojibake}
"""For the worker processes these tests start (``--handlers tests.jobs.test_review15``)."""


def _cli_worker(url: str, *extra: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-c", "from model_checks.cli import app; app()", "jobs", "worker"]
    argv += ["--handlers", "tests.jobs.test_review15", "--store", url, "--poll", "0.05", *extra]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(path: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


@pytest.mark.timeout(60)
def test_f06_ctrl_c_twice_on_a_foreground_worker_gives_its_job_back(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    marker = tmp_path / "started"
    with SqliteStore(tmp_path / "jobs.db", process="t") as store:
        job = store.enqueue(JobSpec("t", {"marker": str(marker)}, handler="sleeps"))
    proc = _cli_worker(url, "--until-done")
    try:
        _wait_for(marker, 30)
        proc.send_signal(signal.SIGINT)  # the first lets the job in hand finish ...
        time.sleep(0.3)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)  # ... the second gives it back now
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "stopped: interrupted" in out
    with SqliteStore(tmp_path / "jobs.db", process="t") as store:
        back = store.get(job.id)
    assert back is not None and back.state is JobState.PENDING and back.attempts == 0, back


@pytest.mark.timeout(60)
def test_f04_until_done_counts_only_the_workers_queues(any_store: StoreCore) -> None:
    mine = any_store.enqueue(JobSpec("a", handler="ok"))
    any_store.enqueue(JobSpec("b", handler="ok"))  # pending for good: nobody here claims from b
    # time_budget: without the fix the worker waits for b's job until it runs out (not forever)
    options = WorkerOptions(
        name="w", queues=["a"], until_done=True, poll=0.01, system_memory=False, time_budget=5.0
    )
    report = Worker(any_store, {"ok": _ok}, options).run()
    assert (report.done, report.stopped) == (1, "done")
    done = any_store.get(mine.id)
    assert done is not None and done.state is JobState.DONE


def test_f04_unfinished_counts_pending_due_or_not_and_processing_per_queue(any_store: StoreCore) -> None:
    any_store.enqueue(JobSpec("a"))
    any_store.enqueue(JobSpec("a", delay=3600))  # not due yet: still unfinished
    any_store.enqueue(JobSpec("b"))
    assert any_store.claim("w", Conditions(), ["b"]).claim is not None  # processing: unfinished
    assert (any_store.unfinished(["a"]), any_store.unfinished(["b"]), any_store.unfinished()) == (2, 1, 3)
    assert any_store.unfinished(["c"]) == 0


@pytest.mark.timeout(60)
def test_f05_one_run_longer_than_the_lease_does_not_starve_its_handler(store_maker: StoreMaker) -> None:
    for kind in STORE_KINDS:
        clock = Clock()
        store = store_maker(kind, clock, None)
        conditions = Conditions(lease=3.0, retry_after=1.0)
        store.enqueue(JobSpec("t", handler="h"))
        slow = store.claim("w", conditions).claim
        assert slow is not None
        store.finish(slow.job.id, slow.token, None, 4.0, 0)  # outlasted its lease, nobody reaped it
        later = store.enqueue(JobSpec("t", handler="h"))
        reasons = []
        for _ in range(10):
            outcome = store.claim("w", conditions)
            if outcome.claim is not None:
                break
            reasons += [decision.label for _, decision in outcome.denied]
            clock.advance(1.0)
        assert outcome.claim is not None and outcome.claim.job.id == later.id, (kind, reasons)
        assert reasons == ["handler_profile"] * PROFILE_PROBE_AFTER, kind
        # the probe's run is a sample; the profile is still the worst of the last 8
        store.finish(later.id, outcome.claim.token, None, 0.1, 0)
        again = store.get(later.id)
        assert again is not None and again.state is JobState.DONE


@pytest.mark.timeout(60)
@pytest.mark.usefixtures("in_root")
def test_f03_a_handler_writing_bytes_that_are_not_utf8_does_not_wedge_the_pool(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    with SqliteStore(db, process="t") as store:
        for n in range(12):  # ~190 KiB in all: far more than a pipe holds
            store.enqueue(JobSpec("q", n, handler="mojibake"))
    options = PoolOptions(
        f"sqlite:///{db}",
        "tests.jobs.test_review15",
        PoolPolicy(1, 1),
        WorkerOptions(name="p", poll=0.05, lease=30.0, system_memory=False),
        interval=0.1,
        status_file=None,
    )
    pool = PoolController(options)
    with running(pool) as thread:
        wait_for(lambda: counts(db)["done"] == 12, 30, "every job to be done")
    assert not thread.is_alive(), "the pool did not stop"


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize("command", [["status"], ["status", "--job", "1"], ["budgets"]])
def test_f13_a_read_only_command_refuses_a_missing_sqlite_file(tmp_path: Path, command: list[str]) -> None:
    typo = tmp_path / "mistyped.db"
    result = _cli("jobs", *command, "--store", f"sqlite:///{typo}", "--json")
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)
    assert error["option"] == "--store" and "no store at" in error["error"]
    assert not typo.exists()  # nothing created


def test_f13_a_command_that_writes_still_creates_the_store(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'new.db'}"
    assert _cli("jobs", "budgets", "--queue", "a=1", "--store", db).exit_code == 0
    assert _cli("jobs", "status", "--store", db).exit_code == 0


@pytest.mark.timeout(60)
def test_f10_pool_on_an_unreachable_postgresql_names_the_store(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    missing = f"postgresql://nobody@{str(tmp_path / 'no-socket-here').replace('/', '%2F')}/db"
    result = _cli(
        "jobs", "pool", "--handlers", "tests.jobs.handlers", "--store", missing,
        "--status-file", str(tmp_path / "pool.json"), "--json",
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)
    assert error["option"] == "--store" and "cannot reach the PostgreSQL store" in error["error"]


def test_f14_the_worker_summary_says_what_it_refused(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'jobs.db'}"
    assert _cli("jobs", "budgets", "--queue", "exports=8", "--store", db).exit_code == 0
    assert _cli("jobs", "enqueue", "exports", "--cost", "5", "--store", db).exit_code == 0
    assert _cli("jobs", "budgets", "--queue", "exports=4", "--store", db).exit_code == 0  # shrunk below it
    result = _cli("jobs", "worker", "--handlers", "tests.jobs.handlers", "--once", "--quiet", "--store", db)
    assert result.exit_code == 0, result.output
    assert "0 done, 0 failed, 0 retried, 0 denials, 1 refused, stopped: idle" in result.stdout


def test_f11_delay_and_backoff_take_what_the_docs_and_the_help_say(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'jobs.db'}"
    assert _cli("jobs", "enqueue", "q", "--delay", str(30 * 24 * 3600), "--store", db).exit_code == 0
    for option, too_much in (("--delay", 367 * 24 * 3600), ("--backoff", 86401)):
        result = _cli("jobs", "enqueue", "q", option, str(too_much), "--store", db)
        assert result.exit_code == 2 and option in result.output, result.output


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["q", "--payload", "NaN"], "--payload"),
        (["q", "--limit", "2"], "--limit"),
        (["a\x7fb"], "QUEUE"),
        (["a\u0085b"], "QUEUE"),
        (["a\u202eb"], "QUEUE"),
        (["q", "--group", "g\x9b"], "--group"),
    ],
)
def test_f12_enqueue_refusals_name_their_option_and_controls_are_refused(
    tmp_path: Path, args: list[str], option: str
) -> None:
    db = tmp_path / "jobs.db"
    result = _cli("jobs", "enqueue", *args, "--store", f"sqlite:///{db}", "--json")
    assert result.exit_code == 2, result.output
    assert json.loads(result.stdout)["option"] == option
    with SqliteStore(db, process="t") as store:
        assert sum(store.status(0).counts.values()) == 0  # nothing stored


def test_f12_a_budget_of_non_ascii_digits_is_refused_naming_the_option(tmp_path: Path) -> None:
    result = _cli(
        "jobs", "budgets", "--queue", "x=\u00b2", "--store", f"sqlite:///{tmp_path / 'j.db'}", "--json"
    )
    assert result.exit_code == 2 and json.loads(result.stdout)["option"] == "--queue", result.output


FOR_EACH = {
    "name": "fe",
    "queue": "flows",
    "budget": {"max_for_each_items": 2},
    "steps": [{"kind": "for_each", "key": "tasks", "handler": "square", "into": "results", "queue": "flows"}],
}


def test_f08_a_workflow_failed_at_start_is_exit_1_with_its_reason_and_status_lists_it(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'jobs.db'}"
    flow = tmp_path / "flow.json"
    flow.write_text(json.dumps(FOR_EACH))
    result = _cli("jobs", "workflow", str(flow), "--state", '{"tasks": [1, 2, 3]}', "--store", db)
    assert result.exit_code == 1, result.output
    assert "workflow run 1 (fe) failed at start: constraint_violation: max_for_each_items 2" in result.stdout
    assert _cli("jobs", "workflow", str(flow), "--state", '{"tasks": [1]}', "--store", db).exit_code == 0
    status = _cli("jobs", "status", "--store", db)
    assert "failed workflow run 1 (fe): constraint_violation" in status.stdout
    doc = json.loads(_cli("jobs", "status", "--store", db, "--json").stdout)
    assert [run["id"] for run in doc["failed_workflows"]] == [1]


def test_f08_status_lists_failed_runs_on_every_store(any_store: StoreCore) -> None:
    from reference.jobs.workflow import Workflow

    flow = Workflow.from_definition(FOR_EACH)
    failed = any_store.start_workflow(flow, {"tasks": [1, 2, 3]})
    any_store.start_workflow(flow, {"tasks": [1]})
    listed = any_store.status().failed_workflows
    assert [(r["id"], r["name"]) for r in listed] == [(failed, "fe")]
    assert "max_for_each_items" in str(listed[0]["reason"])


def test_f09_a_job_retrying_after_its_handler_failed_is_not_shown_deferred_by_an_old_denial(
    store_maker: StoreMaker,
) -> None:
    for kind in STORE_KINDS:
        clock = Clock()
        store = store_maker(kind, clock, None)
        store.set_budgets(Budgets({"t": 1}))
        first = store.enqueue(JobSpec("t"))
        second = store.enqueue(JobSpec("t", backoff=300.0))
        held = store.claim("w", Conditions(retry_after=1.0)).claim
        assert held is not None and held.job.id == first.id
        denied = store.claim("w", Conditions(retry_after=1.0))
        assert [job_id for job_id, _ in denied.denied] == [second.id]
        assert [d["id"] for d in store.status().deferred] == [second.id]  # deferred by the budget
        store.finish(first.id, held.token, None, 0.0, 0)
        clock.advance(1.0)
        runs = store.claim("w", Conditions(retry_after=1.0)).claim
        assert runs is not None and runs.job.id == second.id
        store.fail(second.id, runs.token, "RuntimeError: the real reason", 0.0, 0)
        assert store.status().deferred == [], kind  # waiting out its backoff, not a denial
        back = store.get(second.id)
        assert back is not None and back.reason == "RuntimeError: the real reason" and back.denials == 1


def test_f09_the_text_status_shows_a_deferred_jobs_denials_and_retry_time(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "jobs.db", process="t") as store:
        store.set_budgets(Budgets({"t": 1}))
        store.enqueue(JobSpec("t"))
        second = store.enqueue(JobSpec("t"))
        assert store.claim("w", Conditions(retry_after=60.0)).claim is not None
        assert [i for i, _ in store.claim("w", Conditions(retry_after=60.0)).denied] == [second.id]
    text = _cli("jobs", "status", "--store", f"sqlite:///{tmp_path / 'jobs.db'}").stdout
    assert re.search(
        rf"deferred job {second.id} \(t\): queue_budget: .* \(1 denials, retry in (59|60) s\)", text
    ), text


@pytest.fixture(params=STORE_KINDS)
def clocked(request: pytest.FixtureRequest, store_maker: StoreMaker) -> tuple[StoreCore, Clock]:
    clock = Clock()
    return store_maker(str(request.param), clock, None), clock


@pytest.mark.timeout(60)
def test_f07_a_run_that_outlived_its_lease_is_still_a_sample_of_its_handler(
    clocked: tuple[StoreCore, Clock],
) -> None:
    store, clock = clocked
    job = store.enqueue(JobSpec("t", handler="slow"))
    reaped: list[int] = []

    def slow(payload: object) -> str:
        clock.advance(10.0)  # past the lease: another worker's claim reaps it
        reaped.extend(store.claim("other", Conditions(lease=3.0)).expired)
        return "late"

    options = WorkerOptions(name="w", lease=3.0, max_jobs=1, system_memory=False)
    report = Worker(store, {"slow": slow}, options).run()
    assert report.lease_lost == 1 and reaped == [job.id], report
    store.enqueue(JobSpec("t", handler="slow"))
    nxt = store.claim("third", Conditions(lease=3.0)).claim
    assert nxt is not None and nxt.job.id != job.id and nxt.profile is not None
