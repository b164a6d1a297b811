"""Four worker processes on one PostgreSQL database with tight budgets, validated like the SQLite run.

The same ``run_stress`` as ``test_stress.py``: real ``Worker`` processes, one trace file each, the
merged trace closed by the store's final counts and judged by `lanecheck validate`'s admission
format, and the handlers' own log showing each job ran once. ``run_stress`` opens stores by a file
path; ``OnServer`` takes that place and opens the test's database instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from reference.jobs.pg_store import PgStore
from tests.jobs import helpers
from tests.jobs.helpers import STRESS_PROCESSES, assert_clean_stress, run_stress


class OnServer(PgStore):
    """A ``PgStore`` opened the way ``run_stress`` opens a ``SqliteStore``: ``(path, **extra)``."""

    url: ClassVar[str] = ""

    def __init__(self, path: str, **extra: Any) -> None:
        super().__init__(type(self).url, **extra)


@pytest.mark.timeout(120)
def test_four_processes_tight_budgets_on_postgresql(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(OnServer, "url", pg_url)  # the forked workers inherit it
    # run_stress reads the final counts through helpers.SqliteStore: from the server, here.
    monkeypatch.setattr(helpers, "SqliteStore", OnServer)
    run = run_stress(tmp_path, OnServer)  # type: ignore[arg-type]
    assert len(run.exit_codes) == STRESS_PROCESSES
    assert_clean_stress(run)
    assert not list(tmp_path.glob("*.db"))  # nothing went to a SQLite file by mistake
