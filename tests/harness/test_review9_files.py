"""Review 9: shared state kept in a regular file. A file object's reads and writes were no
accesses, so two threads' unlocked read-modify-write of a counter in a file (s21) was proved
"exhaustive (for a data-race-free program)"; now each is an access of the file (one location per
device and inode: ``race_files``). And a finite loop of more ``os.read`` calls than ``max_steps``
(s17) was reported as a possible busy-wait."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Options
from model_checks.harness.options import Strategy
from tests.harness import review9_files_programs as prog
from tests.harness.patched_runs import assert_fails, assert_proved_race_free, assert_race, run_patched

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_a_counter_kept_in_a_file_is_a_race(strategy: Strategy) -> None:
    result = run_patched(prog, prog.file_counter, options=Options(strategy=strategy, time_limit=60))
    failure = assert_race(result, prog, f"file {prog.COUNTER}", "f.write(str(n + 1))")
    assert "read (read())" in failure.message and "write (" in failure.message, failure.message


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_its_locked_twin_is_proved(strategy: Strategy) -> None:
    assert_proved_race_free(
        run_patched(prog, prog.file_counter_locked, options=Options(strategy=strategy, time_limit=60))
    )


def test_a_pwrite_races_with_a_file_objects_read() -> None:
    result = run_patched(prog, prog.pwrite_against_a_file_read, options=Options(time_limit=60))
    assert_race(result, prog, f"file {prog.SCRATCH}", "head = f.read(4)", "os.pwrite(fd, b")


@pytest.mark.parametrize("program", [prog.two_readers_of_a_file, prog.two_appenders])
def test_two_readers_or_appenders_of_a_file_are_proved(program: Callable[[], None]) -> None:
    assert_proved_race_free(run_patched(prog, program, options=Options(time_limit=60)))


def test_a_long_loop_of_io_calls_is_not_called_a_busy_wait() -> None:
    result = run_patched(prog, prog.many_reads, options=Options(time_limit=60, max_steps=300))
    failure = assert_fails(result, "livelock", "max_steps=300", "I/O calls (os.read)", "raise max_steps")
    assert "busy-wait, the schedule is unfair" not in failure.message, failure.message


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_mkstemp_inside_the_explored_function_is_deterministic(strategy: Strategy) -> None:
    """s17b: re-checked on session 41's main (it was "not deterministic" in review 9): the
    shared-descriptor bug is found."""
    result = run_patched(
        prog, prog.shared_descriptor_made_inside, options=Options(strategy=strategy, time_limit=60)
    )
    assert_fails(result, "assertion", "AssertionError")
