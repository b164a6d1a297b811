"""A workload of real reference code run once under the harness's scheduler: one schedule, chosen
by a seed, so that the same seed gives the same interleaving and the same trace (a bench trace that
a run on OS threads would make differently each time)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from model_checks.harness.options import Strategy

T = TypeVar("T")


def run_scheduled(
    workload: Callable[[Any], T], *, seed: int, max_steps: int, what: str, strategy: Strategy = "pct"
) -> T:
    """``workload(runtime)`` on the harness's controlled runtime, one execution of ``strategy``
    seeded by ``seed``, at most ``max_steps`` scheduling points (a bound that only stops a
    livelock); what it returned. ``RuntimeError`` naming ``what`` if it failed or did not run once."""
    from model_checks.harness import Options, check

    got: list[T] = []

    def program(rt: Any) -> None:
        got.append(workload(rt))

    options = Options(
        strategy=strategy,
        seed=seed,
        max_executions=1,
        max_steps=max_steps,
        minimize=False,
        races=False,
    )
    result = check(program, options)
    if result.failure is not None:
        raise RuntimeError(f"the scheduled {what} failed (seed {seed}): {result.failure.kind}")
    if len(got) != 1:
        raise RuntimeError(f"the scheduled {what} ran {len(got)} times, not once (seed {seed})")
    return got[0]
