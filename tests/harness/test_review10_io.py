"""Review 9's I/O defects left open (programs: ``review10_io_programs.py``).

* s51: a C ``io`` buffered object entered by a controlled thread while another is parked inside
  it (its raw stream took a controlled lock, or waited for its socket) raised ``RuntimeError:
  reentrant call inside <_io.BufferedWriter>``: the greenlets share one OS thread, whose ident
  owns the object's lock. Now the second thread waits for the first, an explored wait
  (``patch_io_buffered``); a real re-entry by one thread still raises.
* pathlib: ``Path.read_text``/``write_text`` and ``shutil.copyfile`` open the file inside the
  standard library, so a counter kept in a file through ``pathlib`` was proved "exhaustive";
  now they are accesses of the file (``patch_io_paths``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Options, Result
from model_checks.harness.options import Strategy
from tests.harness import review10_io_programs as prog
from tests.harness.patched_runs import (
    assert_fails,
    assert_proved_race_free,
    assert_race,
    assert_reported,
    run_patched,
)

pytestmark = pytest.mark.timeout(180)


def _run(program: Callable[[], None], strategy: Strategy = "dpor-ipb") -> Result:
    return run_patched(prog, program, options=Options(strategy=strategy, time_limit=60))


@pytest.mark.parametrize(
    "program",
    [
        prog.buffered_raw_writers,
        prog.text_over_buffered_raw,
        prog.makefile_writers,
        prog.makefile_pair_writers,
    ],
)
def test_threads_sharing_a_buffered_object_wait_for_each_other(program: Callable[[], None]) -> None:
    assert_proved_race_free(_run(program))


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_the_order_threads_enter_a_buffered_object_is_explored(strategy: Strategy) -> None:
    result = _run(prog.buffered_first_writer, strategy)
    assert_fails(result, "assertion", "bbbbbbbb")


def test_a_wait_for_a_buffered_object_can_deadlock() -> None:
    result = _run(prog.buffered_deadlock)
    assert_reported(result, "deadlock", "the lock of an io.BufferedWriter")


def test_a_reader_that_waited_loses_what_the_buffer_held_as_in_cpython() -> None:
    """s52: a hang in every real run (3.11's readline empties the buffer after its wait)."""
    result = _run(prog.makefile_two_readers)
    assert_reported(result, "deadlock", "wait() on file descriptor", "(recv_into)", "f.readline()")


def test_a_real_reentry_still_raises() -> None:
    result = _run(prog.reentrant_write)
    assert_fails(result, "exception", "RuntimeError: reentrant call inside <_io.BufferedWriter>")


def test_the_patched_classes_keep_isinstance() -> None:
    import io

    from model_checks.harness import patched

    with open(prog.SOURCE, "rb") as f, patched(prog):
        assert isinstance(f, io.BufferedReader) and issubclass(type(f), io.BufferedReader)
        made = io.BufferedWriter(prog.Sink())
        assert isinstance(made, io.BufferedWriter) and repr(made) == "<_io.BufferedWriter>"
        assert not isinstance(made, io.BufferedReader)


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_a_counter_kept_in_a_file_through_pathlib_is_a_race(strategy: Strategy) -> None:
    result = _run(prog.path_counter, strategy)
    failure = assert_race(result, prog, f"file {prog.COUNTER}", "COUNTER.write_text(str(n + 1))")
    for call in ("(Path.read_text())", "(Path.write_text())"):
        assert call in failure.message, failure.message


def test_its_locked_twin_is_proved() -> None:
    assert_proved_race_free(_run(prog.path_counter_locked))


def test_a_copy_into_a_file_another_thread_reads_is_a_race() -> None:
    result = _run(prog.copy_against_read)
    assert_race(result, prog, f"file {prog.COPY}", "shutil.copyfile(SOURCE, COPY)", "COPY.read_text()")


def test_two_copies_into_one_file_through_shutil_copy_are_a_race() -> None:
    """``shutil.copy``/``copy2`` call ``copyfile``: the access is at the program's line."""
    result = _run(prog.two_copies_into_one_file)
    assert_race(result, prog, f"file {prog.COPY}", "shutil.copy(SOURCE, COPY)", "shutil.copy2(COUNTER, COPY)")


def test_a_json_dump_to_a_file_another_thread_reads_is_a_race() -> None:
    result = _run(prog.dump_against_read)
    assert_race(result, prog, f"file {prog.RECORD}", 'json.dump({"n": 1}, out)', "RECORD.read_text()")


def test_a_library_truncating_a_file_another_thread_reads_is_a_race_in_every_check() -> None:
    """A library's ``open`` to write counts whichever file it is: counted only for files the
    program's own accesses had made locations (a set kept for the whole process), the first check
    of a new file said "exhaustive" and the same check again a data race (the code review)."""
    for n in range(2):
        path = prog.fresh_log(n)
        result = _run(prog.library_truncate_against_read)
        assert_race(result, prog, f"file {path}", 'logging.FileHandler(path, mode="w").close()', "f.read()")
