"""The eighth outside review's findings on the process's state (session 40,
``review8_process_programs.py``): what one execution left in the process failed a correct program
at its second or third execution; the process's state two threads share was no operation, so a
program failing in a third of its real runs was proved; and the main thread's ident taken at
import was not the controlled main thread's."""

from __future__ import annotations

import builtins
import os
import signal
import socket
import sys
import tempfile
import threading
import types
from collections.abc import Callable
from functools import partial

import pytest

from model_checks.harness import patch_streams
from tests.harness import review8_process_programs as prog
from tests.harness.patched_runs import (
    assert_fails,
    assert_outcomes,
    assert_reported,
    module_from_source,
    run_with_outcomes,
)

pytestmark = pytest.mark.timeout(120)


# the check of a program, each execution's outcome what it returned
_run = partial(run_with_outcomes, prog)


@pytest.mark.parametrize(
    "program",
    [
        prog.builtins_flag,
        prog.relative_folder,
        prog.handler_left_set,
        prog.default_timeout,
        prog.raised_limit,
    ],
)
def test_each_execution_starts_from_the_process_as_the_first_found_it(
    program: Callable[[], object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(prog.BASE)
    handler, limit = signal.getsignal(signal.SIGUSR1), sys.getrecursionlimit()
    result = _run(program)
    assert result.verdict == "exhaustive", result.report()
    assert result.executions > 1 and result.outcomes == {2}, result.report()
    # and nothing the program changed outlives the check
    assert not hasattr(builtins, "_review8_started")
    assert os.getcwd() == os.path.realpath(prog.BASE)
    assert signal.getsignal(signal.SIGUSR1) is handler
    assert socket.getdefaulttimeout() is None
    assert sys.getrecursionlimit() == limit


def test_what_the_library_makes_on_first_use_is_made_again_each_execution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """r126: the first execution took ``tempfile``'s lock to find the temporary folder and the
    second did not, so the check stopped with "the test is not deterministic"."""
    monkeypatch.setattr(tempfile, "tempdir", None)  # (as in a fresh process: found on first use)
    result = _run(prog.temp_folder_first_use)
    assert result.verdict == "exhaustive", result.report()
    assert result.executions > 1 and result.outcomes == {2}, result.report()
    assert tempfile.tempdir is None  # (and the check leaves it as it found it)


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_a_folder_an_execution_made_is_gone_when_the_next_begins_beside_a_chdir(
    strategy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """r126 as written: ``mkdtemp()`` names its folder alike in every execution, so the folder the
    previous one made must be gone. In a program that names ``chdir`` the working directory's
    reads were put around CPython's ``mkdir`` and ``open``, not around the ones that remember
    what an execution made (nor refuse a FIFO): "the test is not deterministic"."""
    monkeypatch.setattr(tempfile, "tempdir", None)  # (a fresh process's: made on first use)
    monkeypatch.setattr(tempfile, "_name_sequence", None)
    result = _run(prog.cwd_race_in_a_temporary_folder, strategy=strategy)
    assert_outcomes(result, {True, False})


@pytest.mark.parametrize(
    ("program", "outcomes"),
    [
        (prog.limit_race, {("overflow",), (prog.LIMIT_AT_IMPORT + 500,)}),
        (prog.cwd_race, {True, False}),
        (prog.stdout_assigned, {"main\n", "main\nworker\n", "worker\nmain\n"}),
        (prog.stdout_taken, {"capture", "real"}),
    ],
)
@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_the_process_state_two_threads_share_is_an_operation(
    program: Callable[[], object], outcomes: set[object], strategy: str
) -> None:
    """Every outcome a real run gives, the bad one among them (it was one execution,
    "exhaustive", with the good outcome only)."""
    result = _run(program, strategy=strategy)
    assert_outcomes(result, outcomes)
    # and what stood in while patched is CPython's again
    assert type(sys) is types.ModuleType and builtins.print is _PRINT and os.chdir is _CHDIR


_PRINT, _CHDIR = builtins.print, os.chdir


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dpor", "dfs"])
def test_a_write_through_sys_stdout_is_run_inside_another_threads_redirection(strategy: str) -> None:
    """r029: the worker's ``sys.stdout.write`` was no operation, so DPOR never ran it inside
    main's ``redirect_stdout`` ("exhaustive" after one execution); there it writes main's
    capture, unordered with main's own write."""
    result = _run(prog.stdout_written, strategy=strategy)
    assert_reported(result, "data_race", "data race on StringIO", 'sys.stdout.write("worker\\n")')
    assert type(sys) is types.ModuleType


@pytest.mark.parametrize(
    ("program", "outcomes"),
    [
        (prog.main_ident_at_import, {(True, True)}),
        (prog.native_id_at_import, {("main-conn", (None,))}),
        (prog.main_thread_at_import, {(True, True, True, True, False, False)}),
    ],
)
def test_the_main_thread_has_the_ident_taken_at_import(
    program: Callable[[], object], outcomes: set[object]
) -> None:
    result = _run(program)
    assert_outcomes(result, outcomes)
    assert prog.MAIN is threading.main_thread()  # (the real one again, once patching ended)


def test_a_fast_path_for_the_main_thread_known_at_import_races() -> None:
    """r117: the main thread's unlocked write (its ident taken at import) and the worker's."""
    assert_fails(_run(prog.main_only_fast_path), "data_race")


_module = partial(module_from_source, name="review8_streams", filename="<review8>")


def test_print_stays_the_builtin_unless_the_program_assigns_a_stream() -> None:
    reads = _module("import sys\ndef f():\n    print('x', file=sys.stdout)\n    sys.stderr.write('y')\n")
    assigns = _module("import sys, io\ndef f():\n    sys.stdout = io.StringIO()\n")
    # (since session 41 a program naming neither has ``sys``'s class watch for a library's
    # rebinding, ``patch_streams._SysWatch``: ``print`` is the builtin until one is seen)
    kept = {name: fake for _, name, _, fake in patch_streams.at_patching((reads,))}
    assert kept["print"] is builtins.print and kept["__class__"] is patch_streams._SysWatch
    made = {name: fake for _, name, _, fake in patch_streams.at_patching((assigns,))}
    assert made["print"] is not builtins.print and made["__class__"] is patch_streams._Sys
