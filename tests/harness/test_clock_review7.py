"""The clocks in patch mode after session 40's outside review (docs/harness.md, "The clocks"):
the virtual clock starts where a real one would be, not at 0 (a bug hidden by the origin was
proved); a thread's successive reads differ and follow synchronisation (a frozen clock made
correct programs divide by zero, spin for ever, mint equal ids); ``datetime`` reads the virtual
clock; and a failure that needed a timeout or a sleep to end early says so."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from model_checks.cli import app
from model_checks.harness import Options, Result, check, patch_clock, patched
from model_checks.harness.options import Strategy
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.stateful import check_states
from tests.harness import clock_review7_programs as programs

pytestmark = pytest.mark.timeout(180)

PROGRAMS_FILE = Path(programs.__file__)


def _explore(program: Callable[[], None], **options: object) -> Result:
    with patched(programs):
        return check(lambda rt: program(), Options(time_limit=60, **options))  # type: ignore[arg-type]


def test_a_bug_the_clock_at_zero_hid_is_found() -> None:
    result = _explore(programs.ttl_cache_checks_staleness_outside_the_lock)
    assert result.verdict == "failed", result.report()


@pytest.mark.parametrize(
    "program",
    [
        programs.ttl_cache_first_call_loads,
        programs.wall_clock_is_a_plausible_date,
        programs.throughput,
        programs.ids_from_the_clock_under_a_lock,
        programs.child_reads_after_its_parent,
        programs.busy_wait_until_a_deadline,
        programs.datetime_beside_a_timed_wait,
        programs.datetimes_agree_with_time,
    ],
)
def test_a_correct_program_on_the_clocks_is_proved(program: Callable[[], None]) -> None:
    result = _explore(program)
    assert result.verdict == "exhaustive", result.report()


@pytest.mark.parametrize("sub_micros", [0, 481, 518, 555, 999])
def test_datetime_shows_a_timed_wait_whole_wherever_the_clock_starts(
    sub_micros: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wall clock's origin is a real reading, with any ns below the µs: through a float of
    seconds, ``datetime.now()`` 50 ms apart showed 49.999 ms for some of them (CI, session 41)."""
    real = patch_clock._read_origins

    def origins() -> dict[int | str, int]:
        read = real()
        read["time"] = 1_800_000_000_123_000_000 + sub_micros
        return read

    monkeypatch.setattr(patch_clock, "_read_origins", origins)
    result = _explore(programs.datetime_beside_a_timed_wait)
    assert result.verdict == "exhaustive", result.report()


def test_time_since_the_check_began_reads_the_same_in_another_process() -> None:
    """A ``--replay`` runs in another process. Since the eighth review the clocks start at the
    real ones' readings when the check begins (a time read at import is then in the past), so
    another process reads other absolute times; the times since the check began are the same
    (before, the epoch was one fixed date and this test compared absolute readings)."""
    code = (
        "import time\n"
        "from model_checks.harness import check, patch_clock, patched\n"
        "from tests.harness import clock_review7_programs as m\n"
        "seen = []\n"
        "def since(): return (time.time_ns() - patch_clock.origin('time'),\n"
        "    time.monotonic_ns() - patch_clock.origin('monotonic'), time.localtime()[:6])\n"
        "with patched(m):\n"
        "    check(lambda rt: seen.append(since()), max_executions=1)\n"
        "print(seen[0][:2], time.localtime()[:6] >= seen[0][2])\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and runs[0].strip() == "(0, 1000) True", runs


def _reads_through_synchronisation(rt: ControlledRuntime) -> object:
    """Clock reads before and after a lock, an event and a timed wait in two threads: what each
    read shows depends on what happened before it."""
    lock = rt.lock("L")
    ev = rt.event("e")
    seen: dict[str, float] = {}

    def a() -> None:
        seen["a1"] = rt.monotonic()
        lock.acquire()
        seen["a2"] = rt.monotonic()
        lock.release()
        ev.wait(0.5)
        seen["a3"] = rt.monotonic()

    def b() -> None:
        lock.acquire()
        seen["b1"] = rt.monotonic()
        lock.release()
        seen["b2"] = rt.monotonic()
        ev.set()
        seen["b3"] = rt.monotonic()

    ta, tb = rt.start_thread(a, "a"), rt.start_thread(b, "b")
    ta.join()
    tb.join()
    return lambda: tuple(sorted(seen.items()))


def test_reads_that_follow_synchronisation_are_explored_as_plain_dfs_does() -> None:
    """A read's value follows happens-before (the latest time its thread has seen, passed along
    by operations DPOR takes as dependent): DPOR and the state search reach every outcome plain
    DFS does, and no other."""
    dfs = check(_reads_through_synchronisation, Options(strategy="dfs", minimize=False))
    assert dfs.verdict == "exhaustive" and len(dfs.outcomes) > 2, dfs.outcomes
    strategies: list[Strategy] = ["dpor", "dpor-ipb"]
    for strategy in strategies:
        result = check(_reads_through_synchronisation, Options(strategy=strategy, minimize=False))
        assert result.outcomes == dfs.outcomes, strategy
    states = check_states(_reads_through_synchronisation, Options(minimize=False))
    assert states.verdict == "exhaustive" and states.outcomes == dfs.outcomes
    for outcome in dfs.outcomes:
        assert isinstance(outcome, tuple)
        reads = dict(outcome)
        assert reads["a1"] < reads["a2"] < reads["a3"] and reads["b1"] < reads["b2"] < reads["b3"]


def test_a_timeout_that_needed_another_thread_delayed_says_so() -> None:
    result = _explore(programs.timeout_while_the_setter_could_run)
    assert result.verdict == "failed" and result.failure is not None, result.report()
    report = result.report()
    assert "timed out while Thread-1" in report and "could run" in report, report
    assert "--no-virtual-timeouts" in report and "every thread able to run runs before a timeout" in report


def test_a_sleep_that_needed_another_thread_delayed_says_so() -> None:
    result = _explore(programs.two_sleeps)
    assert result.verdict == "failed", result.report()
    report = result.report()
    assert "sleep(0.5) ended while" in report and "delayed for the whole sleep" in report, report
    assert "--no-virtual-timeouts" in report and "before a timeout expires or a sleep ends" in report


TIMING_IN_PRACTICE = [
    programs.timeout_while_the_setter_could_run,
    programs.two_sleeps,
    programs.repeating_timer_ticks_during_a_sleep,
    programs.stop_flag_after_a_sleep,
]


@pytest.mark.parametrize("program", TIMING_IN_PRACTICE)
def test_a_program_correct_in_practice_fails_by_default_naming_the_early_end(
    program: Callable[[], None],
) -> None:
    """Virtual timeouts (the default) let a timeout or a sleep end while other threads wait: kept."""
    result = _explore(program)
    assert result.verdict == "failed", result.report()
    assert "timing: this schedule needs" in result.report() and "--no-virtual-timeouts" in result.report()


@pytest.mark.parametrize("program", TIMING_IN_PRACTICE)
def test_without_virtual_timeouts_it_is_proved(program: Callable[[], None]) -> None:
    """``virtual_timeouts=False``: timeouts and, since session 40, sleeps end once no thread can
    run, earliest deadline first (sleeps ended at any point with or without it before)."""
    result = _explore(program, virtual_timeouts=False)
    assert result.verdict == "exhaustive", result.report()


def test_without_virtual_timeouts_a_racy_sleep_order_is_still_a_race() -> None:
    """Ordering by sleeps is no synchronisation: the race detector still reports it."""
    result = _explore(programs.unlocked_write_ordered_by_a_sleep, virtual_timeouts=False)
    assert result.verdict == "failed" and result.failure is not None, result.report()
    assert result.failure.kind == "data_race", result.report()


def test_the_cli_says_it_in_text_and_json() -> None:
    runner = CliRunner()
    target = f"{PROGRAMS_FILE}:main_timeout"
    text = runner.invoke(app, ["explore", target])
    assert "timed out while" in text.output and "--no-virtual-timeouts" in text.output, text.output
    facts = json.loads(runner.invoke(app, ["explore", target, "--json"]).output)
    assert "timed out while" in facts["failure"]["details"], facts["failure"]
    assert "--no-virtual-timeouts" in facts["failure"]["details"]
    sleeps = json.loads(runner.invoke(app, ["explore", f"{PROGRAMS_FILE}:main_sleeps", "--json"]).output)
    assert "delayed for the whole sleep" in sleeps["failure"]["details"], sleeps["failure"]


def test_no_timing_note_where_nothing_ended_early() -> None:
    """A failure with no timeout and no sleep in its schedule carries no such paragraph."""
    result = _explore(programs.check_then_act)
    assert result.verdict == "failed", result.report()
    assert "timing: this schedule needs" not in result.report()


def test_a_branch_on_compute_time_is_not_proved_silently() -> None:
    """Compute time is not modelled (a documented limit): the verdict says what was assumed."""
    result = _explore(programs.slow_path_after_a_long_computation)
    assert result.verdict == "exhaustive", result.report()
    assert any("time spent computing passes as 1 microsecond a read" in n for n in result.notes), result.notes
    assert "explored only on its fast side" in result.report()
    quiet = _explore(programs.two_sleeps, virtual_timeouts=False)  # it reads no clock
    assert quiet.verdict == "exhaustive" and not any("computing" in n for n in quiet.notes), quiet.notes


def _sleepers(rt: ControlledRuntime) -> object:
    """Two sleepers, and the main thread takes a lock and reads the clock: with
    ``virtual_timeouts=False`` the sleeps end in deadline order once the main thread cannot run."""
    lock = rt.lock("L")
    order: list[tuple[str, float]] = []

    def sleeper(name: str, seconds: float) -> Callable[[], None]:
        def run() -> None:
            rt.sleep(seconds)
            lock.acquire()
            order.append((name, rt.monotonic()))
            lock.release()

        return run

    threads = [rt.start_thread(sleeper("a", 0.2), "a"), rt.start_thread(sleeper("b", 0.1), "b")]
    lock.acquire()
    order.append(("r", rt.monotonic()))
    lock.release()
    for t in threads:
        t.join()
    return lambda: tuple(order)


@pytest.mark.parametrize("virtual_timeouts", [True, False])
def test_sleeps_are_explored_as_plain_dfs_does(virtual_timeouts: bool) -> None:
    dfs = check(_sleepers, Options(strategy="dfs", minimize=False, virtual_timeouts=virtual_timeouts))
    assert dfs.verdict == "exhaustive", dfs.report()
    orders: list[tuple[tuple[str, float], ...]] = [o for o in dfs.outcomes if isinstance(o, tuple)]
    assert len(orders) == len(dfs.outcomes), dfs.outcomes
    names = {tuple(name for name, _ in order) for order in orders}
    if virtual_timeouts:
        assert ("a", "b", "r") in names, names  # a sleep may end at any point
    else:
        assert names == {("r", "b", "a")}, names  # deadline order, once the reader cannot run
    strategies: list[Strategy] = ["dpor", "dpor-ipb"]
    for strategy in strategies:
        result = check(
            _sleepers, Options(strategy=strategy, minimize=False, virtual_timeouts=virtual_timeouts)
        )
        assert result.outcomes == dfs.outcomes, strategy
    states = check_states(_sleepers, Options(minimize=False, virtual_timeouts=virtual_timeouts))
    assert states.outcomes == dfs.outcomes
