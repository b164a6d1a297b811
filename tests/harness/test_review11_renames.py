"""Review 11, #17: the atomic publish (write ``P.tmp``, ``os.replace(tmp, P)``; a reader opens
``P``) was a data race on ``P`` whose write was the temporary file's: the rename ordered nothing,
and the next temporary file took the inode number of the version the rename replaced. Now a rename
writes both names and an open of a renamed name reads it (``patch_renames``), and a replaced file
is a location no more (``race_files.retire``)."""

from __future__ import annotations

import os

import pytest

from model_checks.harness import Options
from model_checks.harness.options import Strategy
from tests.harness import review11_rename_programs as prog
from tests.harness.patched_runs import (
    assert_fails,
    assert_outcomes,
    assert_proved_race_free,
    assert_race,
    run_patched,
    run_with_outcomes,
)

pytestmark = pytest.mark.timeout(120)

V0, V1, V2 = "v0-complete", "v1-complete", "v2-complete"


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_the_atomic_publish_is_proved(strategy: Strategy) -> None:
    result = run_with_outcomes(prog, prog.publish, strategy=strategy)
    assert_proved_race_free(result)
    # every reader sees whole versions only, and some schedule sees each one
    seen = {version for outcome in result.outcomes for version in outcome}  # type: ignore[attr-defined]
    assert seen == {V0, V1, V2}, result.outcomes


def test_the_atomic_publish_through_pathlib_is_proved() -> None:
    result = run_with_outcomes(prog, prog.publish_by_pathlib)
    assert_proved_race_free(result)
    assert_outcomes(result, {(V0,), (V0, V1), (V1,)})


def test_a_config_written_in_place_is_a_race() -> None:
    result = run_patched(prog, prog.in_place, options=Options(time_limit=60))
    assert_race(result, prog, f"file {prog.CONFIG}", "seen.append(f.read())")


def test_a_config_written_in_place_shows_its_torn_read_with_interleaved_races() -> None:
    """The race is recorded by the patched file calls, outside the tracer: its scheduling point
    has no tracing guard to lower (the check stopped with "this interpreter's thread state is not
    CPython 3.11's layout")."""
    result = run_with_outcomes(prog, prog.in_place, interleave_races=True, time_limit=60)
    assert_fails(result, "data_race", f"file {prog.CONFIG}")
    torn = {version for outcome in result.outcomes for version in outcome} - {V0, V1}  # type: ignore[attr-defined]
    assert torn, result.outcomes  # the reads between the truncation and the last write


def test_a_write_after_the_rename_is_a_race() -> None:
    result = run_patched(prog, prog.written_after_publishing, options=Options(time_limit=60))
    assert_race(result, prog, f"file {prog.CONFIG}", 'f.write("late")', "seen.append(f.read())")


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_a_file_made_after_another_was_removed_is_another_location(strategy: Strategy) -> None:
    result = run_with_outcomes(prog, prog.removed_then_made, strategy=strategy)
    assert_proved_race_free(result)
    assert_outcomes(result, {"old"})


def test_an_unlinked_file_still_open_is_the_same_location() -> None:
    result = run_patched(prog, prog.unlinked_scratch, options=Options(time_limit=60))
    assert_fails(result, "data_race", "data race on file ", "write (os.pwrite())", "read (os.pread())")


def test_the_last_executions_files_are_removed_when_the_check_ends() -> None:
    """r08: the files the last execution made stayed, and the same check run again found its
    names taken (``FileExistsError``)."""
    for _ in range(2):
        assert_outcomes(run_with_outcomes(prog, prog.made_for_good), {"r"})
        assert not os.path.exists(prog.RESULT)


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_two_threads_temporary_files_are_two_locations(strategy: Strategy) -> None:
    """c10: the second ``TemporaryFile`` took the freed inode number of the first, its location,
    and the two threads' writes were a data race on "file /tmp"."""
    result = run_with_outcomes(prog, prog.two_temporary_files, strategy=strategy)
    assert_proved_race_free(result)
    assert_outcomes(result, {0})
