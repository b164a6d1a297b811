"""What a module made at import that patch mode did not reach (the eighth review, session 41;
``review8_reach_programs.py``): a ``sqlite3`` connection made at import was CPython's object,
checked against the OS thread, so a worker's use passed (r023, "exhaustive" where every real run
raises); a ``threading.local`` in a set or five levels deep stayed real, one namespace for every
controlled thread (r031, r032: false alarms); a ``threading.local`` subclass defined at the top of
the explored file was refused once a controlled thread made its object (r033)."""

from __future__ import annotations

import _thread
import importlib
import sqlite3
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from model_checks.harness import patched
from model_checks.harness.rt.scheduler import UsageError
from model_checks.harness.thread_idents import MAIN_IDENT
from tests.harness import review8_reach_programs as prog
from tests.harness.patched_runs import assert_proved_race_free, assert_reported, run_with_outcomes

pytestmark = pytest.mark.timeout(120)


# the check of a program, each execution's outcome what it returned
_run = partial(run_with_outcomes, prog)


def _proved_returning(program: Callable[[], object], outcome: object) -> None:
    """``program`` is proved free of data races, every execution returning ``outcome``."""
    result = _run(program)
    assert_proved_race_free(result)
    assert result.outcomes == {outcome}, result.report()


# ------------------------------------------------------------------------------------- sqlite3
@pytest.mark.parametrize(
    "program",
    [
        prog.connection_made_at_import_used_by_a_worker,
        prog.connection_in_a_dict_used_by_a_worker,
        prog.cursor_of_a_connection_made_at_import_used_by_a_worker,
    ],
)
def test_a_connection_made_at_import_used_by_a_worker_fails_as_in_cpython(
    program: Callable[[], object],
) -> None:
    assert_reported(
        _run(program),
        "exception",
        "ProgrammingError: SQLite objects created in a thread can only be used in that same thread. "
        f"The object was created in thread id {MAIN_IDENT} and this is thread id 1000001.",
    )


@pytest.mark.parametrize(
    ("program", "outcome"),
    [(prog.connection_made_at_import_used_by_main, 5), (prog.shared_connection_made_at_import, 4)],
)
def test_a_connection_made_at_import_used_as_cpython_allows_is_proved(
    program: Callable[[], object], outcome: int
) -> None:
    _proved_returning(program, outcome)
    # and the connections are CPython's again, in the module's globals
    assert type(prog.CONN) is sqlite3.Connection and type(prog.CONNS["db"][0]) is sqlite3.Connection


# ------------------------------------------------------------------------------ threading.local
@pytest.mark.parametrize(
    "program",
    [
        prog.local_in_a_set,
        prog.local_in_a_frozenset,
        prog.local_five_deep,
        prog.local_ten_deep,
        prog.local_in_a_namespace,
    ],
)
def test_a_local_made_at_import_is_each_threads_wherever_the_module_keeps_it(
    program: Callable[[], object],
) -> None:
    result = _run(program)
    assert_proved_race_free(result)
    assert result.executions > 1 and result.outcomes == {()}, result.report()
    # the real ones are back where they were
    assert type(next(iter(prog.IN_A_SET))) is _thread._local
    assert type(next(iter(prog.IN_A_FROZENSET[0]))) is _thread._local
    assert type(prog.FIVE_DEEP["a"]["b"]["c"]["d"]["e"]) is _thread._local
    assert type(prog.IN_A_NAMESPACE.tls) is _thread._local


TOO_DEEP = """
import threading

def _nested(levels, inner):
    for _ in range(levels):
        inner = [inner]
    return inner

TOO_DEEP = {"cfg": _nested(20, threading.local())}
"""


def test_a_local_further_down_than_the_walk_goes_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "review8_too_deep.py").write_text(TOO_DEEP)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("review8_too_deep")
    words = (
        r"review8_too_deep\.TOO_DEEP\['cfg'\]\[0\]\[0\].* is a threading\.local made at import more than 16"
    )
    try:
        with pytest.raises(UsageError, match=words), patched(module):
            pass
    finally:
        del sys.modules["review8_too_deep"]  # (no later check of this process reaches it)


@pytest.mark.parametrize(
    ("program", "outcome"),
    [
        (prog.subclass_made_by_main, ((3, 3), 0)),
        (prog.subclass_made_by_a_worker, ((("maker", 6), ("other", 15)), 5)),
    ],
)
def test_a_local_subclass_defined_at_import_is_made_by_a_controlled_thread(
    program: Callable[[], object], outcome: object
) -> None:
    """r033: it was refused ("define it while patched"), which ``lanecheck explore`` cannot do."""
    _proved_returning(program, outcome)
    assert "__getattribute__" not in vars(prog.Ctx)  # (its objects' hooks are gone)
