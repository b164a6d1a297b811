"""Every catalogued plain ``threading`` program, checked in patch mode and held to what its module
says it gives (``PROVED`` and ``FOUND``, tests/harness/expected.py). Each module's docstring says
where its programs come from; most were wrong answers of an outside review: a false proof, a
bug lost, a hang or a false alarm."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

from model_checks.harness import Result
from tests.harness import (
    asyncio_programs,
    import_programs,
    imported_programs,
    logging_programs,
    module_state_programs,
    outside_programs,
    patch_review6_programs,
    patch_review7_programs,
    patch_types_programs,
    queue_internals_programs,
    race_calls_programs,
    race_library_programs,
    race_reach_programs,
    race_scopes,
    real_run_programs,
    review6_c_programs,
    review6_programs,
    stream_programs,
    threading_api_programs,
)
from tests.harness.expected import Fails, Program, Races
from tests.harness.patched_runs import assert_fails, assert_proved_race_free, assert_race, run_patched

CATALOGUE = (
    race_scopes,
    race_calls_programs,
    race_library_programs,
    race_reach_programs,
    import_programs,
    imported_programs,
    threading_api_programs,
    patch_types_programs,
    queue_internals_programs,
    real_run_programs,
    stream_programs,
    outside_programs,
    logging_programs,
    module_state_programs,
    asyncio_programs,
    patch_review6_programs,
    patch_review7_programs,
    review6_programs,
    review6_c_programs,
)


def _short(module: ModuleType) -> str:
    return module.__name__.rsplit(".", 1)[-1]


def _proofs() -> Iterator[object]:
    for module in CATALOGUE:
        for program in getattr(module, "PROVED", ()):
            yield pytest.param(program, id=f"{_short(module)}.{program.__name__}")


def _findings() -> Iterator[object]:
    for module in CATALOGUE:
        for case in getattr(module, "FOUND", ()):
            yield pytest.param(case, id=f"{_short(module)}.{case.name}")


def _check(program: Program) -> Result:
    # the program's own module is patched: its by-name imports and the objects it made at import
    return run_patched(sys.modules[program.__module__], program, time_limit=60)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("program", list(_proofs()))
def test_a_correct_program_is_proved_race_free(program: Program) -> None:
    result = _check(program)
    assert_proved_race_free(result)
    assert result.races  # the detector ran in every execution
    if getattr(sys.modules[program.__module__], "PROOFS_INTERLEAVE", False):
        assert result.executions > 1, result.report()  # the threads' operations were interleaved


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", list(_findings()))
def test_a_bug_is_found_and_told(case: Fails | Races) -> None:
    result = _check(case.program)
    if isinstance(case, Races):
        assert_race(result, sys.modules[case.program.__module__], case.what, *case.sites)
        return
    assert_fails(result, case.kind, case.words)
