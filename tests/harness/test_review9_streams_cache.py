"""The ninth outside review's findings on the streams, cached functions and a queue's size
(session 41, ``review9_programs.py``): a library's rebinding of ``sys.stdout`` was no operation
(s44), ``cache_clear`` commuted with another thread's store (s28), a bounded ``lru_cache`` kept
every entry (s32), and the compiled queue kept the ``maxsize`` it was made with (s40)."""

from __future__ import annotations

import builtins
import sys
import types
from collections.abc import Callable
from functools import partial

import pytest

from model_checks.harness import Options, Result, patch_streams, patched
from model_checks.harness.stateful import check_states
from tests.harness import review9_programs as prog
from tests.harness.patched_runs import assert_outcomes, module_from_source, run_with_outcomes

pytestmark = pytest.mark.timeout(120)

SEARCHES = ["dpor-ipb", "dfs"]


def _run(program: Callable[[], object], strategy: str = "dpor-ipb") -> Result:
    """The check of ``program``, each execution's outcome what it returned."""
    return run_with_outcomes(prog, program, strategy=strategy)


def _assertion(result: Result) -> str:
    assert result.verdict == "failed" and result.failure is not None, result.report()
    return result.failure.message


@pytest.mark.parametrize("strategy", SEARCHES)
@pytest.mark.parametrize(
    "program",
    [prog.mock_stdout_buggy, prog.patch_object_buggy, prog.helper_redirect_buggy, prog.pytest_capture_buggy],
)
def test_a_library_rebinding_stdout_puts_another_threads_print_inside(
    program: Callable[[], object], strategy: str
) -> None:
    result = _run(program, strategy)
    assert "worker line" in _assertion(result), result.report()
    assert any("prints made operations, search restarted" in note for note in result.notes), result.notes


@pytest.mark.parametrize("strategy", SEARCHES)
@pytest.mark.parametrize("program", [prog.mock_stdout_correct, prog.helper_redirect_correct])
def test_a_capture_after_the_join_is_proved(program: Callable[[], object], strategy: str) -> None:
    result = _run(program, strategy)
    assert result.verdict == "exhaustive", result.report()


def test_a_program_that_never_rebinds_keeps_print_with_no_step() -> None:
    printing, silent = _run(prog.quiet_printers), _run(prog.quiet_silent)
    assert printing.verdict == silent.verdict == "exhaustive", printing.report()
    assert printing.outcomes == silent.outcomes == {2}
    # the same executions and steps: no print, no ``sys.stdout.write`` is a step
    assert (printing.executions, printing.steps) == (silent.executions, silent.steps)
    assert builtins.print is patch_streams._real_print and type(sys) is types.ModuleType


_module = partial(module_from_source, name="review9_streams", filename="<review9>")


def test_without_a_redirection_named_print_is_the_builtin_and_rebindings_are_watched() -> None:
    reads = _module("import sys\ndef f():\n    print('x', file=sys.stdout)\n")
    named = {name: fake for _, name, _, fake in patch_streams.at_patching((reads,))}
    assert named["print"] is patch_streams._real_print
    assert named["__class__"] is patch_streams._SysWatch


# --- cached functions ---


@pytest.mark.parametrize("strategy", SEARCHES)
def test_cache_clear_is_ordered_with_another_threads_store(strategy: str) -> None:
    assert "stale value cached after cache_clear" in _assertion(_run(prog.cache_clear_buggy, strategy))
    proved = _run(prog.cache_clear_correct, strategy)
    assert proved.verdict == "exhaustive", proved.report()


def test_cache_info_is_ordered_with_another_threads_look_up() -> None:
    result = _run(prog.cache_info_misses)
    assert result.verdict == "exhaustive" and result.outcomes == {0, 1}, result.report()


@pytest.mark.parametrize(
    ("maxsize", "keys"),
    [(1, (1, 2, 1)), (2, (1, 2, 1, 3, 2)), (2, (1, 2, 3, 1)), (0, (1, 1)), (None, (1, 2, 1)), (3, (1, 1, 2))],
)
def test_a_bounded_cache_evicts_as_cpythons(maxsize: int | None, keys: tuple[int, ...]) -> None:
    real = prog.lru_calls(maxsize, keys)  # (unpatched: CPython's own cache, real threads)
    result = _run(lambda: prog.lru_calls(maxsize, keys))
    assert result.verdict == "exhaustive" and result.outcomes == {real}, (real, result.report())


def test_review9_s32_as_written_is_proved() -> None:
    result = _run(prog.lru_evict_one)
    assert result.verdict == "exhaustive", result.report()


@pytest.mark.parametrize("strategy", SEARCHES)
def test_two_threads_hits_of_a_bounded_cache_are_ordered(strategy: str) -> None:
    # hit 1 then 2: 1 is evicted by f(3), then 2 by f(1); hit 2 then 1: 2 is evicted by f(3)
    result = _run(lambda: tuple(prog.lru_hits_order()), strategy)
    assert_outcomes(result, {(1, 2, 3, 1, 2), (1, 2, 3, 2)})


def test_hits_are_ordered_only_once_a_cache_evicts() -> None:
    # a bounded cache that never evicts: its hits commute, as an unbounded one's (11 executions;
    # ordered from the start, 565)
    bounded, unbounded = _run(lambda: prog.warm_hits(128)), _run(lambda: prog.warm_hits(None))
    assert bounded.verdict == unbounded.verdict == "exhaustive", bounded.report()
    assert bounded.executions == unbounded.executions and not bounded.notes, bounded.report()
    evicting = _run(lambda: tuple(prog.lru_hits_order()))
    assert any("evicted: bounded caches' look-ups made writes" in n for n in evicting.notes), evicting.notes


# --- a queue's maxsize ---


@pytest.mark.parametrize("strategy", SEARCHES)
def test_a_queues_maxsize_is_read_at_each_put(strategy: str) -> None:
    proved = _run(prog.queue_raised_correct, strategy)
    assert proved.verdict == "exhaustive", proved.report()
    failed = _run(prog.queue_lowered_buggy, strategy)
    assert failed.verdict == "failed" and failed.failure is not None, failed.report()
    assert "Full" in failed.failure.message, failed.report()


def test_reading_a_queues_maxsize_is_ordered_with_setting_it() -> None:
    result = _run(prog.queue_maxsize_read)
    assert result.verdict == "exhaustive" and result.outcomes == {1, 3}, result.report()


@pytest.mark.parametrize(
    "program",
    [prog.mock_stdout_buggy, prog.patch_object_buggy, prog.helper_redirect_buggy, prog.pytest_capture_buggy],
)
def test_state_pruning_starts_again_when_a_library_rebinds_stdout(program: Callable[[], object]) -> None:
    def test(rt: object) -> None:
        program()

    with patched(prog):
        result = check_states(test, Options(time_limit=60))
    assert "worker line" in _assertion(result), result.report()
