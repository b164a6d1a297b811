"""A module imported for the first time by two controlled threads at once (``harness/
patch_imports.py``): its module lock is controlled, so the second thread waits for the first's
import to end, as in CPython. Plain DFS runs the schedule where the second thread imports while
the first is paused in the module's body: before session 38 it saw the module half made."""

from __future__ import annotations

import _frozen_importlib
from collections.abc import Callable

import pytest

from model_checks.harness import check, patched
from model_checks.harness.sync import primitives
from tests.harness import import_programs as prog


@pytest.mark.timeout(300)
@pytest.mark.parametrize("strategy", ["dfs", "dpor-ipb"])
@pytest.mark.parametrize("program", prog.PROVED, ids=lambda p: p.__name__)
def test_a_module_imported_by_two_threads_is_made_once(program: Callable[[], object], strategy: str) -> None:
    with patched(prog):
        result = check(lambda rt: program(), strategy=strategy, time_limit=120)
    assert result.verdict == "exhaustive", result.report()


@pytest.mark.timeout(120)
def test_no_controlled_module_lock_outlives_the_check() -> None:
    with patched(prog):
        check(lambda rt: prog.lazy_import_in_two_threads(), strategy="dfs", max_executions=50)
    locks = [ref() for ref in _frozen_importlib._module_locks.values()]  # type: ignore[attr-defined]
    assert not any(isinstance(getattr(lock, "lock", None), primitives.Lock) for lock in locks)
