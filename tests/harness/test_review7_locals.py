"""The seventh review's programs on ``threading.local`` subclasses made at import and on
whole-object writes (``review7_locals_programs.py``), each held to what its module says it gives;
and what patching leaves behind."""

from __future__ import annotations

import _thread
import subprocess
import sys
from pathlib import Path

import pytest

from model_checks.harness import Result
from tests.harness import review7_locals_programs as programs
from tests.harness.expected import Fails, Program, Races
from tests.harness.patched_runs import assert_fails, assert_proved_race_free, assert_race, run_patched

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]


def _check(program: Program) -> Result:
    return run_patched(programs, program, time_limit=60)


@pytest.mark.parametrize("program", programs.PROVED, ids=lambda p: p.__name__)
def test_a_correct_program_is_proved_race_free(program: Program) -> None:
    result = _check(program)
    assert_proved_race_free(result)
    assert result.executions > 1, result.report()  # the threads' operations were interleaved


@pytest.mark.parametrize("case", programs.FOUND, ids=lambda c: c.name)
def test_a_bug_is_found_and_told(case: Fails | Races) -> None:
    result = _check(case.program)
    if isinstance(case, Races):
        assert_race(result, sys.modules[case.program.__module__], case.what, *case.sites)
    else:
        assert_fails(result, case.kind, case.words)


def test_the_import_namespace_is_as_it_was_after_patching() -> None:
    # the main thread's namespace (the import's) was each execution's: it is the import's again
    assert_proved_race_free(_check(programs.local_subclass_init_args))
    assert programs.conn.used == 0
    assert isinstance(programs.conn, _thread._local)
    assert "__getattribute__" not in vars(programs.Conn)  # the class is the program's again
    assert_proved_race_free(_check(programs.local_reached_depth))
    assert type(programs.Registry.tls) is _thread._local  # the real ones are back
    assert programs.settings["registry"] is programs.Registry.tls


GATE = """\
from model_checks.harness import check, patched
from model_checks.harness.race_swaps import CLASS_READS
from tests.harness import {module} as programs
with patched(programs):
    result = check(lambda rt: programs.{program}(), time_limit=60)
print(result.verdict, CLASS_READS[0])
"""


@pytest.mark.parametrize(
    ("module", "program", "reads"),
    [
        ("review6_programs", "handler_attr_locked", False),  # no class stored anywhere in it
        ("review7_locals_programs", "dict_swap_locked", True),  # one stored by another function
    ],
)
def test_method_look_ups_are_reads_of_the_class_only_where_a_program_stores_one(
    module: str, program: str, reads: bool
) -> None:
    # Recording every method call would cost every program a handler call per call: the reads
    # are on once code under test that stores an object's class is seen, before its threads run
    # (the module of the first code traced is looked at whole). The switch is the process's.
    done = subprocess.run(
        [sys.executable, "-c", GATE.format(module=module, program=program)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["exhaustive", str(reads)], done.stdout + done.stderr
