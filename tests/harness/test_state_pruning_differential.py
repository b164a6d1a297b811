"""Differential check of state-hash pruning (issue 16): on every example program and on generated
programs, ``check_states`` must give the verdict of the plain search (DFS, or DPOR where plain DFS
is too large), the same failure kind, and — where both are conclusive without a failure — the
same set of final outcomes. A fingerprint that conflates two states shows here as a missing
outcome, a missed failure or a refusal (``conflated two states``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable

import pytest

from model_checks.harness import Options, Result, check, examples
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.stateful import check_states
from tests.harness import test_harness_differential as generated

Program = Callable[[ControlledRuntime], object]
# the soak runs these: the bounded buffer takes DPOR ~50,000 executions and pruning ~10,000
# (30 s); the pool's lost wakeup takes DPOR ~17,000
SLOW = {"bounded-buffer", "pool-park-without-recheck"}
SOAK_SEEDS = range(48)
# examples whose plain-search answer with spurious wakeups takes DPOR more than the soak's half hour
NO_REFERENCE_WITH_SPURIOUS = {
    "bounded-buffer": "the bounded buffer with spurious wakeups: more than DPOR finishes in half an hour",
    # measured: DPOR 283,635 executions in 150 s without meeting the lost wakeup (the state
    # search finds it in ~2,000 executions, either mode)
    "pool-park-without-recheck": "the parking pool with spurious wakeups: DPOR misses its bug for 30 min",
}
SUITE_SEEDS = (0, 12, 18, 36, 40, 45)


def _reference(build: Callable[[], Program], opts: Options) -> Result:
    """The plain search's answer: DFS when it finishes in 5,000 executions, else DPOR (which
    ``test_harness_differential`` holds to DFS's outcomes and failure kinds)."""
    dfs = check(build(), opts.with_(strategy="dfs", max_executions=5_000))
    if "max_executions=5000" not in dfs.bounded_by:
        return dfs
    return check(build(), opts.with_(strategy="dpor"))


def _same_answer(
    build: Callable[[], Program],
    opts: Options,
    fingerprint_fn: Callable[[Execution], Hashable | None] | None = None,
) -> None:
    want = _reference(build, opts)
    for sleep_sets in (True, False):
        got = check_states(build(), opts, fingerprint_fn=fingerprint_fn, sleep_sets=sleep_sets)
        _agree(got, want, sleep_sets)


def _agree(got: Result, want: Result, sleep_sets: bool) -> None:
    what = f"states (sleep sets {sleep_sets}): {got.report()}\nreference ({want.strategy}): {want.summary()}"
    assert not any("conflated" in b for b in got.bounded_by), what
    assert got.verdict == want.verdict, what
    if want.strategy == "dfs":
        # the same depth-first order: the first failure met is the same one (a pruned subtree's
        # state was explored before, failure-free, or the search had stopped there)
        assert (got.failure and got.failure.kind) == (want.failure and want.failure.kind), what
    if got.failure is None:
        assert got.outcomes == want.outcomes, f"outcomes differ: {what}"
        assert got.bounded_by == want.bounded_by, what  # only limits of the model (spurious_limit)


def _examples(spurious: bool, names: list[str]) -> None:
    for name in names:
        _same_answer(examples.PROGRAMS[name], Options(minimize=False, spurious_wakeups=spurious))


@pytest.mark.timeout(120)
def test_states_agree_with_the_plain_search_on_the_examples() -> None:
    _examples(False, sorted(set(examples.PROGRAMS) - SLOW))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", SUITE_SEEDS)
def test_states_agree_with_the_plain_search_on_generated_programs(seed: int) -> None:
    prog = generated.generate(seed)
    _same_answer(lambda: generated.build(prog), Options(minimize=False, spurious_wakeups=seed % 2 == 0))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", range(32))
def test_states_agree_with_the_plain_search_on_programs_reading_the_clock(seed: int) -> None:
    prog = generated.generate_with_clock(seed)
    _same_answer(lambda: generated.build(prog), Options(minimize=False))


def _by_depth(ex: Execution) -> Hashable:
    return len(ex.steps)  # takes every state at one depth for one: prunes real executions


def test_the_comparison_fails_on_a_fingerprint_that_conflates() -> None:
    _same_answer(examples.PROGRAMS["timed-wait"], Options(minimize=False))
    with pytest.raises(AssertionError, match="outcomes"):
        _same_answer(examples.PROGRAMS["timed-wait"], Options(minimize=False), _by_depth)


@pytest.mark.soak
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("spurious", [False, True])
@pytest.mark.parametrize("name", sorted(examples.PROGRAMS))
def test_soak_states_agree_on_every_example(name: str, spurious: bool) -> None:
    if spurious and name in NO_REFERENCE_WITH_SPURIOUS:
        pytest.skip(NO_REFERENCE_WITH_SPURIOUS[name])
    _examples(spurious, [name])


@pytest.mark.soak
@pytest.mark.timeout(1800)
def test_soak_states_agree_on_every_generated_program() -> None:
    for seed in SOAK_SEEDS:
        prog = generated.generate(seed)
        for spurious in (False, True):
            _same_answer(
                functools.partial(generated.build, prog), Options(minimize=False, spurious_wakeups=spurious)
            )
