"""The state search reads a module the program made (``types.ModuleType``) as state, as it reads
the program's own modules; before, a bug whose value was kept in one was proved absent (outside
review 17's p38: "exhaustive" under ``--strategy states``, failing in a real run)."""

from __future__ import annotations

import _thread
import builtins
import sys
import types

import pytest

from model_checks.harness import Options, patched
from model_checks.harness.rt.under_test import _program_module
from model_checks.harness.stateful import check_states
from tests.harness import program_made_modules as prog

pytestmark = pytest.mark.timeout(120)


def test_a_bug_kept_in_a_module_the_program_made_is_found_by_the_state_search() -> None:
    with patched(prog):
        result = check_states(lambda rt: prog.order_kept_in_a_made_module(), Options(time_limit=60))
    assert result.failure is not None and result.failure.kind == "assertion", result.report()


def test_the_interpreters_own_modules_stay_atoms() -> None:
    assert _program_module(types.ModuleType("stats"))
    assert not any(_program_module(m) for m in (sys, builtins, _thread))
