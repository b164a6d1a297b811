"""On Ray, the explorer gives the answers of one process: states, verdicts, shortest counterexamples.

Every check here runs on the module's ``pool`` (``conftest.py``): two actors started once and
told a new spec per check, so the module pays Ray's worker start-up once, not per check. That
the answers stay equal to one process's check after check is what shows a reused actor forgets
the previous check.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from model_checks.commands.check import load_target
from model_checks.explorer.check import CheckResult, check
from model_checks.explorer.parallel import WorkerFailed
from model_checks.explorer.ray.engine import NotSupported, check_ray
from model_checks.explorer.ray.pool import Pool
from model_checks.explorer.search import Options
from model_checks.registry import designs
from spec.language import Spec, SpecBuilder

pytestmark = pytest.mark.timeout(120)
SAFETY = Options(liveness=False)


def on_ray(
    pool: Pool,
    name: str,
    config: str,
    variant: str | None = None,
    options: Options = SAFETY,
    workers: int = 2,
) -> CheckResult:
    spec, constants = load_target(name, config, variant)
    load = partial(load_target, name, config, variant)
    return check_ray(spec, constants, load, options, config=config, workers=workers, pool=pool)


def figures(r: CheckResult) -> tuple[Any, ...]:
    return (r.verdict, r.stats.states, r.stats.transitions, r.stats.depth, r.stats.coverage)


def _safety_names(spec: Spec) -> set[str]:
    return {inv.name for inv in spec.invariants} | {"Deadlock"}


@pytest.mark.parametrize("name", sorted(designs()))
def test_every_design_same_states_verdict_and_counterexample_length(pool: Pool, name: str) -> None:
    d = designs()[name]
    spec, constants = load_target(name, "small", None)
    assert figures(on_ray(pool, name, "small")) == figures(check(spec, constants, SAFETY))
    # The first mutant a safety search catches (an invariant or deadlock, not a liveness property).
    variant = next(v for v in sorted(d.mutants) if d.mutant(v).expect in _safety_names(d.mutant(v).spec))
    mutant = d.mutant(variant)
    there = on_ray(pool, name, mutant.config, variant)  # one process finds the mutant's declared bug
    assert there.violation is not None and there.counterexample is not None
    assert (there.verdict, there.violation.name, there.counterexample.length) == (
        "violated",
        mutant.expect,
        mutant.length,
    )


def test_symmetry_same_states(pool: Pool) -> None:
    options = Options(liveness=False, symmetry=True)
    spec, constants = load_target("work-lane", "small", None)
    assert figures(on_ray(pool, "work-lane", "small", options=options)) == figures(
        check(spec, constants, options)
    )


def test_the_actors_are_reused_and_forget_the_previous_check(pool: Pool) -> None:
    first = on_ray(pool, "admission", "small")
    actors, started = pool.take(2), pool.started
    again = on_ray(pool, "admission", "small")
    # A worker that kept the first check's seen-set would find no new state the second time.
    assert figures(again) == figures(first) and first.stats.states == 324
    assert pool.take(2) == actors and pool.started == started
    assert "explored on Ray by 2 workers" in again.notes and again.workers == 2


@pytest.mark.parametrize("bound", [{"max_states": 100}, {"max_depth": 3}], ids=["states", "depth"])
def test_a_bound_is_incomplete_never_holds(pool: Pool, bound: dict[str, int]) -> None:
    result = on_ray(pool, "work-lane", "small", options=Options(liveness=False, **bound))  # type: ignore[arg-type]
    assert result.verdict == "incomplete" and result.exit_code == 3 and result.incomplete_reason


def test_liveness_is_refused_plainly(pool: Pool) -> None:
    started = pool.started
    with pytest.raises(NotSupported, match="not supported on the ray engine yet"):
        on_ray(pool, "work-lane", "small", options=Options())
    assert pool.started == started  # refused before any worker was asked


def test_each_worker_holds_only_its_share_of_the_states(pool: Pool) -> None:
    spec, constants = load_target("work-lane", "small", None)
    total = check(spec, constants, SAFETY).stats.states
    assert on_ray(pool, "work-lane", "small").stats.states == total
    shares = pool.usage(2)
    # Split, not copied: the seen-sets add up to the whole and neither holds it all.
    assert sum(u.states for u in shares) == total
    assert all(0 < u.states < total for u in shares)
    assert all(u.peak_rss_bytes > 2**20 for u in shares)  # a Python process with Ray imported
    one = on_ray(pool, "work-lane", "small", workers=1)
    assert [u.states for u in pool.usage(1)] == [one.stats.states]


def test_usage_of_more_actors_than_the_pool_has_is_refused(pool: Pool) -> None:
    pool.take(2)
    with pytest.raises(ValueError, match="the pool has 2 actors; usage of 3 asked"):
        pool.usage(3)


def _breaks() -> tuple[Spec, None]:
    b = SpecBuilder("fails-in-a-worker")
    b.init(lambda c: [0])

    def Step(c: None, s: int, p: str) -> int | None:
        if s == 3:
            raise ValueError("the spec broke here")
        return s + 1 if s < 5 else None

    b.action(lambda c: ("p",))(Step)
    b.terminal(lambda c, s: s == 5)
    return b.spec, None


# Last in the module: a failure ends the actors of that search, and the next check starts new ones.
# With one worker, an expand that raised was once merged over and its layer expanded again, forever.
@pytest.mark.parametrize("workers", [1, 2])
def test_a_failing_worker_is_an_error_not_a_verdict(pool: Pool, workers: int) -> None:
    spec, _ = _breaks()
    failed = pool.take(workers)
    with pytest.raises(WorkerFailed, match="the spec broke here"):
        check_ray(spec, None, _breaks, SAFETY, workers=workers, pool=pool)
    # Not trusted again: one may still be inside a call of that search.
    assert not any(a is f for a in pool.actors for f in failed)
    assert figures(on_ray(pool, "admission", "small", workers=workers))[:2] == ("holds", 324)
