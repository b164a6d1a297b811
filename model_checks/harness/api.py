"""``check`` (one call runs a whole exploration), ``replay`` and the ``@explore`` decorator."""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from model_checks.harness import races
from model_checks.harness.declared import fields_as_points
from model_checks.harness.options import Failure, Options, Result
from model_checks.harness.patch import active as patch_mode
from model_checks.harness.patch import set_current
from model_checks.harness.report import build_failure
from model_checks.harness.rt.backends import make_backend
from model_checks.harness.rt.scheduler import Chooser, Execution, UsageError
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.schedule import Schedule, choice_hash, test_tag
from model_checks.harness.strategies.frontier import Frontier
from model_checks.harness.strategies.randomized import PctChooser, RandomChooser
from model_checks.harness.strategies.search import SearchChooser
from model_checks.harness.strategies.simple import IndexChooser, ReplayChooser

TestFn = Callable[[ControlledRuntime], object]
_PROGRESS: list[Callable[[Result], None] | None] = [None]
# interleave_races: the access sites made scheduling points, per test (by its tag). A check starts
# its test's set afresh; it stays after the check, so that ``replay`` of a schedule the check
# reported runs the same scheduling points.
_POINTS: dict[str, set[races.Point]] = {}
MAX_DISCOVERY_ROUNDS = 64
DEFAULT_RANDOM_EXECUTIONS = 1_000


class ReplayDivergence(Exception):
    """The schedule string does not describe an execution of this program."""


def run_once(
    test_fn: TestFn,
    options: Options,
    chooser: Chooser,
    *,
    sources: bool = True,
    points: set[races.Point] | None = None,
) -> Execution:
    """One execution of ``test_fn`` from the start under ``chooser``. ``sources=False`` skips
    recording each operation's source line (only a failure report shows them); ``points`` are the
    access sites made scheduling points (``interleave_races``)."""
    ex = Execution(
        make_backend(options.backend),
        chooser,
        max_steps=options.max_steps,
        spurious_wakeups=options.spurious_wakeups,
        virtual_timeouts=options.virtual_timeouts,
    )
    ex.spurious_limit = options.spurious_limit
    ex.timeout_limit = options.timeout_limit
    ex.keep_going = options.keep_going
    ex.sources = sources
    rt = ControlledRuntime(ex)
    set_current(rt)
    if not options.races:
        try:
            ex.run(lambda: test_fn(rt))
        finally:
            set_current(None)
        return ex
    ex.race = races.RaceDetector(ex, points)
    previous = sys.gettrace()
    try:
        with fields_as_points():
            ex.run(lambda: test_fn(rt))
    finally:
        sys.settrace(previous)
        set_current(None)
    return ex


def races_default(options: Options) -> bool:
    """``Options.races=None``: on in patch mode (plain ``threading`` code, where nothing else marks
    shared accesses); elsewhere off, and an exhaustive verdict then says "synchronisation points
    only" (tracing costs the controlled-runtime suites and benches several times their time)."""
    if options.races is not None:
        return options.races
    return patch_mode()


def _resolved(options: Options) -> Options:
    if options.interleave_races:
        if options.races is False:
            raise UsageError(
                "interleave_races interleaves the races the detector finds: not with races=False"
            )
        options = options.with_(races=True)
    on = races_default(options)
    if on and not races.SUPPORTED:
        if options.races:
            raise UsageError("the data-race detector needs CPython 3.11 (opcode tracing of its frames)")
        on = False
    return options if options.races is on else options.with_(races=on)


class _Search:
    """Accumulates figures over the executions of one ``check``."""

    def __init__(self, test_fn: TestFn, options: Options, strategy: str) -> None:
        self.test_fn = test_fn
        self.options = options
        self.tag = test_tag(test_fn)
        self.result = Result(verdict="exhaustive", strategy=strategy, races=bool(options.races))
        self.start = time.perf_counter()
        self.failed_ex: Execution | None = None
        self.on_execution: Callable[[Result], None] | None = _PROGRESS[0]
        # interleave_races: the sites made scheduling points; the first race (with the points in
        # force when it was found); whether the last execution added points (the search restarts)
        self.points = _POINTS.setdefault(self.tag, set()) if options.interleave_races else None
        self.first_race: tuple[Execution, frozenset[races.Point]] | None = None
        self.restart = False
        self.previous: Execution | None = None  # the last execution run, freed at the next

    def take_restart(self) -> bool:
        """Did the last execution make new sites scheduling points? The program's scheduling
        points changed, so a systematic search starts again (its tree is no longer the program's)."""
        restart, self.restart = self.restart, False
        return restart

    def _interleave(self, ex: Execution) -> bool:
        """``ex`` found a race: make its sites scheduling points (True) unless they already are."""
        detector = ex.race
        if self.points is None or not isinstance(detector, races.RaceDetector) or not detector.racy:
            return False
        new = set(detector.racy) - self.points
        if not new:
            return False
        if self.first_race is None:
            self.first_race = (ex, frozenset(self.points))
        self.points |= new
        assert ex.failure is not None
        self.result.notes.append(
            f"interleave_races: {ex.failure.message}: both accesses made scheduling points, search restarted"
        )
        self.restart = True
        return True

    def out_of_budget(self) -> str | None:
        o = self.options
        if o.max_executions is not None and self.result.executions >= o.max_executions:
            return f"max_executions={o.max_executions}"
        if o.time_limit is not None and time.perf_counter() - self.start >= o.time_limit:
            return f"time_limit={o.time_limit:g}s"
        return None

    def stop_for_budget(self) -> bool:
        """Is the budget spent? If so, the reason is recorded (the verdict is then "bounded")."""
        reason = self.out_of_budget()
        if reason:
            self.result.bounded_by.append(reason)
        return reason is not None

    def take_search_figures(self, chooser: SearchChooser) -> None:
        """A systematic search's own figures: what its preemption bound cut, what it pruned."""
        if chooser.cut:
            self.result.bounded_by.insert(0, f"preemption_bound={self.options.preemption_bound}")
        self.result.pruned = chooser.pruned

    def _release_previous(self) -> None:
        """Free the previous execution now (``Execution.release``) unless a report needs it."""
        prev, self.previous = self.previous, None
        if prev is None or prev is self.failed_ex:
            return
        if self.first_race is not None and prev is self.first_race[0]:
            return
        prev.release()

    def run(self, chooser: Chooser) -> Execution:
        # The caller reads the execution it gets back until its next ``run``: freed then.
        self._release_previous()
        # Exploring records no source lines; the failing execution is replayed with them for its
        # report (``_with_sources``).
        ex = run_once(self.test_fn, self.options, chooser, sources=False, points=self.points)
        self.previous = ex
        r = self.result
        r.executions += 1
        r.steps += len(ex.steps)
        r.max_preemptions = max(r.max_preemptions, ex.preemptions)
        if ex.failure is not None and ex.failure.kind == "data_race" and self._interleave(ex):
            if self.on_execution is not None:
                self.on_execution(r)
            return ex
        if ex.failure is None and not ex.abandoned:
            r.outcomes.add(ex.outcome)
        for cut in sorted(ex.limit_cut):
            if cut not in r.bounded_by:
                r.bounded_by.append(cut)
        if ex.failure is not None:
            r.failure_kinds.add(ex.failure.kind)
            if self.failed_ex is None:
                self.failed_ex = ex
        if self.on_execution is not None:
            self.on_execution(r)
        return ex

    def _with_sources(self, ex: Execution, points: set[races.Point] | None = None) -> Execution:
        """The failing execution again, this time recording source lines for the report; ``ex``
        itself if the program does not repeat it (it is then reported without source lines)."""
        if ex.sources:
            return ex
        again = run_once(
            self.test_fn,
            self.options,
            ReplayChooser([(s.tid, s.alt) for s in ex.steps]),
            points=self.points if points is None else points,
        )
        same = (
            again.failure is not None
            and ex.failure is not None
            and again.failure.kind == ex.failure.kind
            and len(again.steps) == len(ex.steps)
            and choice_hash([(s.tid, s.alt, s.op) for s in again.steps])
            == choice_hash([(s.tid, s.alt, s.op) for s in ex.steps])
        )
        return again if same else ex

    def finish(self) -> Result:
        r = self.result
        if self.failed_ex is not None and self.failed_ex.failure is not None:
            r.verdict = "failed"
            shown = self._with_sources(self.failed_ex)
            assert shown.failure is not None
            r.failure = build_failure(shown, shown.failure, self.tag)
        elif self.first_race is not None:
            # the racy accesses were interleaved and nothing else failed: the race stands
            race, points = self.first_race
            r.verdict = "failed"
            shown = self._with_sources(race, set(points))
            assert shown.failure is not None
            r.failure = build_failure(shown, shown.failure, self.tag)
            r.notes.append(
                "interleave_races: running the racy accesses in both orders showed no other failure; "
                "the first data race is reported (its schedule replays with races=True"
                + (")" if not points else " and the scheduling points in force when it was found)")
            )
        elif r.bounded_by:
            r.verdict = "bounded"
        elif not r.races:
            r.notes.append(
                "race detection off: plain shared accesses between synchronisation points were not "
                "checked, so this is a proof only if the program is data-race free (Options(races=True))"
            )
        r.elapsed = time.perf_counter() - self.start
        return r


def _exhaustive(test_fn: TestFn, options: Options) -> Result:
    dpor = options.strategy == "dpor"
    s = _Search(test_fn, options, options.strategy)
    if dpor and options.preemption_bound is not None:
        s.result.strategy = "dfs"
        s.result.notes.append(
            "DPOR with sleep sets is unsound under a preemption bound: ran plain bounded DFS instead"
        )
    chooser = SearchChooser(dpor, options.preemption_bound)
    while True:
        chooser.start_execution()
        ex = s.run(chooser)
        if s.take_restart():
            chooser = SearchChooser(dpor, options.preemption_bound)
        elif (ex.failure is not None and not options.keep_going) or not chooser.advance():
            break
        if s.stop_for_budget():
            break
    s.take_search_figures(chooser)
    return s.finish()


def _randomized(test_fn: TestFn, options: Options) -> Result:
    s = _Search(test_fn, options, options.strategy)
    limit = options.max_executions
    if limit is None and options.time_limit is None:
        limit = DEFAULT_RANDOM_EXECUTIONS
    s.options = options.with_(max_executions=limit)
    expected = 50
    while s.out_of_budget() is None:
        index = s.result.executions
        chooser: Chooser
        if options.strategy == "pct":
            chooser = PctChooser(options.seed, index, options.pct_depth, expected)
        else:
            chooser = RandomChooser(options.seed, index)
        ex = s.run(chooser)
        expected = max(expected, len(ex.steps))
        if ex.failure is not None and not s.take_restart():
            break
    s.result.bounded_by.append(f"{options.strategy} sampling (seed={options.seed})")
    s.result.notes.append("random and PCT sample the schedule space: never a proof of absence")
    if s.failed_ex is None:
        s.result.bounded_by[-1] += f", {s.result.executions} executions"
    return s.finish()


def _portfolio(test_fn: TestFn, options: Options) -> Result:
    """DPOR and PCT, one execution each in turn, stopping at the first failure.

    The DPOR search keeps its stack between its executions (each execution re-runs the test from
    the start anyway), so a PCT execution in between changes nothing in it: its executions are
    exactly those of ``strategy="dpor"``, and the PCT ones exactly those of ``strategy="pct"``
    with the same seed. A bug either finds at its n-th execution is found by the portfolio within
    2n executions: a shallow bug PCT hits early no longer waits behind DPOR's depth-first order,
    and the verdict is still "exhaustive" when the DPOR part completes with nothing failing.
    PCT executions are never part of that proof; they only end the search sooner, with a failure.
    """
    s = _Search(test_fn, options, "portfolio")
    dpor = SearchChooser(True, options.preemption_bound)
    if options.preemption_bound is not None:
        s.result.notes.append(
            "DPOR with sleep sets is unsound under a preemption bound: the systematic part ran plain "
            "bounded DFS instead"
        )
    expected = 50  # PCT's estimate of the steps per execution, from its own executions only
    sampled = 0
    systematic_done = False
    while True:
        dpor.start_execution()
        failed = s.run(dpor).failure is not None
        if s.take_restart():
            dpor = SearchChooser(True, options.preemption_bound)
        elif failed and not options.keep_going:
            break
        elif not dpor.advance():
            systematic_done = True
            break
        if s.stop_for_budget():
            break
        # A limit (spurious_limit, ...) cutting a sampled execution bounds nothing: only the DPOR
        # part's executions make the proof, and their cuts are recorded.
        cuts = list(s.result.bounded_by)
        ex = s.run(PctChooser(options.seed, sampled, options.pct_depth, expected))
        s.result.bounded_by[:] = cuts
        sampled += 1
        expected = max(expected, len(ex.steps))
        if s.take_restart():
            dpor = SearchChooser(True, options.preemption_bound)
        elif ex.failure is not None and not options.keep_going:
            break
        if s.stop_for_budget():
            break
    s.take_search_figures(dpor)
    part = "completed" if systematic_done else "did not complete"
    s.result.notes.append(
        f"portfolio: {s.result.executions - sampled} DPOR and {sampled} PCT executions "
        f"(seed={options.seed}); the DPOR part {part}"
    )
    return s.finish()


def _coverage(test_fn: TestFn, options: Options) -> Result:
    """Coverage-guided sampling (``strategies/frontier.py``) until a failure or a limit."""
    feedback = options.feedback
    assert feedback is not None  # checked by ``_check``
    s = _Search(test_fn, options, "coverage")
    limit = options.max_executions
    if limit is None and options.time_limit is None:
        limit = DEFAULT_RANDOM_EXECUTIONS
    s.options = options.with_(max_executions=limit)
    frontier = Frontier(feedback, options.seed)
    while s.out_of_budget() is None:
        chooser = frontier.chooser()
        ex = s.run(chooser)
        frontier.learn(chooser, ex)
        if s.take_restart():
            # new scheduling points: the kept prefixes no longer name the same executions
            frontier = Frontier(feedback, options.seed)
        elif ex.failure is not None:
            break
    s.result.bounded_by.append(f"coverage-guided sampling (seed={options.seed})")
    s.result.notes.append(
        f"coverage: {frontier.covered} goals covered, {len(frontier.prefixes)} positions kept, "
        f"{frontier.restarts} executions restarted from one, {frontier.diverged} prefixes diverged; "
        "sampling is never a proof of absence"
    )
    if s.failed_ex is None:
        s.result.bounded_by[-1] += f", {s.result.executions} executions"
    return s.finish()


def _minimize(test_fn: TestFn, options: Options, result: Result) -> None:
    """Look for a failing schedule with fewer preemptions (iterative preemption bounding)."""
    failure = result.failure
    if failure is None or failure.preemptions == 0:
        return
    budget = options.minimize_executions
    for bound in range(failure.preemptions):
        if budget <= 0:
            return
        opts = options.with_(
            strategy="dfs", preemption_bound=bound, max_executions=budget, minimize=False, time_limit=None
        )
        found = _exhaustive(test_fn, opts)
        budget -= found.executions
        result.executions += found.executions
        result.steps += found.steps
        if found.failure is not None and found.failure.kind == failure.kind:
            result.failure = found.failure
            result.notes.append(f"shortest failing schedule found with preemption bound {bound}")
            return


def _replay_hint(test_fn: TestFn, schedule: str) -> str:
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    if current:
        node = current.rsplit(" ", 1)[0]
        return f"pytest '{node}' --lanecheck-replay={schedule}"
    name = getattr(test_fn, "__qualname__", "test_fn")
    return f"replay({name}, {schedule!r})   # or Options(replay={schedule!r})"


def check(
    test_fn: TestFn,
    options: Options | None = None,
    *,
    choices: Sequence[int] | None = None,
    on_execution: Callable[[Result], None] | None = None,
    **overrides: Any,
) -> Result:
    """Explore the executions of ``test_fn(rt)`` and return the verdict.

    ``test_fn`` builds the program with ``rt`` only (``rt.lock()``, ``rt.start_thread(...)``),
    may register ``rt.invariant``, ``rt.pending_work``, ``rt.final`` and may return a final check
    (a callable run when every thread has finished; its return value is the execution's outcome).
    ``choices`` (from the ``schedules()`` Hypothesis strategy) runs exactly one execution.
    ``on_execution(result_so_far)`` is called after every execution (progress bars).
    """
    _PROGRESS[0] = on_execution
    try:
        with _heap_frozen():
            return _check(test_fn, options, choices, overrides)
    finally:
        _PROGRESS[0] = None


@contextlib.contextmanager
def _heap_frozen() -> Iterator[None]:
    """Exclude what existed before the search from the cyclic GC while it runs.

    Every execution makes cyclic garbage (its threads, objects and the scheduler under test), so
    the collector runs often; frozen, its full collections no longer walk the rest of the
    process's heap (the test runner, Hypothesis, the modules): about +10% executions/s on the
    standard scenario. Left alone when someone else froze the heap."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _check(
    test_fn: TestFn, options: Options | None, choices: Sequence[int] | None, overrides: dict[str, Any]
) -> Result:
    opts = (options or Options()).with_(**overrides) if overrides else (options or Options())
    opts = _resolved(opts)
    if (opts.strategy == "coverage") != (opts.feedback is not None):
        raise UsageError(
            "strategy 'coverage' needs Options(feedback=...) (the program's coverage feedback)"
            if opts.feedback is None
            else f"Options(feedback=...) is only for strategy 'coverage', not {opts.strategy!r}"
        )
    if opts.replay:
        return replay(test_fn, opts.replay, opts)
    if opts.interleave_races:
        _POINTS[test_tag(test_fn)] = set()
    started = time.perf_counter()
    if choices is not None:
        s = _Search(test_fn, opts, "choices")
        s.run(IndexChooser(choices))
        s.result.bounded_by.append("one execution drawn by Hypothesis")
        result = s.finish()
    elif opts.strategy in ("dpor", "dfs"):
        result = _exhaustive(test_fn, opts)
    elif opts.strategy in ("random", "pct"):
        result = _randomized(test_fn, opts)
    elif opts.strategy == "portfolio":
        result = _portfolio(test_fn, opts)
    elif opts.strategy == "coverage":
        result = _coverage(test_fn, opts)
    else:
        raise UsageError(
            f"unknown strategy {opts.strategy!r}: "
            "use 'dpor', 'dfs', 'random', 'pct', 'portfolio' or 'coverage'"
        )
    if result.failure is not None:
        if opts.minimize and choices is None:
            _minimize(test_fn, opts, result)
        result.replay_hint = _replay_hint(test_fn, result.failure.schedule)
    result.elapsed = time.perf_counter() - started
    return result


def replay(test_fn: TestFn, schedule: str, options: Options | None = None) -> Result:
    """Run exactly the execution ``schedule`` names; raise ``ReplayDivergence`` if it cannot."""
    opts = _resolved((options or Options()).with_(replay=None))
    sched = Schedule.decode(schedule)
    tag = test_tag(test_fn)
    if sched.tag != tag:
        raise ReplayDivergence(
            f"schedule {schedule} was recorded for another test (tag {sched.tag}, this test is {tag})"
        )
    chooser = ReplayChooser(sched.actions)
    s = _Search(test_fn, opts, "replay")
    ex = s.run(chooser)
    # interleave_races in a fresh process: the schedule's scheduling points are found again, as
    # the search found them (each race met makes its sites points), then the replay runs again
    rounds = 0
    while s.take_restart() and rounds < MAX_DISCOVERY_ROUNDS:
        rounds += 1
        chooser = ReplayChooser(sched.actions)
        s = _Search(test_fn, opts, "replay")
        ex = s.run(chooser)
    if chooser.divergence is not None:
        raise ReplayDivergence(f"replay of {schedule} diverged: {chooser.divergence}")
    got = choice_hash([(st.tid, st.alt, st.op) for st in ex.steps])
    if got != sched.hash:
        raise ReplayDivergence(
            f"replay of {schedule} diverged: same thread choices, but the program's operations differ "
            f"(hash {got} != {sched.hash}): the code changed since the schedule was recorded"
        )
    s.result.bounded_by.append("one replayed execution")
    result = s.finish()
    if result.failure is None:
        result.notes.append("the replayed execution did not fail (fixed?)")
    else:
        result.replay_hint = _replay_hint(test_fn, result.failure.schedule)
    return result


class ExplorationFailed(AssertionError):
    """Raised by ``@explore`` tests: the message is the full failure report."""


_REPLAY_OVERRIDE: list[str | None] = [None]  # set by the pytest plugin (--lanecheck-replay)


def set_replay_override(schedule: str | None) -> None:
    _REPLAY_OVERRIDE[0] = schedule


def explore(
    options: Options | None = None, *, allow_bounded: bool = True, **overrides: Any
) -> Callable[[TestFn], Callable[[], None]]:
    """Decorator: turn ``def test_x(rt): ...`` into a pytest test that explores it.

    ``@explore(preemption_bound=2)`` or ``@explore(Options(...))``. The test fails with the full
    report when a failure is found, or when the verdict is "bounded" and ``allow_bounded`` is False.
    """
    opts = (options or Options()).with_(**overrides) if overrides else (options or Options())

    def decorate(fn: TestFn) -> Callable[[], None]:
        @functools.wraps(fn)
        def test() -> None:
            forced = _REPLAY_OVERRIDE[0]
            if forced is not None:
                sched = Schedule.decode(forced)
                if sched.tag != test_tag(fn):
                    import pytest

                    pytest.skip(f"--lanecheck-replay schedule belongs to another test (tag {sched.tag})")
                result = replay(fn, forced, opts)
            else:
                result = check(fn, opts)
            if result.failure is not None:
                raise ExplorationFailed(result.report())
            if result.verdict == "bounded" and not allow_bounded:
                raise ExplorationFailed(f"search incomplete: {result.summary()}")
            test.last_result = result  # type: ignore[attr-defined]

        test.__wrapped__ = fn
        test.lanecheck_options = opts  # type: ignore[attr-defined]
        # pytest must not try to inject a fixture called ``rt``
        test.__signature__ = __import__("inspect").Signature()  # type: ignore[attr-defined]
        return test

    return decorate


__all__ = ["ExplorationFailed", "Failure", "ReplayDivergence", "check", "explore", "replay", "run_once"]
