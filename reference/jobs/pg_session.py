"""The PostgreSQL store's connections: the pool, one transaction per step, and running a step again.

A step runs in one transaction (``_transaction``), or as one autocommit statement that is its own
transaction (``_statement``), on the store's own connection, held from one step to the next, so a
worker's steps pay no pool checkout. A store belongs to one thread, as a ``SqliteStore`` does: the
step's transaction state lives in the store, so a step of another thread waits until the running
one is over (its steps are serialised, never interleaved). A step that a deadlock or serialization
failure aborted is run again (``RETRIES`` times); so is one whose connection broke before its
commit, or that got no connection from the pool (for up to ``reconnect_timeout`` seconds). A
connection lost *during* the commit leaves the step in doubt: that error is raised, never
retried, so an enqueue is never doubled. See ``pg_store`` for the store these serve.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from reference.jobs.core import StoreCore
from reference.jobs.model import Job
from reference.jobs.tracing import Tracer

RETRIES = 8
"""How often a step aborted by a deadlock or serialization failure is run again before it raises."""
RETRYABLE: tuple[type[Exception], ...] = (errors.DeadlockDetected, errors.SerializationFailure)
RECONNECT_TIMEOUT = 60.0
POOL_OPEN_TIMEOUT = 30.0
"""Seconds the pool's first connection may take once the server has answered a plain connect. The
server is there by then, so a slow pool is a busy machine, not a missing server: a short
``connect_timeout`` fails fast on an absent server without failing a loaded one."""
_RECONNECT_PAUSE = 0.05

Connection = psycopg.Connection[dict[str, Any]]


class ConnectionLost(psycopg.OperationalError):
    """A step's connection broke before its commit: nothing it did happened; it can run again."""


def _backoff(attempt: int) -> None:
    """Wait a little before running an aborted step again: random, so two victims do not meet again."""
    time.sleep(random.uniform(0, 0.002 * 2**attempt))


class PgSession(StoreCore):
    """``StoreCore`` with a connection pool to ``dsn``, and the store's transactions on it."""

    def __init__(
        self,
        dsn: str,
        clock: Callable[[], float],
        tracer: Tracer | None,
        process: str,
        *,
        pool_size: int,
        connect_timeout: float,
        reconnect_timeout: float,
    ) -> None:
        super().__init__(clock, tracer, process)
        if pool_size < 1:
            raise ValueError(f"pool_size must be at least 1, got {pool_size}")
        self.dsn = dsn
        # One plain connection first: a server that is not there fails now with libpq's own reason
        # (refused, no such host, bad password), where the pool would retry until its timeout.
        psycopg.connect(dsn, connect_timeout=max(1, round(connect_timeout))).close()
        self.reconnect_timeout = reconnect_timeout
        self.reconnects = 0
        """Steps run again because their connection broke before the commit."""
        self._committing = False
        self._pool: ConnectionPool[Connection] = ConnectionPool(
            dsn,
            connection_class=Connection,
            kwargs={"autocommit": True, "row_factory": dict_row},
            min_size=1,
            max_size=pool_size,
            timeout=connect_timeout,
            open=False,
            name=f"lanecheck-jobs-{self._process}",
        )
        self._pool.open(wait=True, timeout=max(connect_timeout, POOL_OPEN_TIMEOUT))
        self._own: Connection | None = None
        """The connection this store holds between steps (taken from the pool on first use)."""
        self._own_lock = threading.Lock()
        self._conn: Connection | None = None
        self._held: set[str] = set()
        """The advisory locks (``"budgets"``, ``"queue:Q"``, ``"group:G"``) this transaction holds."""
        self._locked: dict[int, Job] = {}
        """Rows this transaction read ``FOR UPDATE`` and has not changed since: no one else can."""

    def close(self) -> None:
        with self._own_lock:  # not under a running step of another thread
            own, self._own = self._own, None
            if own is not None:
                self._pool.putconn(own)
        self._pool.close()

    @property
    def _db(self) -> Connection:
        if self._conn is None:
            raise RuntimeError("PgStore: a row primitive ran outside a transaction")
        return self._conn

    @contextmanager
    def _checkout(self) -> Iterator[Connection]:
        """The store's own connection for one step, held until the step is over: a step of another
        thread waits, because the transaction's state (``_conn``, ``_held``, ``_locked``) is the
        store's. It is given back to the pool, which replaces a broken one, only if the step left it
        broken or not idle."""
        self._own_lock.acquire()
        try:
            conn = self._own
            if conn is None:
                try:
                    conn = self._own = self._pool.getconn()
                except PoolTimeout as problem:
                    # While the server restarts the pool reconnects with a growing backoff, which
                    # can outlast one checkout's timeout. Nothing of the step ran: it may run again.
                    raise ConnectionLost(f"no connection from the pool: {problem}") from problem
            try:
                yield conn
            finally:
                if conn.broken or conn.pgconn.transaction_status != TransactionStatus.IDLE:
                    self._own = None
                    self._pool.putconn(conn)  # rolled back, or closed and replaced
        finally:
            self._own_lock.release()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._checkout() as conn:
            self._committing = False
            try:
                with conn.transaction():
                    self._conn, self._held, self._locked = conn, set(), {}
                    try:
                        yield
                    finally:
                        self._conn, self._held, self._locked = None, set(), {}
                    self._committing = True  # leaving the block commits
            except psycopg.OperationalError as problem:
                if conn.broken and not self._committing and not isinstance(problem, RETRYABLE):
                    raise ConnectionLost(f"connection lost before the commit: {problem}") from problem
                raise

    def _run(self, body: Callable[[], Any]) -> Any:
        # A deadlock victim or serialization failure rolled back everything it did and wrote no
        # trace (events go out only after a commit): running the whole step again is safe. So is
        # a step whose connection broke before its commit; the pool hands out a new one (waiting
        # while the server restarts).
        attempt = 0
        deadline = time.monotonic() + self.reconnect_timeout
        while True:
            try:
                return super()._run(body)
            except RETRYABLE:
                attempt += 1
                if attempt == RETRIES:
                    raise
                _backoff(attempt)
            except ConnectionLost:
                if time.monotonic() >= deadline:
                    raise
                self.reconnects += 1
                time.sleep(_RECONNECT_PAUSE)

    def _statement(self, sql: str, params: tuple[Any, ...]) -> dict[str, Any]:
        """``sql`` (one row back) as one autocommit statement: its own transaction, one round trip,
        and the server holds its locks only while it runs and commits it. Run again after a
        deadlock or serialization failure, a connection that broke before the result came back, or
        no connection to be had (the server away: nothing was sent).

        A result comes back only once the statement committed (the server answers the statement's
        Sync after the commit), so a break is either before the commit — nothing happened, the
        statement runs again — or, in a window the client cannot tell apart, during it: a claim
        then leaves a job leased to nobody, back at its lease's end, and a finish that did commit
        is answered ``StaleLease`` by its second run (the job is done). Neither loses or doubles a
        job, but the committed run reserved trace seqs whose events are never written: the trace
        shows a gap there, not a silent success. An enqueue, which could be doubled, never comes here
        (``_transaction`` raises)."""
        attempt = 0
        deadline = time.monotonic() + self.reconnect_timeout
        while True:
            broken = False
            try:
                with self._checkout() as conn:
                    try:
                        row = conn.execute(sql, params).fetchone()
                    except psycopg.OperationalError:
                        broken = conn.broken
                        raise
                assert row is not None
                return row
            except RETRYABLE:
                attempt += 1
                if attempt == RETRIES:
                    raise
                _backoff(attempt)
            except psycopg.OperationalError as problem:
                lost = broken or isinstance(problem, ConnectionLost)
                if not lost or time.monotonic() >= deadline:
                    raise
                self.reconnects += 1
                time.sleep(_RECONNECT_PAUSE)
