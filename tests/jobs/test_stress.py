"""Four worker processes on one SQLite file with tight budgets: no double claim, every job done.

Each process runs a real ``Worker`` over its own ``SqliteStore`` and writes its own trace file;
the merged trace, closed by the store's final counts, is validated by `lanecheck validate`'s
admission format (``model_checks/designs/admission/trace.py``), and the handlers' own log shows
each job ran exactly once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.jobs.helpers import STRESS_JOBS, run_stress


@pytest.mark.timeout(90)
def test_four_processes_tight_budgets(tmp_path: Path) -> None:
    run = run_stress(tmp_path)
    assert run.exit_codes == [0, 0, 0, 0]
    assert sorted(run.ran) == list(range(STRESS_JOBS))  # every job ran, and only once
    assert run.counts["done"] == STRESS_JOBS
    assert len({e["process"] for e in run.events if e["event"] == "admit"}) > 1  # they really raced
    assert any(e["event"] == "deny" for e in run.events)  # the budgets were tight enough to bite
    assert run.verdict.code == 0 and not run.verdict.prefix, run.verdict.message
    assert run.verdict.design == "admission"
