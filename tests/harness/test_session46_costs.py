"""What session 46 stopped doing at every access, thread or execution stays right: the race
detector reads an access's code and its object's id without an audit event
(``race_frames.frame_code`` and ``address``: with the process watch's audit hook installed each
event cost CPython about 1,500 and 460 instructions), and still finds the race; a controlled
thread's recursion depth is read and lent in C (``rt/recursion.py``), as deep as ctypes read it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from model_checks.harness import check, patched
from model_checks.harness.race_frames import NATIVE
from tests.harness import session46_cost_programs as programs

# A check of a racy counter in a fresh process (an audit hook cannot be removed), counting the
# audit events raised from the race detector's own frames while it runs.
_COUNTED = textwrap.dedent(
    """
    import collections, sys
    from model_checks.harness import check, patched
    from tests.harness import session46_cost_programs as programs

    seen = collections.Counter()
    # (the modules of the detector's path at every access; not what runs once a check or a thread)
    HOT = {f"model_checks.harness.{m}" for m in ("races", "race_attributes", "race_methods")}
    ON = [False]

    def hook(event, args):
        if ON[0] and event in ("builtins.id", "object.__getattr__"):
            name = sys._getframe(1).f_globals.get("__name__", "")
            if name in HOT:
                seen[(event, name)] += 1

    sys.addaudithook(hook)
    with patched(programs):
        ON[0] = True
        result = check(programs.racy_counter, strategy="dfs")
        ON[0] = False
    print(result.failure.kind if result.failure else None, result.executions, dict(seen))
    """
)


@pytest.mark.timeout(120)
@pytest.mark.skipif(NATIVE is None, reason="the C readers (without them: the audited reads)")
def test_the_race_detector_reads_codes_and_ids_without_audit_events() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _COUNTED], capture_output=True, text=True, timeout=100, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    kind, executions, seen = done.stdout.split(maxsplit=2)
    assert kind == "data_race", done.stdout
    assert int(executions) >= 1
    assert seen.strip() == "{}", seen


def _depth_both_ways() -> tuple[int | None, int | None]:
    from model_checks.harness.rt import recursion

    native = recursion.depth()
    kept, recursion._USED = recursion._USED, None  # (the ctypes reading, as before session 46)
    try:
        return native, recursion.depth()
    finally:
        recursion._USED = kept


def _nested(n: int) -> tuple[int | None, int | None]:
    return _depth_both_ways() if n == 0 else _nested(n - 1)


@pytest.mark.skipif(NATIVE is None, reason="the C reader of the recursion counters")
def test_the_recursion_depth_read_in_c_is_the_one_ctypes_reads() -> None:
    for n in (0, 1, 5, 40):
        native, through_ctypes = _nested(n)
        assert native is not None and native == through_ctypes, (n, native, through_ctypes)


@pytest.mark.timeout(120)
@pytest.mark.skipif(NATIVE is None, reason="the C reader of the recursion counters")
def test_a_controlled_thread_is_given_its_depth_without_ctypes_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from model_checks.harness.rt import recursion
    from tests.harness import review7_alarms_programs as deep

    calls: list[int] = []
    real_state = recursion._state

    def counted() -> int | None:
        calls.append(1)
        return real_state()  # type: ignore[no-any-return]

    monkeypatch.setattr(recursion, "_state", counted)
    with patched(deep):
        result = check(lambda rt: deep.deep_recursion_worker(), races=False)
    assert result.verdict == "exhaustive", result.report()
    assert calls == []


class _CountedCompares(dict):  # type: ignore[type-arg]
    """A copy of a dict that counts the comparisons made of it."""

    compared = 0

    def __ne__(self, other: object) -> bool:
        type(self).compared += 1
        return dict.__ne__(self, other)


def test_the_process_names_are_compared_only_once_written_and_then_put_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import builtins
    import os
    import tempfile

    from model_checks.harness import patch_state

    monkeypatch.setattr(os.environ, "_data", _CountedCompares(os.environ._data))  # type: ignore[attr-defined]
    process = patch_state._Process()
    for _ in range(5):
        process.restore()
    assert _CountedCompares.compared == 0  # (nothing written: nothing compared)
    os.environ["LANECHECK_S46_WRITTEN"] = "1"
    sys._lanecheck_s46 = True  # type: ignore[attr-defined]
    builtins._lanecheck_s46 = True  # type: ignore[attr-defined]
    folder = tempfile.tempdir
    tempfile.tempdir = "/nonexistent-s46"
    process.restore()
    assert _CountedCompares.compared == 1
    assert "LANECHECK_S46_WRITTEN" not in os.environ
    assert not hasattr(sys, "_lanecheck_s46") and not hasattr(builtins, "_lanecheck_s46")
    assert tempfile.tempdir == folder
    process.restore()
    assert _CountedCompares.compared == 1  # (what it put back is the state it compares with)


def test_logging_settings_are_compared_only_once_written_and_then_put_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import logging

    from model_checks.harness import patch_logging

    config = patch_logging.Config()
    read: list[int] = []
    real = patch_logging.Config._settings

    def counted(self: patch_logging.Config) -> object:
        read.append(1)
        return real(self)

    monkeypatch.setattr(patch_logging.Config, "_settings", counted)
    for _ in range(5):
        config.restore()
    assert read == []  # (nothing written: nothing compared)
    logging.addLevelName(77, "S46_LEVEL")
    config.restore()
    assert len(read) == 1
    assert logging.getLevelName(77) == "Level 77" and "S46_LEVEL" not in logging._nameToLevel
    raising = logging.raiseExceptions
    logging.raiseExceptions = not raising
    config.restore()
    assert logging.raiseExceptions is raising and len(read) == 2
    config.restore()
    assert len(read) == 2


class _CountedItems(dict):  # type: ignore[type-arg]
    looks = 0

    def items(self):  # type: ignore[no-untyped-def]
        type(self).looks += 1
        return super().items()


@pytest.mark.timeout(120)
def test_an_execution_that_registered_no_finalizer_does_not_look_for_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import weakref

    from model_checks.harness import patch_exit_calls

    monkeypatch.setattr(patch_exit_calls, "_registry", _CountedItems())
    with patched(programs):
        result = check(programs.locked_counter, races=False)
    assert result.verdict == "exhaustive" and result.executions > 1, result.report()
    assert _CountedItems.looks == 0
    # one that did: its finalizer, registered for the interpreter's exit, is detached at its end
    monkeypatch.setattr(patch_exit_calls, "_registry", weakref.finalize._registry)  # type: ignore[attr-defined]
    with patched(programs):
        result = check(programs.finalizer_made, races=False)
    assert result.verdict == "exhaustive", result.report()
    assert programs.FINALIZERS and not any(f.alive for f in programs.FINALIZERS)


@pytest.mark.timeout(120)
@pytest.mark.skipif(NATIVE is None, reason="the C reader of the thread state's dict")
def test_the_repr_guard_finds_the_thread_state_dict_without_ctypes(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes

    from model_checks.harness import repr_guard

    assert repr_guard._thread_dict() is repr_guard._thread_dict_through_ctypes()
    casts: list[str] = []
    real_cast = ctypes.cast

    def counted(obj: object, kind: object) -> object:
        casts.append(sys._getframe(1).f_globals.get("__name__", ""))
        return real_cast(obj, kind)  # type: ignore[arg-type]

    monkeypatch.setattr(ctypes, "cast", counted)
    with patched(programs):
        result = check(programs.locked_counter, races=False)
    assert result.verdict == "exhaustive" and result.executions > 1, result.report()
    assert "model_checks.harness.repr_guard" not in casts


@pytest.mark.timeout(120)
def test_an_operation_makes_a_clock_only_for_a_thread_without_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from model_checks.harness.races import RaceDetector

    made: list[int] = []
    real = RaceDetector._clock

    def counted(self: RaceDetector, tid: int) -> list[int]:
        made.append(tid)
        return real(self, tid)

    monkeypatch.setattr(RaceDetector, "_clock", counted)
    with patched(programs):
        result = check(programs.locked_counter, strategy="dfs")
    assert result.verdict == "exhaustive" and result.executions > 1, result.report()
    # (each of an execution's three threads: its first operation or access at most)
    assert len(made) <= 3 * result.executions, (len(made), result.executions)


@pytest.mark.timeout(120)
def test_an_execution_installs_the_declared_fields_and_takes_them_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each execution installs the declared fields' descriptors once and takes them off once
    (``declared.install_points``/``remove_points``, called by ``execution.execute``: no context
    manager), and the class is as it was after the check."""
    from model_checks.harness import declared, execution
    from tests.harness import race_programs as prog

    calls: list[str] = []
    install, remove = declared.install_points, declared.remove_points

    def installing(undo: declared.Installed) -> None:
        calls.append("install")
        install(undo)

    def removing(undo: declared.Installed) -> None:
        calls.append(f"remove {len(undo)}")
        remove(undo)

    monkeypatch.setattr(execution, "install_points", installing)
    monkeypatch.setattr(execution, "remove_points", removing)
    before = prog.Flag.__dict__.get("stop")
    declared.declare_atomic(prog.Flag, "stop", "a stop flag (test)")
    try:
        with patched(programs):
            result = check(programs.locked_counter, strategy="dfs")
    finally:
        declared.undeclare_atomic(prog.Flag, "stop")
    assert result.verdict == "exhaustive" and result.executions > 1, result.report()
    # (the flag's field and those of the declared classes other tests of the process imported)
    installed = calls[1]
    assert installed != "remove 0" and calls == ["install", installed] * result.executions, calls[:6]
    assert prog.Flag.__dict__.get("stop") is before
