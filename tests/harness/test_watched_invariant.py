"""Session 14's per-step cuts (issue 16) change what the harness costs, never what it explores.

* an invariant registered with ``watch=records`` (``rt.invariant``, ``records.Watched``) runs
  only after the steps that changed the list's length, once at the first step, and fails after
  exactly the step, with exactly the message, of the same invariant unwatched;
* the work-lane scenarios, whose drain watch is such an invariant, explore the same executions
  with the same verdicts as with their watch run after every step, and the drain watch, watched,
  still catches two workers draining one lane, after the same step as unwatched;
* a thread's usual action is one tuple, kept (``ThreadInfo.action``), and the greenlet back end's
  direct switches explore what the thread back end explores.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from model_checks.designs.work_lane import scenarios
from model_checks.harness import Options, check
from model_checks.harness.api import run_once
from model_checks.harness.lane_programs import ReportedTrace
from model_checks.harness.rt.records import ThreadInfo, Watched
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.strategies.randomized import PctChooser

Program = Callable[[ControlledRuntime], object]


def appender(watched: bool, limit: int, calls: list[int], drop: bool = False) -> Program:
    """Two threads append to a list under a lock, with lock steps between the appends; the
    invariant fails once the list has held ``limit`` items (so ``limit`` 0 never fails).
    ``drop``: the check empties the list, as the work lane's drain watch does in report mode."""

    def program(rt: ControlledRuntime) -> object:
        records: list[int] = []
        seen = [0]
        lock = rt.lock("l")

        def check_records() -> bool:
            calls.append(len(records))
            seen[0] += len(records) if drop else len(records) - seen[0]
            if drop:
                records.clear()
            return not limit or seen[0] < limit

        rt.invariant(check_records, "bounded", watch=records if watched else None)

        def body() -> None:
            for i in range(3):
                with lock:
                    pass
                with lock:
                    records.append(i)

        t = rt.start_thread(body, "a")
        body()
        t.join()
        return lambda: seen[0]

    return program


def explore(program: Program, options: Options) -> Any:
    return check(program, options.with_(minimize=False))


@pytest.mark.parametrize("drop", [False, True])
def test_a_watched_invariant_runs_only_after_the_steps_that_changed_its_list(drop: bool) -> None:
    calls: list[int] = []
    options = Options(strategy="pct", seed=3, max_executions=1)
    result = explore(appender(True, 0, calls, drop), options)
    assert result.failure is None
    # one call for the first step, then one per append (six appends, each its own step)
    assert len(calls) == 1 + 6, calls
    assert calls[0] == 0
    if drop:
        assert calls[1:] == [1] * 6
    else:
        assert calls[1:] == list(range(1, 7))
    unwatched: list[int] = []
    explore(appender(False, 0, unwatched, drop), options)
    assert len(unwatched) > len(calls)  # every step: the watch is what saved the calls


@pytest.mark.parametrize("drop", [False, True])
def test_a_watched_invariant_fails_where_the_unwatched_one_does(drop: bool) -> None:
    # must fail: the list reaches 4 items in every execution
    for strategy in ("dfs", "pct"):
        options = Options(strategy=strategy, seed=5, max_executions=40, preemption_bound=1)
        watched = explore(appender(True, 4, [], drop), options)
        plain = explore(appender(False, 4, [], drop), options)
        assert watched.failure is not None and plain.failure is not None
        assert watched.failure.kind == plain.failure.kind == "invariant"
        assert watched.failure.message == plain.failure.message  # names the same step
        assert watched.failure.schedule == plain.failure.schedule
        assert watched.executions == plain.executions


def test_a_watched_invariant_explores_the_same_executions() -> None:
    options = Options(strategy="dfs", preemption_bound=2, max_executions=300)
    watched = explore(appender(True, 0, []), options)
    plain = explore(appender(False, 0, []), options)
    assert watched.failure is None and plain.failure is None
    assert (watched.executions, watched.steps, watched.outcomes, watched.verdict) == (
        plain.executions,
        plain.steps,
        plain.outcomes,
        plain.verdict,
    )


def test_watched_called_directly_always_checks() -> None:
    records: list[int] = []
    calls: list[int] = []

    def check_records() -> bool:
        calls.append(len(records))
        return True

    w = Watched(check_records, records)
    assert w.due()  # never ran: due
    assert w() is True
    assert not w.due()
    assert w() is True  # called directly (a report, the fingerprint): runs all the same
    assert calls == [0, 0]
    records.append(1)
    assert w.due()


class Unwatching:
    """PCT (``inner``), after turning every watched invariant registered so far back into a plain
    one, run after every step, as before the watch. A chooser of our own, called at every step
    (``PctChooser.keep``'s shortcut is ``choose``'s answer, so the executions are PCT's)."""

    needs_after_step = False
    trusted = True

    def __init__(self, inner: PctChooser) -> None:
        self.inner = inner
        self.unwatched = 0

    def choose(self, ex: Any, enabled: list[Any]) -> Any:
        hooks = ex.hooks.invariants
        if any(isinstance(check, Watched) for _, check in hooks):
            self.unwatched += 1
            hooks[:] = [(name, check.check if isinstance(check, Watched) else check) for name, check in hooks]
        return self.inner.choose(ex, enabled)

    def after_step(self, ex: Any) -> None:
        return None


def _figures(result: Any) -> tuple[object, ...]:
    kind = None if result.failure is None else (result.failure.kind, result.failure.message)
    return (result.executions, result.steps, sorted(map(str, result.outcomes)), result.verdict, kind)


def _execution(ex: Any) -> tuple[object, ...]:
    failure = None if ex.failure is None else (ex.failure.kind, ex.failure.message)
    return ([(s.tid, s.alt, s.op.kind) for s in ex.steps], ex.preemptions, str(ex.outcome), failure)


@pytest.mark.parametrize("name", ["work-lane/lanes-2x2-budget1", "work-lane/stop-discard-races-posts"])
def test_work_lane_scenarios_explore_the_same_with_and_without_the_watch(name: str) -> None:
    program = scenarios.SCENARIOS[name]()
    options = Options(strategy="pct", seed=7)
    expected = 130
    for index in range(60):
        watched = run_once(program, options, PctChooser(7, index, options.pct_depth, expected), sources=False)
        unwatching = Unwatching(PctChooser(7, index, options.pct_depth, expected))
        plain = run_once(program, options, unwatching, sources=False)
        assert unwatching.unwatched == 1  # the drain watch was registered watched, and unwatched
        assert _execution(watched) == _execution(plain), index
        assert watched.failure is None


def overlapping_drains(watched: bool, report: bool) -> Program:
    """Two workers each drain lane 0 (begin, invoke, end), with lock steps in between: the work
    lane's drain watch, wired as ``lane_program`` wires it, must report the overlap."""

    def program(rt: ControlledRuntime) -> object:
        tracer = scenarios._StepTracer()
        watch = scenarios._drain_watch(tracer, ReportedTrace(rt) if report else None)
        rt.invariant(watch.check, "one drainer per lane", watch=watch.records if watched else None)
        lock = rt.lock("lane")

        def worker() -> None:
            for kind in ("drain_begin", "invoke", "drain_end"):
                with lock:
                    tracer.emit(rt.thread_name(), kind, {"lane": 0})

        t = rt.start_thread(worker, "w1")
        worker()
        t.join()
        return None

    return program


@pytest.mark.parametrize("report", [False, True])
def test_the_drain_watch_still_catches_a_second_drainer(report: bool) -> None:
    # must fail: some interleaving begins a drain of lane 0 while the other worker drains it
    options = Options(strategy="dfs", max_executions=200, minimize=False)
    watched = check(overlapping_drains(True, report), options)
    plain = check(overlapping_drains(False, report), options)
    assert watched.failure is not None and watched.failure.kind == "invariant"
    assert "one drainer per lane raised DrainOverlap" in watched.failure.message
    assert _figures(watched) == _figures(plain)
    assert watched.failure.schedule == plain.failure.schedule  # type: ignore[union-attr]


def test_a_threads_usual_action_is_one_kept_tuple() -> None:
    from model_checks.harness.rt.objects import ThreadState

    t = ThreadInfo(3, "t", ThreadState(0, "t", 3), lambda: None)
    assert t.run == t.action == (3, 0)
    assert t.action is t.action  # kept, not rebuilt at each read (compiled: ``run`` is)


def test_direct_greenlet_switches_explore_what_the_thread_back_end_does() -> None:
    program = appender(False, 0, [])
    options = Options(strategy="pct", seed=11, max_executions=1)
    for index in range(8):
        green = run_once(program, options, PctChooser(11, index, 3, 40))
        threads = run_once(program, options.with_(backend="threads"), PctChooser(11, index, 3, 40))
        assert [(s.tid, s.alt, s.op.kind) for s in green.steps] == [
            (s.tid, s.alt, s.op.kind) for s in threads.steps
        ]
        assert green.outcome == threads.outcome == 6


def test_watched_kinds_skips_only_the_steps_that_added_no_such_record() -> None:
    records: list[tuple[str, str, dict[str, int]]] = []
    calls: list[int] = []

    def check_records() -> bool:
        calls.append(len(records))
        return True

    w = Watched(check_records, records, frozenset({"invoke"}))
    assert w.due()  # never ran: due, whatever the kinds
    w()
    records.append(("w0", "take", {}))
    assert not w.due()  # only a record of another kind: skipped...
    assert not w.due()  # ...and passed over
    records.append(("w0", "invoke", {}))
    assert w.due()
    w()
    records.append(("w0", "post", {}))
    records.append(("w0", "invoke", {}))
    assert w.due()  # a step that added both kinds
    assert calls == [0, 2]


def test_kinds_needs_a_watched_list() -> None:
    from model_checks.harness.rt.ending import UsageError

    def program(rt: ControlledRuntime) -> object:
        rt.invariant(lambda: True, "k", kinds=frozenset({"invoke"}))
        return None

    with pytest.raises(UsageError, match="watch="):
        check(program, Options(strategy="pct", seed=1, max_executions=1))
