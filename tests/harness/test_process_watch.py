"""The process-state watch (``process_watch``, ``process_saved``; docs/harness.md, "Process-wide
state"): a step that changes state every thread shares but nothing traced shows (the eleventh
outside review's twelve false proofs) is ordered both ways against every other step, in DPOR and
in the state search, and the state is put back after an execution that changed it."""

from __future__ import annotations

import codecs
import ctypes
import decimal
import faulthandler
import gc
import json
import linecache
import locale
import logging
import numbers
import os
import resource
import socket
import sys
import tempfile
import threading
import tracemalloc
import warnings
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

import pytest

from model_checks.harness import process_watch
from model_checks.harness.options import Options
from model_checks.harness.patch import patched
from model_checks.harness.rt.native import NATIVE
from model_checks.harness.stateful import check_states
from tests.harness import process_state_programs as prog
from tests.harness.patched_runs import assert_outcomes, run_with_outcomes

pytestmark = pytest.mark.timeout(240)

WATCHES: list[Any] = ["python"] + (["c"] if NATIVE is not None else [])


@pytest.fixture(params=WATCHES)
def watch(request: pytest.FixtureRequest) -> Iterator[Callable[[], str | None]]:
    """The watch armed on what ``process_watch`` watches, in C and in Python."""
    watched = process_watch._watched()
    if request.param == "c":
        process_watch._install_hooks()
        NATIVE.watch_arm(*watched)  # type: ignore[union-attr]
        yield NATIVE.watch_changed  # type: ignore[union-attr]
    else:
        py = process_watch._InPython()
        py.arm(*watched)
        yield py.changed
        py.armed = False
    process_watch.new_check()  # (the module's own watch armed again, as a check would)


def test_each_kind_of_process_state_is_seen_and_named(watch: Callable[[], str | None], tmp_path: Any) -> None:
    watch()  # (what the test's set-up changed since the watch was armed)
    assert watch() is None
    original = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, prog.OTHER_CTYPE)
    assert watch() == "the C locale"
    locale.setlocale(locale.LC_CTYPE, original)
    assert watch() == "the C locale"
    gc.disable()
    assert watch() == "the garbage collector's switch"
    gc.enable()
    assert watch() == "the garbage collector's switch"
    saved = tempfile.tempdir
    tempfile.tempdir = str(tmp_path)
    assert watch() == "module tempfile's names"
    tempfile.tempdir = saved
    assert watch() == "module tempfile's names"
    hook = threading.excepthook
    threading.excepthook = print
    assert watch() == "module threading's names"
    threading.excepthook = hook
    watch()
    sys.path.append(str(tmp_path))
    assert watch() == "sys.path"
    sys.path.remove(str(tmp_path))
    assert watch() == "sys.path"
    codecs.register(prog._search)
    assert watch() == "the codec search functions (codecs.register)"
    codecs.unregister(prog._search)
    watch()
    os.putenv("LANECHECK_WATCH_TEST", "1")
    assert watch() == "os.putenv"
    os.unsetenv("LANECHECK_WATCH_TEST")
    assert watch() == "os.unsetenv"
    (tmp_path / "f").write_text("x")
    watch()
    os.rename(tmp_path / "f", tmp_path / "g")
    assert watch() == "os.rename"
    limits = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, limits)
    assert watch() == "resource.setrlimit"
    interval = sys.getswitchinterval()
    sys.setswitchinterval(interval * 2)
    assert watch() == "the switch interval (sys.setswitchinterval)"
    sys.setswitchinterval(interval)
    watch()
    logging.addLevelName(77, "LANECHECK_WATCH")
    assert watch() == "logging._levelToName"
    del logging._levelToName[77], logging._nameToLevel["LANECHECK_WATCH"]
    watch()
    logging.disable(logging.CRITICAL)
    assert watch() == "logging.root.manager's fields"
    logging.disable(logging.NOTSET)
    watch()
    warnings.filters.insert(0, ("ignore", None, Warning, None, 0))  # type: ignore[attr-defined]
    assert watch() == "warnings.filters"
    del warnings.filters[0]  # type: ignore[attr-defined]
    watch()
    assert watch() is None


def test_the_librarys_c_state_and_the_ids_are_seen_and_named(watch: Callable[[], str | None]) -> None:
    watch()
    faults = faulthandler.is_enabled()
    prog._faults(not faults)
    assert watch() == "faulthandler (enable, disable)"
    prog._faults(faults)
    watch()
    tracemalloc.start()
    assert watch() == "tracemalloc (start, stop)"
    tracemalloc.stop()
    watch()
    timeout = socket.getdefaulttimeout()
    getattr(socket, "setdefaulttimeout")(7.0)  # noqa: B009
    assert watch() == "socket's default timeout (setdefaulttimeout)"
    socket.setdefaulttimeout(timeout)
    watch()
    decimal.DefaultContext.prec = 7
    assert watch() == "decimal.DefaultContext's settings"
    decimal.DefaultContext.prec = prog._PREC
    watch()
    decimal.BasicContext.traps[decimal.Inexact] = not decimal.BasicContext.traps[decimal.Inexact]
    assert watch() == "decimal.BasicContext's settings"
    decimal.BasicContext.traps[decimal.Inexact] = not decimal.BasicContext.traps[decimal.Inexact]
    watch()
    linecache.cache["<lanecheck>"] = (1, None, ["x\n"], "<lanecheck>")
    assert watch() == "linecache.cache"
    del linecache.cache["<lanecheck>"]
    watch()
    decimal.Context().prec = 3  # (a context of its own: no change)
    if os.geteuid() == 0:
        os.setegid(1)
        assert watch() == process_watch.IDS
        os.setegid(0)
        watch()
    assert watch() is None


def test_a_foreign_call_and_a_library_classs_attribute_are_writes(watch: Callable[[], str | None]) -> None:
    """Caught where they are made: no audit event shows them, no cheap reading finds them. The
    hooks are C (a slot of ``type`` and of ``_ctypes.CFuncPtr``): the Python watch has none."""
    if NATIVE is None or watch != NATIVE.watch_changed:
        pytest.skip("the hooks are C")
    watch()
    prog._CHDIR(prog._CWD.encode())
    assert watch() == "a foreign call (ctypes)"
    ctypes.pythonapi.PyThreadState_Get()  # (into the interpreter's API: the harness's own reads)
    assert watch() is None
    json.JSONDecoder.decode = prog._decode  # type: ignore[method-assign,assignment]
    assert watch() == "a library class's attribute (set or deleted)"
    json.JSONDecoder.decode = prog._DECODE  # type: ignore[method-assign]
    watch()
    with mock.patch.object(json.JSONDecoder, "parse", None, create=True):
        assert watch() == "a library class's attribute (set or deleted)"
    watch()
    numbers.Number.lanecheck = 1  # type: ignore[attr-defined]  # (a class of a metaclass: ABCMeta)
    assert watch() == "a library class's attribute (set or deleted)"
    del numbers.Number.lanecheck  # type: ignore[attr-defined]
    assert watch() == "a library class's attribute (set or deleted)"

    class Mine:
        x = 1

    Mine.x = 2  # (the program's class: its accesses are traced)
    mock.MagicMock().__len__.return_value = 3  # (a class made for one mock: not the library's)
    assert watch() is None


def test_the_audit_events_counted_are_the_same_in_c_and_in_python() -> None:
    assert "ctypes.call_function" in process_watch.WRITES
    if NATIVE is not None:
        assert NATIVE.watch_writes() == process_watch.WRITES


def test_reads_and_private_state_are_not_changes(watch: Callable[[], str | None], tmp_path: Any) -> None:
    watch()
    locale.setlocale(locale.LC_CTYPE)  # (a query)
    resource.prlimit(0, resource.RLIMIT_NOFILE)  # (a query: no new limits)
    resource.getrlimit(resource.RLIMIT_NOFILE)
    os.path.exists(tmp_path)
    mine = {"a": 1}
    mine["b"] = 2
    (tmp_path / "h").write_text("contents")  # (a new name: a change; written again, no change)
    assert watch() == "open (a new file)"
    (tmp_path / "h").write_text("contents")  # (a file's contents: the race detector's, not this)
    hook = threading.excepthook
    threading.excepthook = print  # rebound and put back before anyone else could look
    threading.excepthook = hook
    assert watch() is None


def _values(main: Callable[[], object], strategy: str = "dpor-ipb") -> set[object]:
    if strategy == "states":
        with patched(prog):
            result = check_states(lambda rt: (lambda value: lambda: value)(main()), Options(minimize=False))
    else:
        result = run_with_outcomes(prog, main, strategy=strategy)
    assert result.verdict == "exhaustive", result.report()
    return set(result.outcomes)


@pytest.fixture
def aside_file() -> Iterator[None]:
    with open(prog.WHERE, "w"):
        pass
    yield
    for path in (prog.WHERE, prog.WHERE + ".aside"):
        if os.path.exists(path):
            os.remove(path)


WINDOWS = {
    "locale": (prog.locale_window, prog._ORIGINAL_CTYPE, prog.OTHER_CTYPE),
    "collector turned off by a library (timeit)": (prog.gc_by_library, True, False),
    "tempfile.tempdir": (prog.tempdir_window, prog._SAVED_DIR, prog.WHERE),
    "sys.modules entry": (prog.modules_window, False, True),
    "builtins' dict": (prog.builtins_window, "'x'", "double"),
    "C environment (os.putenv)": (prog.environ_window, None, b"set"),
    "resource limit": (prog.limit_window, prog._LIMIT[0], prog._LIMIT[0] - 1),
    "codec registry": (prog.codec_window, False, True),
    "a file's name (rename)": (prog.rename_window, True, False),
    "the switch interval (an interpreter setting)": (
        prog.switch_interval_window,
        prog._INTERVAL,
        prog._INTERVAL * 2,
    ),
    "mimetypes.add_type (a library registry)": (prog.mimetype_window, None, "application/x-lanecheck"),
}
# the twelfth review's, still proved before the C readers, the templates and the hooks
LIBRARY_WINDOWS = {
    "faulthandler.enable": (prog.faulthandler_window, prog._FAULTS, not prog._FAULTS),
    "decimal.DefaultContext changed in place": (prog.decimal_window, prog._PREC, 5),
    "linecache.cache": (prog.linecache_window, linecache.getline(prog._MINE, 1), "cached\n"),
    "tracemalloc.start": (prog.tracemalloc_window, False, True),
    "os.setegid": (prog.egid_window, 0, 1),
    "a chdir through ctypes": (prog.ctypes_chdir_window, prog._CWD, "/"),
    "a library class's method set": (prog.json_method_window, 1, "patched"),
    "a library class's method patched by mock": (prog.json_mock_window, 1, "patched"),
    "socket's default timeout through getattr": (prog.socket_timeout_window, prog._TIMEOUT, 5.0),
}


@pytest.mark.usefixtures("aside_file")
@pytest.mark.parametrize("strategy", ["dpor-ipb", "states"])
@pytest.mark.parametrize("what", sorted(WINDOWS))
def test_a_read_inside_another_threads_change_is_explored(what: str, strategy: str) -> None:
    """Before the watch, DPOR and the state search ran one order ("exhaustive") and returned only
    the first value: the second needs the read inside the window."""
    main, before, during = WINDOWS[what]
    assert _values(main, strategy=strategy) == {before, during}


HOOKED = {
    "a chdir through ctypes",
    "a library class's method set",
    "a library class's method patched by mock",
}


@pytest.mark.usefixtures("aside_file")
@pytest.mark.parametrize("strategy", ["dpor-ipb", "states"])
@pytest.mark.parametrize("what", sorted(LIBRARY_WINDOWS))
def test_a_read_inside_another_threads_change_of_library_state_is_explored(what: str, strategy: str) -> None:
    """The twelfth review's windows: C state of the library read by its C readers, ``decimal``'s
    template, a registry, the ids' setters, a foreign call, a library class's attribute."""
    main, before, during = LIBRARY_WINDOWS[what]
    if what == "os.setegid" and os.geteuid() != 0:
        pytest.skip("setegid(1) needs root")
    if what in HOOKED and NATIVE is None:
        pytest.skip("caught by a C hook: the Python watch has none (docs/harness.md)")
    assert _values(main, strategy=strategy) == {before, during}


def test_a_read_ordered_by_the_lock_is_proved_with_the_one_value() -> None:
    result = run_with_outcomes(prog, prog.locale_locked)
    assert_outcomes(result, {prog._ORIGINAL_CTYPE})
    assert any("process-wide state (the C locale)" in n for n in result.notes), result.notes


def test_a_change_found_after_the_read_is_raced_with_the_read_before_it() -> None:
    """The change is seen only when its step ends, after the read ran: the race with the earlier
    read is analysed then (``SearchChooser.after_step``)."""
    assert _values(prog.reader_first) == {prog._ORIGINAL_CTYPE, prog.OTHER_CTYPE}


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dpor", "states"])
def test_a_change_explored_first_is_not_kept_asleep_after_another_threads_step(strategy: str) -> None:
    assert _values(prog.writer_first, strategy=strategy) == {prog._ORIGINAL_CTYPE, prog.OTHER_CTYPE}


def test_each_execution_and_the_caller_start_from_the_state_the_check_found() -> None:
    before = locale.setlocale(locale.LC_CTYPE)
    result = run_with_outcomes(prog, prog.each_run_starts_afresh, strategy="dfs")
    assert_outcomes(result, {before})
    assert locale.setlocale(locale.LC_CTYPE) == before


def test_what_an_execution_left_changed_is_put_back(tmp_path: Any) -> None:
    process_watch.new_check()
    process_watch.reset()  # (an execution starts: what it finds is kept to put back)
    limits = resource.getrlimit(resource.RLIMIT_NOFILE)
    path = list(sys.path)
    try:
        import json

        os.putenv("LANECHECK_PUT_BACK", "1")
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits[0] - 1, limits[1]))
        codecs.register(prog._search)
        sys.modules["json"] = prog._DOUBLE
        tempfile.tempdir = str(tmp_path)
        sys.path.insert(0, str(tmp_path))
        process_watch.put_back()
        assert prog._GETENV(b"LANECHECK_PUT_BACK") is None
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == limits
        assert not prog._codec_found()
        assert sys.modules["json"] is json
        assert tempfile.tempdir != str(tmp_path)
        assert sys.path == path
    finally:
        os.unsetenv("LANECHECK_PUT_BACK")
        resource.setrlimit(resource.RLIMIT_NOFILE, limits)
        sys.path[:] = path


def test_the_librarys_state_an_execution_left_changed_is_put_back() -> None:
    process_watch.new_check()
    process_watch.reset()
    faults, timeout, ids = faulthandler.is_enabled(), socket.getdefaulttimeout(), os.getresgid()
    try:
        prog._faults(not faults)
        tracemalloc.start()
        socket.setdefaulttimeout(9.0)
        decimal.DefaultContext.prec = 9
        decimal.DefaultContext.traps[decimal.Inexact] = True
        if os.geteuid() == 0:
            os.setegid(1)
        json.JSONDecoder.decode = prog._decode  # type: ignore[method-assign,assignment]
        json.JSONDecoder.lanecheck_added = 1  # type: ignore[attr-defined]
        process_watch.put_back()
        assert faulthandler.is_enabled() is faults
        assert not tracemalloc.is_tracing()
        assert socket.getdefaulttimeout() == timeout
        assert decimal.DefaultContext.prec == prog._PREC
        assert not decimal.DefaultContext.traps[decimal.Inexact]
        assert os.getresgid() == ids
        if NATIVE is not None:  # (the class hook, which hands over the value before, is C)
            assert json.JSONDecoder.decode is prog._DECODE
            assert not hasattr(json.JSONDecoder, "lanecheck_added")
    finally:
        prog._faults(faults)
        tracemalloc.stop()
        socket.setdefaulttimeout(timeout)
        decimal.DefaultContext.prec = prog._PREC
        decimal.DefaultContext.traps[decimal.Inexact] = False
        os.setresgid(*ids)
        json.JSONDecoder.decode = prog._DECODE  # type: ignore[method-assign]
        if "lanecheck_added" in vars(json.JSONDecoder):
            del json.JSONDecoder.lanecheck_added  # type: ignore[attr-defined]


def test_a_library_module_imported_by_the_threads_is_imported_afresh_by_each_execution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``_strptime``, imported by ``time.strptime`` inside the threads, first in the check's first
    execution: kept loaded, the next replayed other steps ("the test is not deterministic")."""
    monkeypatch.delitem(sys.modules, "_strptime", raising=False)
    result = run_with_outcomes(prog, prog.strptime_in_threads)
    assert_outcomes(result, {(1, 2)})


def test_two_threads_first_gettempdir_is_proved(monkeypatch: pytest.MonkeyPatch) -> None:
    """It hung: a thread blocked on ``tempfile``'s real lock, held by another at a name draw."""
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setattr(tempfile, "_name_sequence", None)
    result = run_with_outcomes(prog, prog.gettempdir_in_threads)
    assert_outcomes(result, {2})
