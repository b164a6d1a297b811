"""A ``sqlite3`` database shared between controlled threads (``patch_sqlite.py``): each call of a
connection or of its cursors that reads or writes the database is an operation on it, so every
strategy runs the orders of two threads' ``SELECT`` and ``UPDATE`` (eleventh review, #1: a lost
update on one connection made with ``check_same_thread=False`` was proved under every strategy,
each thread's body one step), and connections to one file wait for each other's locks."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest

from model_checks.harness import Result, patched
from model_checks.harness.patch_sqlite import statement_kind
from model_checks.harness.stateful import check_states
from tests.harness import sqlite_programs as prog
from tests.harness.patched_runs import assert_fails, assert_outcomes, run_with_outcomes

pytestmark = pytest.mark.timeout(240)


def _run(program: Callable[[], object], strategy: str) -> Result:
    """``program`` checked by ``strategy`` ("states": the state search), 60 s at most."""
    if strategy != "states":
        return run_with_outcomes(prog, program, strategy=strategy)
    with patched(prog):
        return check_states(lambda rt: (program(), None)[1], time_limit=60)


STRATEGIES = ("dpor-ipb", "dfs", "states")


@pytest.fixture
def db(tmp_path: Path) -> Iterator[str]:
    """A database file's path, in memory where the system has a tmpfs (each commit's fsync on a
    busy disk made a check of hundreds of executions take a minute)."""
    shm = Path("/dev/shm")
    folder = Path(tempfile.mkdtemp(dir=shm)) if shm.is_dir() else tmp_path
    yield str(folder / "shared.db")
    if folder != tmp_path:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(
    "program",
    [prog.shared_read_modify_write, prog.shared_at_import_read_modify_write],
    ids=lambda p: p.__name__,
)
@pytest.mark.usefixtures("counter_at_import")
def test_a_lost_update_on_one_shared_connection_is_found(
    program: Callable[[], object], strategy: str
) -> None:
    # before: "exhaustive" under every strategy (2 executions under DPOR)
    failure = assert_fails(_run(program, strategy), "assertion", "AssertionError: 1")
    assert failure.schedule.startswith("lc1."), failure.schedule


@pytest.mark.parametrize("program", [prog.row_factory_window, prog.row_factory_window_at_import])
@pytest.mark.usefixtures("counter_at_import")
def test_a_connections_field_its_fetch_reads_is_a_write_of_it(program: Callable[[], object]) -> None:
    """s04: ``con.row_factory = sqlite3.Row`` in one thread's window; was "exhaustive"."""
    assert_outcomes(run_with_outcomes(prog, program), {"tuple", "Row"})


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_lost_update_through_two_connections_to_one_file_is_found(db: str, strategy: str) -> None:
    assert_fails(
        _run(partial(prog.two_connections_read_modify_write, db), strategy), "assertion", "AssertionError: 1"
    )


@pytest.mark.parametrize("strategy", ("dpor-ipb", "states"))
def test_the_read_modify_write_under_a_lock_is_proved(strategy: str) -> None:
    result = _run(prog.shared_under_a_lock, strategy)
    assert result.verdict == "exhaustive", result.report()
    if strategy != "states":
        assert_outcomes(result, {2})


@pytest.mark.parametrize("strategy", ("dpor-ipb", "states"))
@pytest.mark.parametrize(
    "program", [prog.two_connections_immediate, prog.two_connections_write_first], ids=lambda p: p.__name__
)
def test_transactions_on_two_connections_wait_for_the_lock_and_are_proved(
    db: str, program: Callable[[str], int], strategy: str
) -> None:
    # the second BEGIN IMMEDIATE (or first write: sqlite calls the busy handler for a connection
    # holding no lock yet) waits until the first commits; before the controlled wait, it slept
    # for real on the one OS thread and raised "database is locked"
    result = _run(partial(program, db), strategy)
    assert result.verdict == "exhaustive", result.report()
    if strategy != "states":
        assert_outcomes(result, {2})
        assert result.executions > 2, result.report()  # (the two transactions were reordered)


def test_a_cursors_rows_are_read_as_they_are_fetched() -> None:
    # (1,): the delete came between the reader's execute (its first row read) and its fetchall
    assert_outcomes(_run(prog.rows_read_as_fetched, "dpor-ipb"), {(), (1,), (1, 2)})


def test_a_deferred_transactions_upgrade_gets_database_is_locked_at_once(db: str) -> None:
    assert_fails(
        _run(partial(prog.two_connections_deferred, db), "dpor-ipb"),
        "exception",
        "OperationalError: database is locked",
    )


def test_the_busy_timeout_expires_when_the_lock_holder_waits_for_the_waiter(db: str) -> None:
    failure = assert_fails(
        _run(partial(prog.lock_held_while_waiting, db), "dpor-ipb"),
        "exception",
        "Thread-1 (writer) raised OperationalError: database is locked",
    )
    assert failure.schedule.startswith("lc1."), failure.schedule


@pytest.fixture
def counter_at_import() -> Iterator[None]:
    """The import's counter as the import made it (a check leaves its last execution's writes)."""
    prog.SHARED.executescript("update c set v = 0;")
    yield
    prog.SHARED.executescript("update c set v = 0;")


@pytest.mark.usefixtures("counter_at_import")
@pytest.mark.parametrize("strategy", ("dpor-ipb", "states"))
def test_each_execution_starts_from_the_database_the_import_made(strategy: str) -> None:
    # (before each execution's restore: the second execution counted from 2, and failed)
    result = _run(prog.shared_at_import_under_a_lock, strategy)
    assert result.verdict == "exhaustive", result.report()
    assert result.executions > 1, result.report()
    assert type(prog.SHARED) is sqlite3.Connection  # CPython's connection again


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("select v from c", "read"),
        ("  -- a comment\n /* another */ SELECT 1", "read"),
        ("values (1)", "read"),
        ("explain select 1", "read"),
        ("update c set v = 1", "write"),
        ("with x as (select 1) delete from c", "write"),
        ("pragma journal_mode = wal", "write"),
        ("begin", "write"),
        ("", "write"),
    ],
)
def test_a_statement_reads_only_if_it_is_a_query(sql: str, kind: str) -> None:
    assert statement_kind(sql) == kind
