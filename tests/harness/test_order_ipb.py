"""``strategy="dpor-ipb"``: DPOR whose pending backtrack points are taken fewest preemptions
first (iterative preemption bounding with sound DPOR inside each bound, none dropped).

It must reach exactly what depth-first DPOR reaches (the same Mazurkiewicz traces, hence the same
outcomes and failure kinds, and plain DFS's where DFS finishes), end "exhaustive" when its queue
empties, and find a few-preemption bug long before depth-first order does."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from model_checks.harness import Options, check, replay
from model_checks.harness.examples import PROGRAMS, Program, bounded_buffer, parking_pool
from model_checks.harness.execution import resolved
from model_checks.harness.options import Strategy
from model_checks.harness.rt.objects import dependent
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.searching import Search
from model_checks.harness.strategies.search import SearchChooser
from tests.harness.test_harness_differential import KINDS, Prog, build, generate

Trace = tuple[frozenset[tuple[int, int, int]], frozenset[tuple[tuple[int, int, int], tuple[int, int, int]]]]


def _trace(ex: Execution) -> Trace:
    """The execution's Mazurkiewicz trace: its events (thread, index in the thread, alternative)
    and the order of every dependent pair of them."""
    seen: dict[int, int] = {}
    events = []
    for s in ex.steps:
        k = seen.get(s.tid, 0)
        seen[s.tid] = k + 1
        events.append(((s.tid, k, s.alt), s.op))
    pairs = {
        (a, b)
        for i, (a, op_a) in enumerate(events)
        for b, op_b in events[i + 1 :]
        if a[0] != b[0] and dependent(op_a, op_b)
    }
    return frozenset(e for e, _ in events), frozenset(pairs)


def _traces(
    program: Program,
    options: Options,
    strategy: Strategy,
    stop: Callable[[SearchChooser], bool] = lambda chooser: False,
    chooser: SearchChooser | None = None,
) -> tuple[set[Trace], int, set[object]]:
    """Every trace the search reaches (sleep-set-blocked executions left out: they are cut
    short), its executions and its outcomes; ``stop`` ends the search early; ``chooser``: another
    chooser than ``strategy``'s own."""
    opts = resolved(options.with_(strategy=strategy))
    search = Search(program, opts, strategy)
    if chooser is None:
        chooser = SearchChooser(strategy != "dfs", None, strategy == "dpor-ipb")
    traces: set[Trace] = set()
    while True:
        chooser.start_execution()
        ex = search.run(chooser)
        if not ex.abandoned:
            traces.add(_trace(ex))
        if not chooser.advance() or stop(chooser):
            break
    return traces, search.result.executions, search.result.outcomes


def _three_threads(seed: int) -> Prog:
    """Larger generated programs than the DPOR/DFS differential's: 3 threads, 2-4 operations."""
    rng = random.Random(seed)
    return [
        [(rng.choice(KINDS), rng.randrange(2), rng.randrange(3)) for _ in range(rng.randint(2, 4))]
        for _ in range(3)
    ]


@pytest.mark.timeout(150)
@pytest.mark.parametrize("seed", range(0, 48, 3))
def test_same_traces_as_dpor_and_dfs_on_generated_programs(seed: int) -> None:
    prog = generate(seed)
    opts = Options(keep_going=True, minimize=False, spurious_wakeups=seed % 2 == 0, races=False)
    dfs = check(build(prog), opts.with_(strategy="dfs", max_executions=5_000))
    if dfs.verdict == "bounded" and any(b.startswith("max_executions") for b in dfs.bounded_by):
        pytest.skip("plain DFS space too large for a differential check")
    dpor_traces, _, dpor_out = _traces(build(prog), opts, "dpor")
    ipb_traces, ipb_n, ipb_out = _traces(build(prog), opts, "dpor-ipb")
    assert ipb_traces == dpor_traces, prog
    assert ipb_out == dpor_out == dfs.outcomes, prog
    ipb = check(build(prog), opts.with_(strategy="dpor-ipb"))
    assert ipb.failure_kinds == dfs.failure_kinds, prog
    assert ipb.executions == ipb_n <= dfs.executions


@pytest.mark.timeout(300)
@pytest.mark.parametrize("seed", [1, 3, 8, 61])
def test_same_traces_as_dpor_on_three_thread_programs(seed: int) -> None:
    """Spaces of tens to hundreds of executions (seed 61: 684), where the order of the
    pending points differs most from depth-first; the execution counts stay within 1%."""
    prog = _three_threads(seed)
    opts = Options(keep_going=True, minimize=False, spurious_wakeups=seed % 3 == 0, races=False)
    dpor_traces, dpor_n, dpor_out = _traces(build(prog), opts, "dpor")
    ipb_traces, ipb_n, ipb_out = _traces(build(prog), opts, "dpor-ipb")
    assert ipb_traces == dpor_traces, prog
    assert ipb_out == dpor_out, prog
    assert abs(ipb_n - dpor_n) <= max(1, dpor_n // 100), (ipb_n, dpor_n)


CORRECT: dict[str, Callable[[], Program]] = {
    **{
        name: PROGRAMS[name]
        for name in ("counter-locked", "cas-counter", "lock-order-consistent", "handoff-while", "independent")
    },
    "bounded-buffer": lambda: bounded_buffer(1, 2, 1, 1),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_proves_a_correct_program_in_about_dpors_executions(name: str) -> None:
    dpor = check(CORRECT[name](), Options(strategy="dpor", races=True))
    ipb = check(CORRECT[name](), Options(strategy="dpor-ipb", races=True))
    assert dpor.verdict == ipb.verdict == "exhaustive", ipb.summary()
    assert ipb.outcomes == dpor.outcomes
    assert ipb.strategy == "dpor-ipb"
    assert abs(ipb.executions - dpor.executions) <= max(1, dpor.executions // 50), ipb.summary()


@pytest.mark.timeout(120)
def test_a_few_preemption_bug_comes_long_before_depth_first_order_finds_it() -> None:
    """The issue's case: the idle worker parks without re-checking the queue. Depth-first DPOR
    needs ~17,000 executions; the preemption order under 900 (every pending point of fewer
    preemptions first)."""
    ipb = check(parking_pool(2, 2, recheck=False), Options(strategy="dpor-ipb", minimize=False))
    assert ipb.failure is not None and ipb.failure.kind == "lost_wakeup", ipb.summary()
    assert ipb.executions < 1_500, ipb.summary()
    cut = Options(strategy="dpor", max_executions=ipb.executions * 5)
    dpor = check(parking_pool(2, 2, recheck=False), cut)
    assert dpor.failure is None, "depth-first order found it as early: the case shows no difference"
    # fewest preemptions first: minimisation finds no schedule with fewer
    minimized = check(parking_pool(2, 2, recheck=False), Options(strategy="dpor-ipb", minimize=True))
    assert minimized.failure is not None
    assert minimized.failure.preemptions == ipb.failure.preemptions
    assert not any("shortest failing schedule" in n for n in minimized.notes)


def test_the_failure_replays() -> None:
    result = check(parking_pool(2, 2, recheck=False), Options(strategy="dpor-ipb"))
    assert result.failure is not None
    again = replay(parking_pool(2, 2, recheck=False), result.failure.schedule)
    assert again.failure is not None and again.failure.kind == result.failure.kind


def test_executions_come_in_order_of_preemptions() -> None:
    """The first executions use no preemption, and an execution of k+1 preemptions comes only
    after the search has reached k (a race found later may still add a cheaper point: the order
    is by pending point, not a bound on what comes after)."""
    seen: list[int] = []

    def program_with_counts() -> Program:
        return bounded_buffer(1, 2, 1, 1)

    opts = resolved(Options(strategy="dpor-ipb"))
    search = Search(program_with_counts(), opts, "dpor-ipb")
    chooser = SearchChooser(True, None, True)
    while True:
        chooser.start_execution()
        seen.append(search.run(chooser).preemptions)
        if not chooser.advance():
            break
    assert seen[0] == 0
    assert max(seen) >= 2, seen
    first = {k: seen.index(k) for k in set(seen)}
    assert all(first[k] < first[k + 1] for k in range(max(seen))), seen
    # fewer inversions than depth-first order's
    depth_first: list[int] = []
    search = Search(program_with_counts(), resolved(Options(strategy="dpor")), "dpor")
    chooser = SearchChooser(True, None)
    while True:
        chooser.start_execution()
        depth_first.append(search.run(chooser).preemptions)
        if not chooser.advance():
            break

    def inversions(xs: list[int]) -> int:
        return sum(1 for i in range(1, len(xs)) if xs[i] < xs[i - 1])

    assert inversions(seen) < inversions(depth_first), (seen, depth_first)


def test_a_cut_search_is_bounded_never_exhaustive() -> None:
    result = check(parking_pool(2, 1, recheck=True), Options(strategy="dpor-ipb", max_executions=50))
    assert result.verdict == "bounded"
    assert "max_executions=50" in result.bounded_by
    assert any("not a proof for any bound" in n for n in result.notes), result.notes


def test_a_preemption_bound_makes_it_bounded_dfs() -> None:
    options = Options(strategy="dpor-ipb", preemption_bound=0, minimize=False)
    result = check(PROGRAMS["counter-racy"](), options)
    assert result.strategy == "dfs"
    assert any("unsound under a preemption bound" in n for n in result.notes)


def test_dropping_the_deferred_points_would_miss_traces() -> None:
    """The points beyond the bound being explored must be kept: the same search stopped when it
    first reaches a point of 2 preemptions misses traces of the buffer that depth-first DPOR
    reaches, so the deferred buckets are what makes the verdict a proof."""
    program = bounded_buffer(1, 2, 1, 1)
    opts = resolved(Options(strategy="dpor-ipb", keep_going=True, minimize=False, races=False))
    reached, _, _ = _traces(program, opts, "dpor-ipb", lambda chooser: chooser.bound_now >= 2)
    full, _, _ = _traces(bounded_buffer(1, 2, 1, 1), opts, "dpor")
    assert reached < full
