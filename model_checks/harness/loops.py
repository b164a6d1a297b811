"""The search loops of ``check``, one per strategy: the systematic search (DPOR, DFS), random and
PCT sampling, the DPOR+PCT portfolio, coverage-guided sampling; and the minimisation of a
failure's preemptions."""

from __future__ import annotations

from model_checks.harness import step_deadline
from model_checks.harness.execution import TestFn
from model_checks.harness.options import Options, Result
from model_checks.harness.rt.scheduler import Chooser
from model_checks.harness.searching import Search
from model_checks.harness.strategies.frontier import Frontier
from model_checks.harness.strategies.randomized import PctChooser, RandomChooser
from model_checks.harness.strategies.search import SearchChooser

DEFAULT_RANDOM_EXECUTIONS = 1_000


def exhaustive(test_fn: TestFn, options: Options) -> Result:
    """The systematic search: ``dfs``, ``dpor`` (depth-first) or ``dpor-ipb`` (the same DPOR, its
    pending points taken fewest preemptions first; ``strategies/search.py``)."""
    dpor = options.strategy in ("dpor", "dpor-ipb")
    ordered = options.strategy == "dpor-ipb"
    s = Search(test_fn, options, options.strategy)
    if dpor and options.preemption_bound is not None:
        s.result.strategy = "dfs"
        s.result.notes.append(
            "DPOR with sleep sets is unsound under a preemption bound: ran plain bounded DFS instead"
        )
    chooser = SearchChooser(dpor, options.preemption_bound, ordered)
    stopped = False  # by the budget, before the search ran out of points
    while True:
        chooser.start_execution()
        ex = s.run(chooser)
        if s.take_restart():
            chooser = SearchChooser(dpor, options.preemption_bound, ordered)
        elif (ex.failure is not None and not options.keep_going) or not chooser.advance():
            break
        if s.stop_for_budget():
            stopped = True
            break
    s.take_search_figures(chooser)
    _let_tree_go(chooser)
    if chooser.ordered and stopped and s.failed_ex is None:
        # not a bound on the executions: a race found beyond it may still add points below it
        s.result.notes.append(
            f"dpor-ipb: stopped while exploring the points of {chooser.bound_now} preemptions "
            "(fewest first); not a proof for any bound"
        )
    return s.finish()


def _let_tree_go(chooser: SearchChooser) -> None:
    """Free the search's tree now that its figures are taken (session 48, review 14 C3). The
    last execution keeps its chooser (a report may read that execution), and an execution is a
    reference cycle: the tree, every node still pending under ``dpor-ipb``, hung from it until a
    full collection, the one ``patched`` makes at its end or the process's exit, walked it all
    (1.3 s after a 20 s limit on review 14's p102, growing with the executions). Freed here by
    reference counting (a node refers to its parent only), inside the search's elapsed time."""
    chooser.stack, chooser.buckets, chooser.heads = [], [], []


def randomized(test_fn: TestFn, options: Options) -> Result:
    s = Search(test_fn, options, options.strategy)
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


def portfolio(test_fn: TestFn, options: Options) -> Result:
    """DPOR and PCT, one execution each in turn, stopping at the first failure.

    The DPOR search keeps its stack between its executions (each execution re-runs the test from
    the start anyway), so a PCT execution in between changes nothing in it: its executions are
    exactly those of ``strategy="dpor"``, and the PCT ones exactly those of ``strategy="pct"``
    with the same seed. A bug either finds at its n-th execution is found by the portfolio within
    2n executions: a shallow bug PCT hits early no longer waits behind DPOR's depth-first order,
    and the verdict is still "exhaustive" when the DPOR part completes with nothing failing.
    PCT executions are never part of that proof; they only end the search sooner, with a failure.
    """
    s = Search(test_fn, options, "portfolio")
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
    _let_tree_go(dpor)
    part = "completed" if systematic_done else "did not complete"
    s.result.notes.append(
        f"portfolio: {s.result.executions - sampled} DPOR and {sampled} PCT executions "
        f"(seed={options.seed}); the DPOR part {part}"
    )
    return s.finish()


def coverage(test_fn: TestFn, options: Options) -> Result:
    """Coverage-guided sampling (``strategies/frontier.py``) until a failure or a limit."""
    feedback = options.feedback
    assert feedback is not None  # checked by ``api.check``
    s = Search(test_fn, options, "coverage")
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


def minimize(test_fn: TestFn, options: Options, result: Result) -> None:
    """Look for a failing schedule with fewer preemptions (iterative preemption bounding)."""
    failure = result.failure
    if failure is None or failure.preemptions == 0:
        return
    budget = options.minimize_executions
    for bound in range(failure.preemptions):
        # the search's time limit holds the shrinking too (session 46, C2: it ran unbounded)
        left = step_deadline.remaining(options.time_limit, result.elapsed)
        if budget <= 0 or left == 0.0:
            if left == 0.0:
                result.notes.append("not minimized further: the time limit was reached")
            return
        opts = options.with_(
            strategy="dfs", preemption_bound=bound, max_executions=budget, minimize=False, time_limit=left
        )
        found = exhaustive(test_fn, opts)
        result.elapsed += found.elapsed
        budget -= found.executions
        result.executions += found.executions
        result.steps += found.steps
        if found.failure is not None and found.failure.kind == failure.kind:
            result.failure = found.failure
            result.notes.append(f"shortest failing schedule found with preemption bound {bound}")
            return
