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
from tests.jobs.helpers import STRESS_JOBS, run_stress


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
    assert run.exit_codes == [0, 0, 0, 0]
    assert sorted(run.ran) == list(range(STRESS_JOBS))  # every job ran, and only once
    assert run.counts["done"] == STRESS_JOBS
    assert len({e["process"] for e in run.events if e["event"] == "admit"}) > 1  # they really raced
    assert any(e["event"] == "deny" for e in run.events)  # the budgets were tight enough to bite
    assert run.verdict.code == 0 and not run.verdict.prefix, run.verdict.message
    assert run.verdict.design == "admission"
    assert not list(tmp_path.glob("*.db"))  # nothing went to a SQLite file by mistake
