"""A ``Value``/``Array`` made at import keeps its one memory (``review10_mp3_programs.py``;
docs/harness.md, "Refused, not hung on"): views taken at import (``get_obj()``, a ``memoryview``,
a ``ctypes`` pointer) alias what ``V`` reads and writes, only its lock stands in, and each
execution starts from the bytes the check's first execution found (``patch_mp_memory``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest

from model_checks.harness import check, patched
from tests.harness import patched_runs as runs
from tests.harness import review10_mp3_programs as prog

pytestmark = pytest.mark.timeout(90)

run = partial(runs.run_with_outcomes, prog, time_limit=30)


def _zero() -> None:
    """Each check starts from the memory made at import as a fresh interpreter has it (a check
    ends with its last execution's writes, as a ``RawValue``'s and a module's list do)."""
    prog.RAW.value = 0
    prog.CELLS.get_obj()[:] = [0, 0]
    prog.HELD[0].get_obj().value = prog.TABLE["cells"].get_obj()[0] = 0


_memory_at_zero = pytest.fixture(autouse=True)(_zero)


def test_an_unlocked_write_through_a_view_is_a_data_race() -> None:
    """The probe's shape: proved "exhaustive (data-race-free)" while ``V`` was a copy."""
    failure = runs.assert_race(run(prog.two_views), prog, "c_int.value", "V.value += 1", "RAW.value += 1")
    assert "patch_mp_imported" not in failure.message, failure.message  # (the program's lines)


def test_a_write_through_a_view_is_what_the_value_reads() -> None:
    """With races off (synchronisation points only: the unlocked write is no scheduling point)
    ``V.value`` saw 1 in every execution while ``V`` was a copy (the probe's ``assert V.value ==
    2``), where the real program's ``V`` reads the write made through ``RAW``."""
    runs.assert_outcomes(run(prog.two_views, races=False), {2})
    _zero()
    runs.assert_outcomes(run(prog.two_views_under_the_lock, races=False), {2})


@pytest.mark.parametrize(
    ("program", "outcome"),
    [
        (prog.two_views_under_the_lock, 2),
        (prog.array_and_its_views, 12),
        (prog.values_inside_containers, 2),
    ],
)
def test_writes_through_views_reach_the_value(program: Callable[[], int], outcome: int) -> None:
    result = run(program)
    runs.assert_proved_race_free(result)
    runs.assert_outcomes(result, {outcome})  # (every execution started from 0: put back)
    assert result.executions >= 2, result.report()


def test_the_memory_is_the_real_one() -> None:
    real = prog.V
    with patched(prog):
        result = check(lambda rt: prog.two_views_under_the_lock() and None)
        assert result.verdict == "exhaustive" and result.executions >= 2, result.report()
        # the executions wrote the one memory (not a copy), which the views taken at import see
        assert prog.RAW.value == real.get_obj().value == 2
    assert prog.V is real and prog.V.value == 2
