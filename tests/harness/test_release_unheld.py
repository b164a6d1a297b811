"""``race_shadow.Held.release_unheld`` looks only at the objects whose reference count moved or
whose locations' sites changed since its last call (session 45): the programs of
``release_unheld_programs.py`` pin the cases that must still be let go."""

from __future__ import annotations

import pytest

from tests.harness import release_unheld_programs as programs
from tests.harness.expected import Program
from tests.harness.patched_runs import assert_proved_race_free, run_patched


@pytest.mark.timeout(120)
@pytest.mark.parametrize("program", programs.PROVED, ids=lambda p: p.__name__)
def test_an_object_only_the_detector_holds_is_let_go(program: Program) -> None:
    assert_proved_race_free(run_patched(programs, program, time_limit=60))
