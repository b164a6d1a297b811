"""Exhaustive DPOR over a link program up to its observation horizon.

Check 2 compares traces *up to the scenario's end*: without a Stop that is the cut at pool
quiescence, after which ``link_program`` only stops the scheduler to join its workers. Exploring
those clean-up steps multiplies the executions (every order of the workers' wake-ups at shutdown)
without adding a single observed event. So this driver runs the harness's own DPOR search
(``SearchChooser``) and abandons an execution as soon as the trace is cut.

Why that stays exhaustive: the abandoned state is treated like a terminal state of a program that
ends at the cut. The race analysis runs after every executed step against every live thread's
*pending* operation, so a step a worker would take right after the cut still gets its backtrack
point if it races with a step before the cut; only races between two steps that both lie beyond
the horizon are not explored, and no observed event lies there. DPOR itself abandons
sleep-set-blocked executions the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from model_checks.designs.work_lane.link.scenario import Run, TraceKey, event_key
from model_checks.harness.api import run_once
from model_checks.harness.options import Options
from model_checks.harness.rt.objects import Action
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.strategies.search import SearchChooser


@dataclass
class Exploration:
    verdict: str  # exhaustive | bounded | failed
    executions: int = 0
    steps: int = 0
    # the distinct traces (as logged) of the executions that reached the horizon: kept as values,
    # not as runs, so memory follows the traces found, not the executions (hundreds of thousands)
    traces: set[TraceKey] = field(default_factory=set)
    bounded_by: list[str] = field(default_factory=list)
    failure: str = ""
    seconds: float = 0.0


class _HorizonChooser:
    """The DPOR chooser, abandoning the execution once its ``Run`` is cut."""

    def __init__(self, inner: SearchChooser, run: list[Run]) -> None:
        self.inner = inner
        self.run = run

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        if self.run and self.run[0].cut is not None:
            return None
        return self.inner.choose(ex, enabled)

    def after_step(self, ex: Execution) -> None:
        self.inner.after_step(ex)


def explore_to_horizon(
    make_program: Callable[[Callable[[Run], None]], Callable[[ControlledRuntime], object]],
    *,
    max_steps: int = 5_000,
    time_limit: float | None = None,
    max_executions: int | None = None,
) -> Exploration:
    """``make_program(on_start)`` builds the harness program; ``on_start`` receives its ``Run``."""
    started = time.perf_counter()
    out = Exploration("exhaustive")
    search = SearchChooser(True, None)
    options = Options(max_steps=max_steps)
    holder: list[Run] = []
    program = make_program(holder.append)
    while True:
        holder.clear()
        search.start_execution()
        ex = run_once(program, options, _HorizonChooser(search, holder), sources=False)
        out.executions += 1
        out.steps += len(ex.steps)
        if ex.failure is not None:
            out.verdict = "failed"
            out.failure = f"{ex.failure.kind}: {ex.failure.message}"
            break
        for cut in sorted(ex.limit_cut):
            if cut not in out.bounded_by:
                out.bounded_by.append(cut)
        if holder and (holder[0].cut is not None or not ex.abandoned):
            out.traces.add(tuple(event_key(e) for e in holder[0].events()))
        if not search.advance():
            break
        if max_executions is not None and out.executions >= max_executions:
            out.bounded_by.append(f"max_executions={max_executions}")
            break
        if time_limit is not None and time.perf_counter() - started >= time_limit:
            out.bounded_by.append(f"time_limit={time_limit:g}s")
            break
    if out.verdict != "failed" and out.bounded_by:
        out.verdict = "bounded"
    out.seconds = time.perf_counter() - started
    return out
