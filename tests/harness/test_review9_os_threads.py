"""Review 9's rows 16, 20-22, 24 and 29 in patch mode (session 41): ``_thread.interrupt_main``
from a worker (taken for the user's Ctrl-C, or its handler run in the worker), a thread's CPU
time and ``ctypes``' errno (shared by the greenlets of one OS thread), ``os.sched_yield`` in a
spin (no give-way for fairness: a false livelock), and a finalizer left registered at exit (the
harness's ``Abort`` printed after the verdict). Each CORRECT program is proved, its BUGGY twin
caught."""

from __future__ import annotations

import signal
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from model_checks.harness import Options, Result, check, patched
from tests.harness import review9_os_programs as prog
from tests.harness.explore_runs import explore_command
from tests.harness.patched_runs import assert_proved_race_free, assert_reported

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def _ctrl_c_watched() -> Iterator[None]:
    """Python's default SIGINT handler, so that the check watches for the user's Ctrl-C
    (``ctrl_c``) as ``lanecheck explore`` does: a simulated SIGINT must not be taken for one."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _run(program: Callable[[], None], **options: object) -> Result:
    with patched(prog):
        result = check(lambda rt: program(), Options(time_limit=60, **options))  # type: ignore[arg-type]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    return result


@pytest.mark.parametrize(
    "program",
    [
        prog.interrupt_main_runs_the_handler_in_main,  # s34
        prog.interrupt_main_raises_keyboard_interrupt_in_main,  # s34b
        prog.interrupt_main_does_nothing_for_a_signal_python_does_not_handle,
        prog.sleeper_uses_no_cpu_time,  # s33
        prog.each_thread_reads_its_own_errno,  # s37
        prog.spin_with_sched_yield,  # s38
    ],
)
def test_a_correct_program_is_proved(program: Callable[[], None]) -> None:
    assert_proved_race_free(_run(program))


def test_interrupt_mains_handler_is_mains_and_can_self_deadlock() -> None:
    assert_reported(_run(prog.interrupt_main_handler_takes_the_lock_main_holds), "deadlock", "blocked: main")


def test_interrupt_mains_keyboard_interrupt_is_the_programs_own() -> None:
    assert_reported(_run(prog.interrupt_main_uncaught), "exception", "KeyboardInterrupt")


def test_a_thread_cpu_clock_is_the_threads_own() -> None:
    assert_reported(_run(prog.thread_time_taken_for_the_processs), "assertion", "is not main's")


def test_errno_is_the_threads_own() -> None:
    assert_reported(_run(prog.errno_read_from_another_thread), "assertion", "is not main's")


def test_one_sched_yield_is_no_synchronisation() -> None:
    result = _run(prog.sched_yield_taken_for_synchronisation)
    assert result.verdict == "failed", result.report()


# s39 as written (BUGGY: the worker drops the last reference while holding the lock its finalizer
# takes: a self-deadlock) and a CORRECT program whose finalizer and ``atexit`` function, left for
# the interpreter's exit, take a lock of the execution
_PROGRAMS = {
    "buggy": """
        import threading, weakref

        class Res:
            pass

        def main():
            lk = threading.Lock()
            log = []
            box = [Res()]
            weakref.finalize(box[0], lambda: (lk.acquire(), log.append("freed"), lk.release()))
            def worker():
                with lk:
                    box.clear()        # last reference goes here, under lk
            t = threading.Thread(target=worker, daemon=True)
            t.start()
            t.join(2)
            assert not t.is_alive(), "worker deadlocked in the finalizer"
    """,
    "correct": """
        import atexit, threading, weakref

        class Res:
            pass

        KEEP = []

        def main():
            lk = threading.Lock()
            box = [Res()]
            weakref.finalize(box[0], lambda: (lk.acquire(), lk.release()))
            atexit.register(lambda: (lk.acquire(), lk.release()))
            KEEP.append(box)
            def worker():
                with lk:
                    pass
            t = threading.Thread(target=worker)
            t.start()
            t.join()
    """,
}


@pytest.mark.parametrize("kind", ["buggy", "correct"])
def test_exit_calls_an_execution_registered_print_nothing_after_the_verdict(
    tmp_path: Path, kind: str
) -> None:
    """No ``Abort`` traceback after the verdict (s39 printed one from ``atexit``); the BUGGY
    program's self-deadlock is still found, the CORRECT one proved."""
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(_PROGRAMS[kind]))
    done = explore_command(f"{path}:main", "--time-limit", "30", timeout=100)
    out = done.stdout + done.stderr
    assert "Abort" not in out and "Exception ignored" not in out, out
    if kind == "buggy":
        assert done.returncode == 1 and "worker deadlocked in the finalizer" in out, out
    else:
        assert done.returncode == 0 and "exhaustive" in out, out
