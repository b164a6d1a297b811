"""The ninth outside review's findings on the process's state (session 41,
``review9_process_programs.py``): the working directory read or written by library code in a
controlled thread (pathlib's open, ``os.path``, ``contextlib.chdir``) was no operation, nor were
the umask, the collector's switch and the int digit limit, so programs failing in real runs were
"exhaustive" after one or two executions; ``signal.set_wakeup_fd`` in a worker went through."""

from __future__ import annotations

import gc
import os
import signal
import sys
import types
from collections.abc import Callable
from functools import partial

import pytest

from model_checks.harness import own_code, patch_shared
from model_checks.harness.rt.scheduler import UsageError
from tests.harness import review8_signal_programs as prog8
from tests.harness import review9_process_programs as prog
from tests.harness.patched_runs import assert_outcomes, module_from_source, run_with_outcomes

pytestmark = pytest.mark.timeout(180)


# the check of a program, each execution's outcome what it returned
_run = partial(run_with_outcomes, prog)


@pytest.mark.parametrize(
    ("program", "outcomes"),
    [
        (prog.cwd_pathlib, {"A", "B"}),
        (prog.cwd_os_path, {(True, True), (True, False), (False, False)}),
        (prog.contextlib_chdir, {"A", "B"}),
        (prog.cwd_thread_target, {"A", "B"}),
        (prog.umask_read, {0o022, 0o077}),
        (prog.umask_file_mode, {0o644, 0o600}),
        (prog.gc_section, {False, True}),
        (prog.int_digits, {"1001", "ValueError"}),
    ],
)
@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_the_process_state_library_code_uses_is_an_operation(
    program: Callable[[], object], outcomes: set[object], strategy: str
) -> None:
    """BUGGY: every outcome a real run gives, the bad one among them (each was one order only)."""
    umask, collector, digits = os.umask(0o022), gc.isenabled(), sys.get_int_max_str_digits()
    os.umask(umask)
    result = _run(program, strategy=strategy)
    assert_outcomes(result, outcomes)
    # and what the program changed does not outlive the check
    assert os.umask(umask) == umask and gc.isenabled() == collector
    assert sys.get_int_max_str_digits() == digits


@pytest.mark.parametrize(
    ("program", "outcome"),
    [
        (prog.cwd_pathlib_ordered, "B"),
        (prog.contextlib_chdir_after_join, "A"),
        (prog.umask_read_locked, 0o022),
        (prog.gc_section_locked, False),
        (prog.int_digits_locked, "1001"),
        (prog.wakeup_fd_main_reset, -1),
    ],
)
@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_the_correct_twins_are_proved(program: Callable[[], object], outcome: object, strategy: str) -> None:
    result = _run(program, strategy=strategy)
    assert_outcomes(result, {outcome})


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_set_wakeup_fd_in_a_worker_raises_cpythons_value_error(strategy: str) -> None:
    """s30: every real run's worker gets ``ValueError`` (the check proved it went through)."""
    result = _run(prog.wakeup_fd_worker, strategy=strategy)
    assert_outcomes(result, {(prog.WAKEUP_REFUSED,)})


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_set_wakeup_fd_in_the_main_thread_gets_a_modelled_signals_byte(strategy: str) -> None:
    """It was refused by name: a modelled signal (never sent) ran no C handler, wrote no byte."""
    result = _run(prog.wakeup_fd_main, strategy=strategy)
    assert_outcomes(result, {(bytes([signal.SIGUSR1]), ("handled",))})
    assert signal.set_wakeup_fd(-1) == -1  # (and the process's wakeup fd is as the check found it)


def test_set_wakeup_fd_on_the_threads_back_end_is_refused_by_name() -> None:
    """There the main controlled thread is no process's main thread: CPython's call would raise."""
    with pytest.raises(UsageError, match=r"signal\.set_wakeup_fd\(\) .* threads back end"):
        run_with_outcomes(prog8, prog8.wakeup_fd_set_by_main, backend="threads")


def test_a_wakeup_fd_left_set_is_put_back_after_each_execution() -> None:
    """review 8's program, refused by name before: it leaves its (closed) pipe as the wakeup fd."""
    result = run_with_outcomes(prog8, prog8.wakeup_fd_set_by_main)
    assert result.verdict == "exhaustive", result.report()
    assert signal.set_wakeup_fd(-1) == -1


_module = partial(module_from_source, name="review9_names", filename="<review9>")


def test_a_program_naming_no_setter_keeps_cpythons_calls() -> None:
    plain = _module("import os, gc, sys\ndef f():\n    open('x'); os.stat('y'); gc.collect(); str(10**5)\n")
    assert patch_shared.at_patching((plain,)) == []
    held = _module("from contextlib import chdir as cd\n")
    names = {name for _, name, _, _ in patch_shared.at_patching((held,))}
    assert {"chdir", "getcwd", "open", "stat"} <= names


def _frame_of(filename: str, inner: str | None = None) -> types.FrameType:
    """A frame of code in ``filename`` (called from code in ``inner``'s caller position)."""
    space: dict[str, object] = {"sys": sys}
    exec(compile("def get():\n    return sys._getframe()\n", filename, "exec"), space)
    if inner is not None:
        space["lib"] = space["get"]
        exec(compile("def call():\n    return lib()\n", inner, "exec"), space)
        return space["call"]()  # type: ignore[operator,no-any-return]
    return space["get"]()  # type: ignore[operator,no-any-return]


def test_a_call_counts_from_the_program_through_a_library_never_from_the_harness() -> None:
    library = os.__file__  # (the standard library's folder)
    harness = own_code.HARNESS + "patch.py"
    program = "/somewhere/program.py"
    assert patch_shared._from_program(_frame_of(program))
    assert patch_shared._from_program(_frame_of(library, inner=program))  # pathlib, called by it
    assert not patch_shared._from_program(_frame_of(harness))
    assert not patch_shared._from_program(_frame_of(library, inner=harness))  # the harness's
