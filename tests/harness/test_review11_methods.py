"""Review 11's row 10: ``mock.patch.object`` of a class's method (or the program's own store over
it) in one thread while another calls it was "exhaustive, no race" under the default search: a
method's look-up found in its class as code was no read (``race_methods``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Options
from tests.harness import review11_methods_programs as prog
from tests.harness.patched_runs import assert_proved_race_free, assert_race, run_patched

pytestmark = pytest.mark.timeout(120)

OPTIONS = Options(time_limit=60)  # the default search (dpor-ipb)


@pytest.mark.parametrize(
    ("program", "what", "written", "read"),
    [
        (prog.class_method_patched, "Svc.fetch", "with patching:", "return Svc().fetch()"),
        (prog.class_method_rebound_by_store, "Svc.fetch", "Svc.fetch = real", "return Svc().fetch()"),
        (prog.object_method_patched, "Svc.fetch", "with patching:", "lambda: svc.fetch()"),
        (prog.classmethod_patched, "Svc.create", "with patching:", "return Svc.create()"),
    ],
    ids=["patch-on-class", "own-store", "patch-on-object", "classmethod"],
)
def test_a_method_rebound_while_another_thread_calls_it_is_a_race(
    program: Callable[[], None], what: str, written: str, read: str
) -> None:
    assert_race(run_patched(prog, program, options=OPTIONS), prog, what, written, read)


def test_a_patch_seen_after_the_call_restarts_the_search() -> None:
    result = run_patched(prog, prog.class_method_patched_reader_first, options=OPTIONS)
    assert_race(result, prog, "Svc.fetch", "with patching:", "return Svc().fetch()")
    assert any("Svc.fetch rebound at" in note and "search restarted" in note for note in result.notes), (
        result.notes
    )


@pytest.mark.parametrize("program", [prog.class_method_patched_locked])
def test_the_locked_twin_is_proved(program: Callable[[], None]) -> None:
    assert_proved_race_free(run_patched(prog, program, options=OPTIONS))


def test_a_rebound_methods_calls_in_a_loop_are_read_once_a_step() -> None:
    # (each call recorded: the long steps were cut up and the search ran past its time limit)
    result = run_patched(prog, prog.rebound_method_called_in_loops, options=Options(time_limit=20))
    assert_proved_race_free(result)
    assert result.steps < 200, result.report()


def test_a_local_classs_method_patched_under_a_lock_restarts_once() -> None:
    # (watched by the class's name: the class object differs in each execution)
    result = run_patched(prog, prog.local_class_method_patched_locked, options=OPTIONS)
    assert_proved_race_free(result)
    assert len([n for n in result.notes if "rebound at" in n]) == 1, result.notes


def test_a_librarys_own_class_making_rebinds_no_method() -> None:
    result = run_patched(prog, prog.namedtuple_made_in_threads, options=OPTIONS)
    assert_proved_race_free(result)
    assert not [n for n in result.notes if "rebound at" in n], result.notes
