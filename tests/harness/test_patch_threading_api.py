"""Patch mode and the rest of the ``threading`` API: each program here was a wrong answer of an
outside review (session 36): lanecheck itself exited with the program's ``sys.exit`` status and no
verdict, joined the real main thread for ever, or called a correct program not deterministic."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Options, Result, check, patched
from tests.harness import threading_api_programs as prog


def _run(program: Callable[[], object]) -> Result:
    with patched(prog):
        return check(lambda rt: program(), Options(time_limit=60))


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("program", "kind", "words"),
    [
        (prog.racy_then_thread_exit, "data_race", "data race on Box.v"),
        (prog.exit_with_status, "exception", "ended the program with status 3 (SystemExit)"),
        (prog.low_level_thread_race, "data_race", "data race on Box.v"),
    ],
    ids=lambda p: getattr(p, "__name__", ""),
)
def test_a_bug_is_reported_not_lost(program: Callable[[], object], kind: str, words: str) -> None:
    result = _run(program)
    assert result.failure is not None and result.failure.kind == kind, result.report()
    assert words in result.failure.message, result.failure.message


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "program",
    [
        prog.threads_exit_quietly,
        prog.join_every_other_thread,
        prog.main_thread_identity,
        prog.futures_as_completed,
        prog.futures_waited,
    ],
    ids=lambda p: p.__name__,
)
def test_a_correct_program_is_proved(program: Callable[[], object]) -> None:
    result = _run(program)
    assert result.verdict == "exhaustive", result.report()
