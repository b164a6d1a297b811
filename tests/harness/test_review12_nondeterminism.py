"""Review 12: correct programs whose check ended "the test is not deterministic", a non-answer
(``review12_nondet_programs.py``). c03: a thread's child process run with both pipes captured,
whose ``communicate`` made one operation per ``os.read`` of the child's output, as many as the
child's timing made (``patch_children``). c11/r05 and c02 (temporary folders, ``tempfile`` with
``logging`` to a temporary file) had a verdict since session 44's earlier fixes, "bounded" by
the time limit: ``tempfile``'s eight draws a name were operations on one shared generator
(``patch_random._next_name``); proved now. c02's logger configured again in the function failed
at its second execution: the handler found at the check's start was put back closed
(``patch_logging._Stream``). Each buggy variant is still found, and each correct program is run
for real too (its ground truth)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import pytest

from model_checks.harness import Result
from tests.harness import review12_nondet_programs as prog
from tests.harness.patched_runs import assert_fails, assert_proved_race_free, run_patched

CORRECT_WITH_CHILDREN = [
    prog.child_prints_the_variable_its_thread_set,
    prog.shell_child_with_input_not_joined,
    prog.check_output_of_an_inherited_variable,
]
CORRECT_WITH_FILES = [
    prog.temporary_directories_round_trip,
    prog.mkdtemp_then_rmtree_not_joined,
    prog.named_temporary_files_logged,
    prog.basic_config_kept_open_with_mkstemp,
    prog.logger_configured_again,
]


def _environment_back(result: Result) -> Result:
    """``result``, once the environment is as before the check (the programs' variables gone)."""
    assert not [name for name in os.environ if name.startswith("LC_R12_")], result.report()
    return result


@pytest.mark.timeout(90)
@pytest.mark.parametrize("program", CORRECT_WITH_CHILDREN, ids=lambda p: p.__name__)
def test_a_childs_output_read_as_it_comes_is_proved(program: Callable[[], None]) -> None:
    """Each proved (it was "not deterministic" at one of its first executions: the child's output
    came in other pieces)."""
    result = run_patched(prog, program, time_limit=60)
    assert_proved_race_free(_environment_back(result))
    assert result.executions >= 2, result.report()


@pytest.mark.timeout(60)
def test_a_child_before_the_variable_is_set_is_found() -> None:
    result = run_patched(prog, prog.child_may_start_before_the_variable_is_set, time_limit=30)
    assert_fails(_environment_back(result), "assertion", "the child ran before the variable was set")


@pytest.mark.timeout(90)
@pytest.mark.parametrize("program", CORRECT_WITH_FILES, ids=lambda p: p.__name__)
def test_temporary_files_in_threads_are_proved(program: Callable[[], None]) -> None:
    """Each proved in seconds: bounded before by its time limit (tens of thousands of executions:
    the names' draws, eight a name, were operations on the one generator of ``tempfile``'s name
    sequence, and the sequence was made again by each execution, a process-wide change)."""
    result = run_patched(prog, program, time_limit=60)
    assert_proved_race_free(result)
    assert result.elapsed < 30, result.report()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "program",
    [prog.one_fixed_name_unlocked, prog.logged_contents_of_one_temporary_name],
    ids=lambda p: p.__name__,
)
def test_one_temporary_name_written_unlocked_is_found(program: Callable[[], None]) -> None:
    result = run_patched(prog, program, time_limit=30)
    assert result.verdict == "failed", result.report()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("program", CORRECT_WITH_CHILDREN + CORRECT_WITH_FILES, ids=lambda p: p.__name__)
def test_each_correct_program_passes_twenty_real_runs(
    program: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As twenty runs of a fresh interpreter: the environment as it was before each, and each
    run's threads ended (the interpreter's exit waits for them) before the next; an exception
    in any thread fails it."""
    raised: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    saved = dict(os.environ)
    try:
        for _ in range(20):
            program()
            join_all_but(threading.main_thread())
            os.environ.clear()
            os.environ.update(saved)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert not raised, raised


def join_all_but(main: threading.Thread) -> None:
    for thread in threading.enumerate():
        if thread is not main and not thread.daemon:
            thread.join()


@pytest.mark.timeout(60)
def test_the_time_limit_in_a_childs_wait_is_a_bound() -> None:
    """The time limit reached in a real-time wait for a child (``patch_io_outside.abandon``) while
    the search replays a prefix parked the thread, and the replay's next step found it not
    enabled: "not deterministic" where the verdict is "bounded" (``Execution._next`` now ends an
    abandoned execution before it asks for the enabled actions)."""
    result = run_patched(prog, prog.a_child_then_a_lock_beside_a_thread, time_limit=0.7)
    assert result.verdict == "bounded", result.report()
