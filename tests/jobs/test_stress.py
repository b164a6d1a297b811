"""Four worker processes on one SQLite file with tight budgets: no double claim, every job done.

Each process runs a real ``Worker`` over its own ``SqliteStore`` and writes its own trace file;
the merged trace, closed by the store's final counts, is validated by `lanecheck validate`'s
admission format (``model_checks/designs/admission/trace.py``), and the handlers' own log shows
each job ran exactly once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.jobs.helpers import STRESS_PROCESSES, assert_clean_stress, run_stress


@pytest.mark.timeout(90)
def test_four_processes_tight_budgets(tmp_path: Path) -> None:
    run = run_stress(tmp_path)
    assert len(run.exit_codes) == STRESS_PROCESSES
    assert_clean_stress(run)
