"""Schedule strings, replay, divergence detection, patch mode and the pytest integration."""

from __future__ import annotations

import pytest

from model_checks.harness import Options, ReplayDivergence, check, explore, patched, replay
from model_checks.harness.examples import counter, lock_order
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.schedule import Schedule, ScheduleFormatError
from tests.harness import plain_prodcons

RACY = counter(2, locked=False)
FIXED = counter(2, locked=True)


def racy(rt: ControlledRuntime) -> object:
    return RACY(rt)


def fixed(rt: ControlledRuntime) -> object:
    return FIXED(rt)


@pytest.mark.timeout(30)
def test_schedule_string_round_trip() -> None:
    s = Schedule("ab12", "c0ffee", ((0, 0), (0, 0), (0, 0), (1, 0), (2, 1), (37, 2), (1, 0), (1, 0)))
    text = s.encode()
    assert text == "lc1.ab12.c0ffee.0*3,1,2!,11~,1*2"
    assert Schedule.decode(text) == s
    with pytest.raises(ScheduleFormatError):
        Schedule.decode("not a schedule")


@pytest.mark.timeout(30)
def test_the_replay_hint_of_a_lambda_is_a_call_one_can_write(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_CURRENT_TEST")  # the hint outside pytest: a Python call
    named = check(racy)
    assert named.failure is not None and named.replay_hint.startswith("replay(racy, 'lc1.")
    found = check(lambda rt: racy(rt))
    assert found.failure is not None
    assert "<lambda>" not in found.replay_hint.split(" with fn ")[0], found.replay_hint
    assert "replay(fn, " in found.replay_hint and "test_harness_replay.py:" in found.replay_hint
    fn = lambda rt: racy(rt)  # noqa: E731 - a lambda of the same module: the same tag
    assert replay(fn, found.failure.schedule).failure is not None


@pytest.mark.timeout(30)
@pytest.mark.parametrize("backend", ["greenlet", "threads"])
def test_failure_replays_exactly(backend: str) -> None:
    opts = Options(backend=backend)  # type: ignore[arg-type]
    found = check(racy, opts)
    assert found.failure is not None
    assert found.failure.schedule in found.replay_hint
    again = replay(racy, found.failure.schedule, opts)
    assert again.failure is not None
    assert again.failure.schedule == found.failure.schedule
    assert again.failure.table == found.failure.table
    via_options = check(racy, opts.with_(replay=found.failure.schedule))
    assert via_options.failure is not None and via_options.failure.kind == "assertion"


@pytest.mark.timeout(30)
def test_replay_detects_another_test() -> None:
    found = check(racy)
    assert found.failure is not None
    with pytest.raises(ReplayDivergence, match="recorded for another test"):
        replay(fixed, found.failure.schedule)


@pytest.mark.timeout(30)
def test_replay_detects_changed_program() -> None:
    found = check(racy)
    assert found.failure is not None
    sched = Schedule.decode(found.failure.schedule)
    wrong_hash = Schedule(sched.tag, "000000", sched.actions).encode()
    with pytest.raises(ReplayDivergence, match="operations differ"):
        replay(racy, wrong_hash)
    wrong_choice = Schedule(sched.tag, sched.hash, ((5, 0), *sched.actions[1:])).encode()
    with pytest.raises(ReplayDivergence, match="not enabled"):
        replay(racy, wrong_choice)
    short = Schedule(sched.tag, sched.hash, sched.actions[:3]).encode()
    with pytest.raises(ReplayDivergence, match="continues after"):
        replay(racy, short)


@pytest.mark.timeout(30)
def test_failure_report_is_a_per_thread_table() -> None:
    found = check(lock_order(True))
    assert found.failure is not None
    text = found.report()
    header = found.failure.table.splitlines()[0]
    assert header.split("|")[0].strip().startswith("step") and "t0" in header and "t1" in header
    assert "source" in header
    assert "replay:" in text and found.failure.schedule in text
    assert "examples.py:" in found.failure.table


@pytest.mark.timeout(60)
def test_patch_mode_runs_plain_threading_queue_code() -> None:
    def program(rt: ControlledRuntime) -> object:
        out = plain_prodcons.run_queue(2)
        return lambda: tuple(out)

    with patched(plain_prodcons):
        result = check(program)
    assert result.verdict == "exhaustive"
    assert result.outcomes == {(0, 1)}
    assert result.executions > 1


@pytest.mark.timeout(60)
def test_patch_mode_finds_if_instead_of_while() -> None:
    def program(rt: ControlledRuntime, buggy: bool) -> object:
        got = plain_prodcons.run_mailbox(buggy)
        return lambda: tuple(sorted(got))

    with patched(plain_prodcons):
        # the consumers append to one list with no lock (GIL-atomic, and the outcome is sorted):
        # the race detector reports it, so this test of the wait bug turns it off
        race = check(lambda rt: program(rt, False))
        bug = check(lambda rt: program(rt, True), spurious_wakeups=True, races=False)
        ok = check(lambda rt: program(rt, False), spurious_wakeups=True, races=False)
    assert race.failure is not None and race.failure.kind == "data_race"
    assert "list.append()" in race.failure.message
    assert bug.failure is not None and bug.failure.kind == "exception"
    assert "IndexError" in bug.failure.message
    assert ok.ok and ok.outcomes == {(0, 1)}


@pytest.mark.timeout(30)
def test_patch_mode_leaves_other_code_alone() -> None:
    import threading

    real = threading.Lock
    with patched(plain_prodcons):
        lock = threading.Lock()  # not in a controlled thread: a real lock
        assert lock.acquire() and not lock.acquire(blocking=False)
        lock.release()
    assert threading.Lock is real


@pytest.mark.timeout(30)
@explore()
def test_explore_decorator_passes(rt: ControlledRuntime) -> object:
    return fixed(rt)


@pytest.mark.timeout(30)
def test_explore_decorator_fails_a_bounded_search_unless_told_it_may_pass() -> None:
    # A bound is never a pass: five executions of a correct program prove nothing (the review
    # of session 34 found a buggy program's bounded run green, the default was to allow it).
    @explore(max_executions=5)
    def cut(rt: ControlledRuntime) -> object:
        return fixed(rt)

    with pytest.raises(AssertionError, match="search incomplete"):
        cut()

    @explore(max_executions=5, allow_bounded=True)
    def accepted(rt: ControlledRuntime) -> object:
        return fixed(rt)

    accepted()
    assert accepted.last_result.verdict == "bounded"  # type: ignore[attr-defined]


@pytest.mark.timeout(30)
def test_explore_decorator_raises_with_report() -> None:
    @explore()
    def broken(rt: ControlledRuntime) -> object:
        return racy(rt)

    with pytest.raises(AssertionError, match="lost update"):
        broken()


pytest_plugins = ["pytester"]


# The inner runs are in-process: pytest-playwright's plugin, loaded from the environment, refuses a
# session nested in another one, and this test has no browser in it.
INNER = ("-p", "no:cacheprovider", "-p", "no:playwright")


@pytest.mark.timeout(120)
def test_pytest_plugin_replays_a_schedule(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_demo="""
        from model_checks.harness import explore
        from model_checks.harness.examples import counter

        PROGRAM = counter(2, locked=False)

        import pytest

        @pytest.mark.timeout(60)
        @explore()
        def test_racy(rt):
            return PROGRAM(rt)

        @pytest.mark.timeout(60)
        @explore()
        def test_other(rt):
            return None
        """
    )
    first = pytester.runpytest(*INNER)
    first.assert_outcomes(failed=1, passed=1)
    text = first.stdout.str()
    line = next(ln for ln in text.splitlines() if "--lanecheck-replay=" in ln)
    schedule = line.split("--lanecheck-replay=")[1].split()[0]
    again = pytester.runpytest(*INNER, f"--lanecheck-replay={schedule}")
    again.assert_outcomes(failed=1, skipped=1)
    assert "lost update" in again.stdout.str()
    bad = pytester.runpytest(*INNER, "--lanecheck-replay=garbage")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
