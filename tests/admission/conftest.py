"""The PostgreSQL fixtures of ``tests/jobs`` (a throwaway server, a fresh database per test), for
the PostgreSQL bench test here."""

from tests.jobs.conftest import pg_server, pg_url

__all__ = ["pg_server", "pg_url"]
