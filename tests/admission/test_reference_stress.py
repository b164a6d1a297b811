"""Each reference mutant on four real worker processes: the stress test's validator rejects its trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_checks.designs.admission.reference_mutants import REFERENCE_MUTANTS
from reference.jobs.sqlite_store import SqliteStore
from tests.jobs.helpers import run_stress


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", list(REFERENCE_MUTANTS))
def test_the_stress_validator_rejects_each_mutant(name: str, tmp_path: Path) -> None:
    mutant = REFERENCE_MUTANTS[name]
    store_class = mutant.build(SqliteStore)
    assert issubclass(store_class, SqliteStore)
    run = run_stress(tmp_path, store_class, jobs=60, time_budget=3.0)
    assert run.verdict.code == 1 and run.verdict.seq is not None, run.verdict.message
    assert run.verdict.rule in mutant.rules, run.verdict.message
