"""Outside review 14, C2: nearly every failure report said "steps changed process-wide state
(linecache.cache)" of programs that never touch ``linecache``. The harness's own reading of the
program's lines for the report (a race's sites, a traceback) filled ``linecache.cache`` within
the failing step, and the process watch took it for the program's write (``own_lines``). A
program whose threads do change it is still noted."""

from __future__ import annotations

import linecache
from collections.abc import Callable

import pytest

from tests.harness import linecache_programs as prog
from tests.harness.patched_runs import run_patched

pytestmark = pytest.mark.timeout(120)

NOTE = "process-wide state (linecache.cache)"


def _failed_without_note(program: Callable[[], None], kind: str) -> None:
    # (not yet read: the report's read of this file is then a change of linecache.cache)
    linecache.cache.pop(prog.__file__, None)
    result = run_patched(prog, program, time_limit=60)
    assert result.verdict == "failed" and result.failure is not None, result.report()
    assert result.failure.kind == kind, result.report()
    assert not any(NOTE in n for n in result.notes), result.notes


def test_a_data_race_report_carries_no_linecache_note() -> None:
    _failed_without_note(prog.racy, "data_race")


def test_an_assertion_report_carries_no_linecache_note() -> None:
    _failed_without_note(prog.asserting, "assertion")


def test_an_exception_report_carries_no_linecache_note() -> None:
    _failed_without_note(prog.raising, "exception")


def test_the_report_still_shows_the_source_lines() -> None:
    linecache.cache.pop(prog.__file__, None)
    result = run_patched(prog, prog.racy, time_limit=60)
    assert "box.value = box.value + 1" in result.report(), result.report()


def test_threads_that_change_linecache_are_still_noted() -> None:
    result = run_patched(prog, prog.reading_lines, time_limit=60)
    assert result.verdict == "exhaustive", result.report()
    assert any(NOTE in n for n in result.notes), result.notes


def test_an_exit_status_report_carries_no_linecache_note() -> None:
    _failed_without_note(prog.exiting, "exception")
