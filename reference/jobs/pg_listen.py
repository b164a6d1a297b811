"""A worker's LISTEN session on a PostgreSQL job store: woken when a job is inserted.

Kept apart from ``pg_store`` (the store's steps); ``PgStore.listen`` opens one. See the store's
module docstring and ``spec/job_wakeup.py`` for why the worker listens before it claims.
"""

from __future__ import annotations

import time
from typing import Any

import psycopg
from psycopg import sql

CHANNEL = "lanecheck_jobs"
"""The NOTIFY channel of job inserts (payload: the job's queue)."""


class Listener:
    """A worker's own session, LISTENing on the store's channel: ``wait`` until a job is inserted.

    Opened before the worker's first claim (``PgStore.listen``), so every insert that commits
    after that claim's look is delivered to it, read or not. ``wait(timeout)`` returns True when
    notified (reading every notification there is), False after ``timeout`` or when the session
    was lost. A lost session is opened and LISTENs again on the next ``wait``, which then returns
    at once without waiting: whatever was inserted while it was down was announced to nobody, so
    the worker must claim again, listening, before it waits (the spec's ``relisten-then-wait``
    mutant is that bug). The counters say what woke the worker."""

    def __init__(self, dsn: str, channel: str = CHANNEL, *, connect_timeout: int = 10) -> None:
        self.dsn = dsn
        self.channel = channel
        self.connect_timeout = connect_timeout
        self.notified = 0
        self.timeouts = 0
        self.lost = 0
        self._conn: psycopg.Connection[Any] | None = None
        self._listen()

    def _listen(self) -> None:
        conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=self.connect_timeout)
        try:
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    @property
    def listening(self) -> bool:
        return self._conn is not None and not self._conn.closed

    def wait(self, timeout: float) -> bool:
        if self._conn is None:
            try:
                self._listen()
            except psycopg.OperationalError:
                time.sleep(timeout)  # the server is still away: try again at the next poll
            return False
        woken = False
        try:
            for _ in self._conn.notifies(timeout=timeout, stop_after=1):
                woken = True
            if woken:
                for _ in self._conn.notifies(timeout=0):  # one wakeup stands for all of them
                    pass
        except psycopg.OperationalError:
            self.lost += 1
            self.close()
            return False
        if woken:
            self.notified += 1
        else:
            self.timeouts += 1
        return woken

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
