"""``check`` (one call runs a whole exploration), ``replay`` and the ``@explore`` decorator.

The pieces: ``execution`` runs one execution, ``searching`` keeps a check's figures, ``loops``
holds each strategy's search loop."""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from model_checks.harness import ctrl_c, loops, patch_random, step_deadline
from model_checks.harness.execution import Points, TestFn, execute, resolved
from model_checks.harness.options import Failure, Options, Result
from model_checks.harness.rt.backends import make_backend
from model_checks.harness.rt.scheduler import Chooser, Execution, UsageError
from model_checks.harness.schedule import Schedule, choice_hash, test_tag
from model_checks.harness.searching import POINTS, PROGRESS, Search
from model_checks.harness.strategies.simple import IndexChooser, ReplayChooser

MAX_DISCOVERY_ROUNDS = 64


class ReplayDivergence(Exception):
    """The schedule string does not describe an execution of this program."""


def run_once(
    test_fn: TestFn, options: Options, chooser: Chooser, *, sources: bool = True, points: Points | None = None
) -> Execution:
    """One execution of ``test_fn`` from the start under ``chooser`` (``execution.execute``), on
    the backend ``options`` names. ``sources=False`` skips recording each operation's source line
    (only a failure report shows them); ``points`` are the access sites made scheduling points
    (``interleave_races``)."""
    return execute(make_backend(options.backend), test_fn, options, chooser, sources=sources, points=points)


def _replay_hint(test_fn: TestFn, schedule: str) -> str:
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    if current:
        node = current.rsplit(" ", 1)[0]
        return f"pytest '{node}' --lanecheck-replay={schedule}"
    name = getattr(test_fn, "__qualname__", "test_fn")
    if all(part.isidentifier() for part in name.split(".")):
        return f"replay({name}, {schedule!r})   # or Options(replay={schedule!r})"
    # a lambda or a nested function has no name to write in a call: say which function it is
    code = getattr(test_fn, "__code__", None)
    where = f" defined at {os.path.basename(code.co_filename)}:{code.co_firstlineno}" if code else ""
    return (
        f"replay(fn, {schedule!r}) with fn the function you checked ({name}{where}), "
        f"or check it again with Options(replay={schedule!r})"
    )


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
    PROGRESS[0] = on_execution
    try:
        with heap_frozen(), ctrl_c.watched():
            return _check(test_fn, options, choices, overrides)
    finally:
        PROGRESS[0] = None


@contextlib.contextmanager
def heap_frozen() -> Iterator[None]:
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
    opts = resolved(opts)
    if (opts.strategy == "coverage") != (opts.feedback is not None):
        raise UsageError(
            "strategy 'coverage' needs Options(feedback=...) (the program's coverage feedback)"
            if opts.feedback is None
            else f"Options(feedback=...) is only for strategy 'coverage', not {opts.strategy!r}"
        )
    if opts.replay:
        return replay(test_fn, opts.replay, opts)
    if opts.interleave_races:
        POINTS[test_tag(test_fn)] = set()
    started = time.perf_counter()
    if choices is not None:
        s = Search(test_fn, opts, "choices")
        s.run(IndexChooser(choices))
        s.result.bounded_by.append("one execution drawn by Hypothesis")
        result = s.finish()
    elif opts.strategy in ("dpor-ipb", "dpor", "dfs"):
        result = loops.exhaustive(test_fn, opts)
    elif opts.strategy in ("random", "pct"):
        result = loops.randomized(test_fn, opts)
    elif opts.strategy == "portfolio":
        result = loops.portfolio(test_fn, opts)
    elif opts.strategy == "coverage":
        result = loops.coverage(test_fn, opts)
    else:
        raise UsageError(
            f"unknown strategy {opts.strategy!r}: "
            "use 'dpor-ipb', 'dpor', 'dfs', 'random', 'pct', 'portfolio' or 'coverage'"
        )
    if result.failure is not None:
        if opts.minimize and choices is None:
            loops.minimize(test_fn, opts, result)
        result.replay_hint = _replay_hint(test_fn, result.failure.schedule)
    result.elapsed = time.perf_counter() - started
    return result


def replay(test_fn: TestFn, schedule: str, options: Options | None = None) -> Result:
    """Run exactly the execution ``schedule`` names; raise ``ReplayDivergence`` if it cannot."""
    opts = resolved((options or Options()).with_(replay=None))
    sched = Schedule.decode(schedule)
    patch_random.replaying(sched.draws)  # the draws it was recorded with
    tag = test_tag(test_fn)
    if sched.tag != tag:
        raise ReplayDivergence(
            f"schedule {schedule} was recorded for another test (tag {sched.tag}, this test is {tag})"
        )
    chooser = ReplayChooser(sched.actions)
    s = Search(test_fn, opts, "replay")
    ex = s.run(chooser)
    # interleave_races in a fresh process: the schedule's scheduling points are found again, as
    # the search found them (each race met makes its sites points), then the replay runs again
    rounds = 0
    while s.take_restart() and rounds < MAX_DISCOVERY_ROUNDS:
        rounds += 1
        chooser = ReplayChooser(sched.actions)
        s = Search(test_fn, opts, "replay")
        ex = s.run(chooser)
    if chooser.divergence is not None:
        raise ReplayDivergence(f"replay of {schedule} diverged: {chooser.divergence}")
    if step_deadline.cut(ex):  # (stopped short: its operations are a prefix, no divergence)
        s.result.bounded_by.append("one replayed execution, stopped at the time limit before its end")
        return s.finish()
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
    options: Options | None = None, *, allow_bounded: bool = False, **overrides: Any
) -> Callable[[TestFn], Callable[[], None]]:
    """Decorator: turn ``def test_x(rt): ...`` into a pytest test that explores it.

    ``@explore(preemption_bound=2)`` or ``@explore(Options(...))``. The test fails with the full
    report when a failure is found, and when the verdict is "bounded": a bound is never a pass,
    unless the test says it accepts one (``allow_bounded=True``, e.g. a deliberate time limit)."""
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
