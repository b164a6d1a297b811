"""The data-race detector beyond instance attributes and containers: closure variables (a cell is
the location), a module's attribute (its global), a class's data, ``getattr``/``setattr`` by a
constant name, and a list's items one by one. Before these, the racy closure, module, class and
``getattr`` programs here were proved "exhaustive (for a data-race-free program)" (a false
proof), and two threads writing their own slots of one list were reported as a race."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest

from tests.harness import race_scopes as prog
from tests.harness.patched_runs import assert_race, run_patched

run = partial(run_patched, prog)


@pytest.mark.timeout(60)
def test_a_closure_variables_lost_update_is_a_race() -> None:
    result = run(prog.closure_lost_update)
    assert_race(result, prog, "closure variable count", "count += 1  # the closure's cell")
    assert result.executions <= 2, result.executions  # found in the first executions


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "program",
    [prog.closure_lost_update, prog.getattr_lost_update, prog.class_attribute],
    ids=lambda p: p.__name__,
)
def test_interleaving_the_race_shows_its_consequence(program: Callable[[], object]) -> None:
    """With ``interleave_races`` the racy sites become scheduling points: the search then runs
    them in both orders and ends with the race (or its consequence, the wrong count)."""
    result = run(program, interleave_races=True)
    assert result.verdict == "failed", result.report()
    assert result.failure is not None and result.failure.kind in ("data_race", "assertion"), result.report()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tracer", ["c", "python"])
def test_both_tracers_find_the_closure_race(tracer: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from model_checks.harness import race_frames, races

    if tracer == "python":
        monkeypatch.setattr(races, "NATIVE", None)
        monkeypatch.setattr(races, "fast_local", race_frames.py_fast_local)
        monkeypatch.setattr(races, "stack_value", race_frames.py_stack_value)
    elif race_frames.NATIVE is None:
        pytest.skip(f"no C tracer: {race_frames.NATIVE_WHY}")
    assert_race(run(prog.closure_lost_update), prog, "closure variable count")
    assert run(prog.closure_locked).verdict == "exhaustive"
