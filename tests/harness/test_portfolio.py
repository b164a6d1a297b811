"""The portfolio strategy: DPOR and PCT executions in turn (shallow bugs first, proofs kept)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from typer.testing import CliRunner

from model_checks.cli import app
from model_checks.harness import Options, check, replay
from model_checks.harness.examples import PROGRAMS, Program, bounded_buffer, counter, parking_pool
from model_checks.registry import design

LANE_MUTANTS = {name: s for name, s in design("work-lane").harness().items() if s.must_fail}

# ``lanecheck explore``'s programs; the bounded buffer with one producer and one consumer, which
# DPOR proves in a few executions
CORRECT: dict[str, Callable[[], Program]] = {
    **{
        name: PROGRAMS[name]
        for name in ("counter-locked", "cas-counter", "lock-order-consistent", "handoff-while", "independent")
    },
    "bounded-buffer": lambda: bounded_buffer(1, 2, 1, 1),
}

# each with the options that make its bug reachable
_REACHED_WITH = {"handoff-if": Options(spurious_wakeups=True)}
BUGGY: dict[str, tuple[Callable[[], Program], Options]] = {
    name: (PROGRAMS[name], _REACHED_WITH.get(name, Options()))
    for name in (
        "counter-racy",
        "lock-order-inversion",
        "handoff-missing-notify",
        "handoff-if",
        "pool-park-without-recheck",
    )
}


def test_every_work_lane_mutant_is_there() -> None:
    assert len(LANE_MUTANTS) >= 8, sorted(LANE_MUTANTS)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(LANE_MUTANTS))
def test_finds_each_work_lane_reference_mutant(name: str) -> None:
    scenario = LANE_MUTANTS[name]
    options = Options(**{**scenario.options, "strategy": "portfolio", "time_limit": 60})
    result = check(scenario.build(), options)
    assert result.verdict == "failed", result.summary()
    assert result.failure is not None and result.failure.kind == scenario.expect, result.report()
    assert result.strategy == "portfolio"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_proves_a_correct_program_like_dpor(name: str) -> None:
    dpor = check(CORRECT[name](), Options(strategy="dpor"))
    mixed = check(CORRECT[name](), Options(strategy="portfolio"))
    assert dpor.verdict == mixed.verdict == "exhaustive", (dpor.summary(), mixed.summary())
    assert mixed.outcomes == dpor.outcomes
    assert mixed.pruned == dpor.pruned  # the DPOR part is exactly DPOR's search
    # One PCT execution after each DPOR execution but the last.
    assert mixed.executions == 2 * dpor.executions - 1
    assert any("the DPOR part completed" in note for note in mixed.notes), mixed.notes


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(BUGGY))
def test_finds_a_bug_by_the_first_part_to_reach_it(name: str) -> None:
    """DPOR's n-th execution is the portfolio's (2n-1)-th, PCT's n-th its 2n-th: a bug is found
    at min(2 n_dpor - 1, 2 n_pct). Fails if a PCT slice disturbed the DPOR search, or the other way."""
    factory, base = BUGGY[name]
    runs = {
        s: check(factory(), base.with_(strategy=s, minimize=False, time_limit=60))
        for s in ("dpor", "pct", "portfolio")
    }
    assert all(r.verdict == "failed" for r in runs.values()), {s: r.summary() for s, r in runs.items()}
    want = min(2 * runs["dpor"].executions - 1, 2 * runs["pct"].executions)
    assert runs["portfolio"].executions == want, runs["portfolio"].summary()
    first = runs["dpor"] if want % 2 else runs["pct"]
    assert runs["portfolio"].failure is not None and first.failure is not None
    assert runs["portfolio"].failure.schedule.split(".")[2:] == first.failure.schedule.split(".")[2:]


@pytest.mark.timeout(120)
def test_a_shallow_bug_is_found_long_before_dpor_finds_it() -> None:
    """The issue's case: 2 workers, one parks without re-checking the queue."""
    dpor = check(parking_pool(2, 2), Options(strategy="dpor", minimize=False, max_executions=2_000))
    mixed = check(parking_pool(2, 2), Options(strategy="portfolio", minimize=False, max_executions=2_000))
    assert dpor.verdict == "bounded", dpor.summary()  # DPOR needs ~17,000 executions
    assert mixed.failure is not None and mixed.failure.kind == "lost_wakeup", mixed.summary()


@pytest.mark.timeout(120)
def test_a_cut_search_is_bounded_never_exhaustive() -> None:
    result = check(bounded_buffer(1, 2, 2, 2), Options(strategy="portfolio", max_executions=7))
    assert result.verdict == "bounded" and result.failure is None, result.summary()
    assert result.bounded_by == ["max_executions=7"]
    assert result.executions == 7
    assert any("did not complete" in note for note in result.notes), result.notes


@pytest.mark.timeout(120)
def test_a_preemption_bound_makes_it_bounded_dfs() -> None:
    result = check(bounded_buffer(1, 2, 2, 2), Options(strategy="portfolio", preemption_bound=0))
    assert result.verdict == "bounded", result.summary()
    assert result.bounded_by[0] == "preemption_bound=0"
    assert any("unsound under a preemption bound" in note for note in result.notes)


@pytest.mark.timeout(120)
def test_the_sampled_part_makes_no_proof_when_dpor_is_cut() -> None:
    """The PCT part covering every outcome still leaves a cut DPOR search "bounded"."""
    full = check(counter(2, locked=True), Options(strategy="dpor"))
    cut = Options(strategy="portfolio", max_executions=2 * full.executions - 2)
    result = check(counter(2, locked=True), cut)
    assert result.outcomes == full.outcomes  # every outcome seen ...
    assert result.verdict == "bounded", result.summary()  # ... and still no proof


@pytest.mark.timeout(120)
def test_replays_a_failure_the_pct_part_found() -> None:
    program = parking_pool(2, 2)
    result = check(program, Options(strategy="portfolio", minimize=False))
    assert result.failure is not None and result.failure.kind == "lost_wakeup", result.summary()
    assert result.executions % 2 == 0  # found by a PCT execution
    again = replay(program, result.failure.schedule)
    assert again.failure is not None and again.failure.kind == "lost_wakeup"
    assert again.failure.schedule == result.failure.schedule
    assert again.executions == 1


@pytest.mark.timeout(120)
def test_replays_a_minimised_failure() -> None:
    program = parking_pool(2, 2)
    result = check(program, Options(strategy="portfolio"))
    assert result.failure is not None, result.summary()
    again = check(program, Options(replay=result.failure.schedule))
    assert again.failure is not None and again.failure.schedule == result.failure.schedule


@pytest.mark.timeout(120)
def test_keep_going_collects_failures_and_ends_with_dpor() -> None:
    result = check(counter(2, locked=False), Options(strategy="portfolio", keep_going=True, minimize=False))
    dpor = check(counter(2, locked=False), Options(strategy="dpor", keep_going=True, minimize=False))
    assert result.verdict == "failed" and result.failure_kinds == dpor.failure_kinds == {"assertion"}
    assert result.executions == 2 * dpor.executions - 1


@pytest.mark.timeout(120)
def test_explore_command_runs_the_portfolio() -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["explore", "counter-locked", "--strategy", "portfolio", "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["strategy"] == "portfolio"
    bad = runner.invoke(app, ["explore", "pool-park-without-recheck", "--strategy", "portfolio", "--json"])
    assert bad.exit_code == 1, bad.output
    found = json.loads(bad.output)["failure"]
    args = ["explore", "pool-park-without-recheck", "--replay", found["schedule"], "--json"]
    again = runner.invoke(app, args)
    assert again.exit_code == 1 and json.loads(again.output)["failure"]["kind"] == found["kind"]
