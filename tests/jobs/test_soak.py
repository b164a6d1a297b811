"""The soak (``model_checks/designs/admission/soak.py``): worker processes killed with SIGKILL in the
middle of jobs every so often, tight budgets; every job ends done or failed with a reason, none lost,
none finished twice, and the merged trace validates (no budget or limit exceeded at any admission).

The CI-sized runs take seconds, on both stores; the full soak (100,000 jobs, 4 workers, a kill
every few seconds) is marked ``soak`` (``pytest -m soak tests/jobs/test_soak.py``), as is
``python -m model_checks.designs.admission.soak``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from model_checks.designs.admission.soak import SoakConfig, SoakResult, judge, run_soak


def _check(result: SoakResult, jobs: int) -> None:
    assert result.ok, result.problems
    assert result.verdict["code"] == 0, result.verdict
    assert result.counts["done"] + result.counts["failed"] == jobs
    assert result.counts["pending"] == result.counts["processing"] == 0
    assert result.finished_twice == []
    assert result.counts["failed"] == sum(result.failed_reasons.values())


@pytest.mark.timeout(120)
def test_a_short_soak_on_sqlite_loses_nothing(tmp_path: Path) -> None:
    config = SoakConfig(
        "sqlite:///" + str(tmp_path / "jobs.db"),
        jobs=400,
        kill_every=0.7,
        first_kill=0.0,
        lease=0.5,
        fail_every=50,
    )
    result = run_soak(config, work=tmp_path / "work")
    _check(result, 400)
    assert result.kills >= 1  # the faults really happened
    # one in 50 always fails, with its reason (a kill in its handler may end it by lease expiry)
    assert result.counts["failed"] == 8 and set(result.failed_reasons) <= {"handler failed", "lease expired"}


@pytest.mark.timeout(180)
def test_a_short_soak_on_postgresql_loses_nothing(tmp_path: Path, pg_url: str) -> None:
    config = SoakConfig(pg_url, jobs=200, kill_every=0.7, first_kill=0.0, lease=0.5, fail_every=50)
    result = run_soak(config, work=tmp_path / "work")
    _check(result, 200)
    assert result.kills >= 1


def test_a_soak_whose_trace_is_broken_is_reported(tmp_path: Path) -> None:
    config = SoakConfig("sqlite:///" + str(tmp_path / "jobs.db"), jobs=20, kill_every=0, fail_every=0)
    result = run_soak(config, work=tmp_path / "work")
    _check(result, 20)
    trace = max((tmp_path / "work" / "traces").glob("trace-w*.jsonl"), key=lambda p: p.stat().st_size)
    lines = trace.read_text().splitlines()
    assert len(lines) > 1  # a worker that ran something: drop one of its committed steps' events
    trace.write_text("\n".join(lines[:1] + lines[2:]) + "\n")
    broken = SoakResult(result.config)
    judge(broken, config, tmp_path / "work")
    assert not broken.ok and "do not merge" in broken.problems[0]


@pytest.mark.soak
@pytest.mark.timeout(7200)
def test_the_full_soak_on_sqlite(tmp_path: Path) -> None:
    config = SoakConfig("sqlite:///" + str(tmp_path / "jobs.db"), jobs=100_000, kill_every=3.0, lease=1.0)
    result = run_soak(config, work=tmp_path / "work")
    _check(result, 100_000)
    assert result.kills >= 1
