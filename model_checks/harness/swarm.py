"""Swarm testing on Ray: N independent randomized searches of one program, each with its own seed.

Each search is a Ray task running ``check`` with ``random`` or ``pct`` and seed ``seed + i``. The
first search to report a failure wins: the others are told to stop (through a small Ray actor
they look at every ``POLL_SECONDS``) and report what they ran, so the totals (executions,
steps, distinct final outcomes, failure kinds) are merged over all N. The winner's schedule
string replays in one process with ``lanecheck explore NAME --replay S``: a schedule names its
choices, not the seed that found them.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from model_checks.harness.api import check
from model_checks.harness.options import Options, Result

SWARM_STRATEGIES = ("random", "pct")
POLL_SECONDS = 0.25
MAX_SEED = 2**63 - 1
Build = Callable[[], Callable[..., object]]  # picklable: gives the program in the worker


@dataclass
class SwarmResult:
    """The merged result, and which search gave the failure (``winner``: its index, or None)."""

    result: Result
    seeds: list[int]
    winner: int | None = None
    stopped: int = 0  # searches cut short because another found a failure first
    per_search: list[int] = field(default_factory=list)  # executions of each search


class _Stop(Exception):
    """Another search has won: end this one (raised from the per-execution callback)."""


class Flag:
    """A Ray actor: set once the first failure is in."""

    def __init__(self) -> None:
        self.value = False

    def set(self) -> None:
        self.value = True

    def is_set(self) -> bool:
        return self.value


def seeds_for(seed: int, n: int) -> list[int]:
    """``n`` distinct seeds from ``seed`` on (wrapping within the seed range)."""
    return [(seed + i) % (MAX_SEED + 1) for i in range(n)]


def _one(build: Build, options: Options, flag: Any) -> tuple[Result, bool]:
    """One search, in a Ray worker: its result, and whether it was stopped early."""
    ray = importlib.import_module("ray")  # in the worker, where Ray is (this runs as a Ray task)

    program = build()
    last = [time.perf_counter()]
    partial: list[Result] = []

    def poll(so_far: Result) -> None:
        partial[:] = [so_far]
        now = time.perf_counter()
        if now - last[0] >= POLL_SECONDS:
            last[0] = now
            if ray.get(flag.is_set.remote()):
                raise _Stop

    try:
        return check(program, options, on_execution=poll), False
    except _Stop:
        so_far = partial[0]
        so_far.verdict = "bounded"
        so_far.bounded_by.append("stopped: another search of the swarm found a failure")
        return so_far, True


def swarm(ray: Any, build: Build, options: Options, n: int, at_once: int | None = None) -> SwarmResult:
    """Run ``n`` searches of ``build()`` on Ray (initialised) and merge them; the first failure wins.

    ``at_once``: at most this many searches submitted at a time (default: all; Ray runs as many
    as it has CPUs). A search not yet started when a failure is in is not run.
    """
    if options.strategy not in SWARM_STRATEGIES:
        raise ValueError(f"a swarm runs {' or '.join(SWARM_STRATEGIES)} searches, not {options.strategy!r}")
    if options.replay is not None:
        raise ValueError("a replay runs one schedule in one process: it cannot be a swarm")
    if n < 1 or (at_once is not None and at_once < 1):
        raise ValueError(
            f"a swarm needs at least one search, at least one at a time (n={n}, at_once={at_once})"
        )
    started = time.perf_counter()
    seeds = seeds_for(options.seed, n)
    flag = ray.remote(num_cpus=0)(Flag).remote()
    task = ray.remote(num_cpus=1, max_retries=0)(_one)
    index: dict[Any, int] = {}
    results: list[tuple[Result, bool] | None] = [None] * n
    winner: int | None = None
    pending: list[Any] = []

    def submit(i: int) -> None:
        ref = task.remote(build, options.with_(seed=seeds[i]), flag)
        index[ref] = i
        pending.append(ref)

    upcoming = iter(range(n))
    for i in upcoming:
        submit(i)
        if at_once is not None and len(pending) >= at_once:
            break
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            i = index[done[0]]
            results[i] = ray.get(done[0])
            if winner is None and results[i][0].failure is not None:  # type: ignore[index]
                winner = i
                flag.set.remote()
            if winner is None:
                following = next(upcoming, None)
                if following is not None:
                    submit(following)
    finally:
        ray.kill(flag)
    finished = [r for r in results if r is not None]
    merged = _merge([r for r, _ in finished], winner, results, options.strategy)
    merged.elapsed = time.perf_counter() - started
    return SwarmResult(
        result=merged,
        seeds=seeds,
        winner=winner,
        stopped=sum(1 for _, stopped in finished if stopped),
        per_search=[r.executions for r, _ in finished],
    )


def _merge(
    parts: list[Result], winner: int | None, results: list[tuple[Result, bool] | None], strategy: str
) -> Result:
    merged = Result(verdict="bounded", strategy=f"{strategy} swarm of {len(parts)}")
    for part in parts:
        merged.executions += part.executions
        merged.steps += part.steps
        merged.max_preemptions = max(merged.max_preemptions, part.max_preemptions)
        merged.pruned += part.pruned
        merged.outcomes |= part.outcomes
        merged.failure_kinds |= part.failure_kinds
        merged.races = merged.races or part.races
        merged.fair = merged.fair or part.fair
        for note in part.notes:
            if note not in merged.notes:
                merged.notes.append(note)
    if winner is not None:
        won = results[winner]
        assert won is not None
        merged.verdict = "failed"
        merged.failure = won[0].failure
    else:
        # Sampling never covers the space: the swarm's verdict is bounded, whatever each says.
        merged.bounded_by.append(f"{strategy} sampling by {len(parts)} searches")
    return merged
