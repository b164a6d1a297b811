"""Review 10's false proofs on process-wide rebindings (rows 4, 5, 7): a builtin's rebinding
(``race_builtins``), ``mock.patch`` of a module's attribute or dict (``patch_mock``) and a
descriptor's capture with ``os.dup2`` (``patch_descriptors``) were no accesses, so a thread's
rebinding and another thread's use were taken to commute: "exhaustive, no race"."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Options
from model_checks.harness.options import Strategy
from tests.harness import review10_rebind_programs as prog
from tests.harness.patched_runs import (
    assert_fails,
    assert_proved_race_free,
    assert_race,
    run_patched,
    source_line,
)

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_a_builtin_rebound_while_another_thread_calls_it_is_a_race(strategy: Strategy) -> None:
    result = run_patched(prog, prog.builtin_rebound, options=Options(strategy=strategy, time_limit=60))
    assert_race(result, prog, "builtins.oct", "builtins.oct = real", "seen.append(oct(8))")


def test_a_rebinding_seen_after_the_look_up_restarts_the_search() -> None:
    result = run_patched(prog, prog.builtin_rebound_by_setattr_reader_first, options=Options(time_limit=60))
    assert_race(result, prog, "builtins.oct", "seen.append(oct(8))")
    assert any("builtins.oct rebound at" in note and "search restarted" in note for note in result.notes), (
        result.notes
    )


def test_mock_patch_of_a_builtin_is_a_write_of_it() -> None:
    result = run_patched(prog, prog.builtin_mock_patched, options=Options(time_limit=60))
    assert_race(result, prog, "builtins.oct", "with patching:", "seen.append(oct(8))")


def test_mock_patch_of_a_modules_function_is_a_write_of_it() -> None:
    result = run_patched(prog, prog.mock_patched_function, options=Options(time_limit=60))
    assert_race(result, prog, "global fetch", "with mock.patch(__name__", "got.append(fetch())")


def test_mock_patch_dict_writes_the_dict() -> None:
    result = run_patched(prog, prog.mock_patched_dict, options=Options(time_limit=60))
    assert_race(
        result,
        prog,
        "dict['mode'] and dict (whole)",
        "with patching:",
        'got.append(CONFIG["mode"])',
    )


def test_a_descriptor_captured_with_dup2_while_another_thread_writes_to_it_is_a_race() -> None:
    result = run_patched(prog, prog.descriptor_captured, options=Options(time_limit=60))
    failure = assert_fails(
        result, "data_race", "data race on descriptor ", "write (os.dup2())", "read (os.write())"
    )
    # (the capture's or the restoring dup2: whichever the schedule ran last before the write)
    dup2 = (source_line(prog, "os.dup2(w, target)"), source_line(prog, "os.dup2(saved, target)"))
    assert any(line in failure.message for line in dup2), failure.message
    assert source_line(prog, 'os.write(target, b"log line') in failure.message, failure.message


@pytest.mark.parametrize(
    "program",
    [
        prog.builtin_rebound_locked,
        prog.mock_patched_function_locked,
        prog.descriptor_captured_locked,
        prog.own_descriptors,
    ],
)
def test_the_locked_twins_are_proved(program: Callable[[], None]) -> None:
    assert_proved_race_free(run_patched(prog, program, options=Options(time_limit=60)))
