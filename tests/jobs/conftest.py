"""Fixtures for the job-store tests: a throwaway PostgreSQL server, a fresh database per test, any store.

The server (``tests/pg.py``) starts once per session, the first time a test asks for it, and is
stopped and removed at the end. Without a server binary (or psycopg) the PostgreSQL tests skip
saying why; with ``CI=true`` they fail instead, since CI installs the server first (``.ci/run``
calls ``.ci/components.sh``).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reference.jobs.core import StoreCore
from reference.jobs.tracing import RecordingTracer
from tests.jobs.helpers import Clock, make_store
from tests.pg import PgServer, find_bindir, missing_server, start_server

STORE_KINDS = ("sqlite", "memory", "postgresql")
_databases = itertools.count(1)


def _unavailable(reason: str) -> None:
    action, message = missing_server(reason, os.environ)
    if action == "fail":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as missing:
        _unavailable(f"psycopg is not installed ({missing.name}; pip install -e '.[dev]')")
    bindir = find_bindir()
    if bindir is None:
        _unavailable("no PostgreSQL server binary (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin")
    assert bindir is not None
    server = start_server(bindir)  # a failure to start is an error, never a skip
    try:
        yield server
    finally:
        server.stop()


def create_database(server: PgServer) -> str:
    """A new, empty database on ``server``: its name."""
    import psycopg

    name = f"t{os.getpid()}_{next(_databases)}"
    with psycopg.connect(server.conninfo(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    return name


def drop_database(server: PgServer, name: str) -> None:
    import psycopg

    with psycopg.connect(server.conninfo(), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """A ``postgresql://`` URL of a new, empty database, dropped after the test."""
    name = create_database(pg_server)
    try:
        yield pg_server.url(name)
    finally:
        drop_database(pg_server, name)


StoreMaker = Callable[[str, Clock, RecordingTracer | None], StoreCore]


@pytest.fixture
def store_maker(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreMaker]:
    """``make(kind, clock, tracer)``: a store of ``kind`` (one of ``STORE_KINDS``), closed after the test.

    A PostgreSQL store gets a fresh database; asking for one is what starts the server, so a run
    of only SQLite and in-memory tests never needs it."""
    opened: list[StoreCore] = []
    databases: list[tuple[PgServer, str]] = []

    def make(kind: str, clock: Clock, tracer: RecordingTracer | None = None) -> StoreCore:
        if kind == "postgresql":
            from reference.jobs.pg_store import PgStore

            server: PgServer = request.getfixturevalue("pg_server")
            name = create_database(server)
            databases.append((server, name))
            store: StoreCore = PgStore(server.url(name), clock=clock, tracer=tracer, process="t")
        elif kind in ("sqlite", "memory"):
            store = make_store(kind, tmp_path, clock, tracer)
        else:
            raise ValueError(f"unknown store kind {kind!r}: one of {', '.join(STORE_KINDS)}")
        opened.append(store)
        return store

    yield make
    for store in opened:  # closed before their databases are dropped
        store.close()
    for server, name in databases:
        drop_database(server, name)
