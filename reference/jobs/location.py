"""Where a store lives, from an option or the environment: a SQLite file or a PostgreSQL database.

The default is ``$LANECHECK_JOBS_STORE`` when set, else ``lanecheck-jobs.db`` in the current
directory. ``sqlite:///relative.db`` and ``sqlite:////abs/path.db`` follow SQLAlchemy's spelling
(three slashes, then the path); a bare path is taken as a SQLite file. ``postgresql://...`` (or
``postgres://...``) is a libpq URL naming a PostgreSQL database, for workers on many hosts
(``PgStore``; needs the ``postgres`` extra). ``open_store`` opens either.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from reference.jobs.core import StoreCore
from reference.jobs.sqlite_store import SqliteStore

ENV = "LANECHECK_JOBS_STORE"
DEFAULT_FILE = "lanecheck-jobs.db"
PREFIX = "sqlite:///"
POSTGRES_PREFIXES = ("postgresql://", "postgres://")


def default_url() -> str:
    return os.environ.get(ENV) or PREFIX + DEFAULT_FILE


def sqlite_path(url: str) -> Path:
    """The database file ``url`` names; ``ValueError`` for another scheme or no path."""
    if "://" in url:
        if not url.startswith(PREFIX):
            scheme = url.split("://", 1)[0]
            if is_postgres(url):
                raise ValueError(
                    f"{scheme}:// names a PostgreSQL store, not a SQLite file (open_store opens both)"
                )
            raise ValueError(f"unsupported store {scheme!r}: sqlite:///PATH or postgresql://...")
        url = url[len(PREFIX) :]
    if not url or url.strip() == "":
        raise ValueError("the store URL names no file (sqlite:///PATH)")
    path = Path(url)
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a database file")
    if not path.parent.is_dir():
        raise ValueError(f"no such directory: {path.parent}")
    return path


def is_postgres(url: str) -> bool:
    return url.startswith(POSTGRES_PREFIXES)


def postgres_url(url: str) -> str:
    """``url`` checked as a PostgreSQL URL: ``ValueError`` unless it names a database server."""
    if not is_postgres(url):
        raise ValueError(f"not a PostgreSQL URL (postgresql://...): {url!r}")
    rest = url.split("://", 1)[1]
    if not rest.strip() or rest.startswith("?"):
        raise ValueError("the store URL names no PostgreSQL server or database (postgresql://HOST/DB)")
    return url


def open_store(url: str, **extra: Any) -> StoreCore:
    """The store ``url`` names, opened with ``extra`` (``tracer``, ``process``, ``clock``...).

    ``ValueError`` for a URL that names no store; a PostgreSQL store that cannot be reached raises
    psycopg's ``OperationalError`` (after its connect timeout), a broken SQLite file sqlite3's
    ``DatabaseError``."""
    if is_postgres(url):
        checked = postgres_url(url)
        try:
            from reference.jobs.pg_store import PgStore
        except ImportError as missing:
            raise ValueError(
                f"a postgresql:// store needs psycopg and psycopg-pool ({missing.name} is missing):"
                " pip install 'lanecheck[postgres]'"
            ) from None
        return PgStore(checked, **extra)
    return SqliteStore(sqlite_path(url), **extra)
