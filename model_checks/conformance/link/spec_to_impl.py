"""Check 2, spec -> implementation: the spec's observable traces against the reference's.

For one ``LinkScenario`` the spec side is ``spec_traces`` (every complete behaviour, projected);
the implementation side is every trace the harness produces exploring the same scenario
exhaustively (DPOR up to the observation horizon, ``horizon.py``) with a ``SequencedTracer``
(every observed emit a scheduling point on one counter, so every order of logging is explored).
Both sides are projected onto the same events (``observed``) and compared up to renaming of the
interchangeable workers. Implementation-only traces are failures; spec-only traces are reported
and classified (``classify.py``; docs/conformance.md shows the generated table).
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field

from model_checks.conformance.link.horizon import explore_to_horizon
from model_checks.conformance.link.scenario import (
    Builder,
    LinkScenario,
    Run,
    TraceKey,
    canonical,
    event_key,
    link_program,
)
from model_checks.conformance.link.spec_traces import TransitionKey, realised, spec_traces
from reference.scheduler import WorkerScheduler


@dataclass
class Comparison:
    subject: str
    harness: str  # exhaustive | bounded | failed
    executions: int
    spec_traces: int
    impl_traces: int
    common: int
    spec_transitions: int
    realised_transitions: int
    seconds: float
    impl_only: list[TraceKey] = field(default_factory=list)
    spec_only: list[TraceKey] = field(default_factory=list)
    bounded_by: list[str] = field(default_factory=list)
    failure: str = ""  # the harness failure that ended the exploration, if any
    raw_impl: set[TraceKey] = field(default_factory=set)  # every event, workers canonical

    @property
    def trace_coverage(self) -> float:
        return self.common / self.spec_traces if self.spec_traces else 1.0

    @property
    def transition_coverage(self) -> float:
        return self.realised_transitions / self.spec_transitions if self.spec_transitions else 1.0

    @property
    def verdict(self) -> str:
        if self.failure:
            return "harness-failure"
        if self.impl_only:
            return "impl-only-traces"
        if self.harness != "exhaustive":
            return "incomplete"
        return "covered" if not self.spec_only else "no-impl-only-traces"

    def figures(self) -> str:
        return (
            f"{self.common}/{self.spec_traces} spec traces ({self.trace_coverage:.0%}), "
            f"{self.realised_transitions}/{self.spec_transitions} spec transitions "
            f"({self.transition_coverage:.0%}), {len(self.impl_only)} impl-only, "
            f"{self.executions} executions ({self.harness}"
            + (f", {', '.join(self.bounded_by)}" if self.bounded_by else "")
            + ")"
            + (f"; {self.failure}" if self.failure else "")
        )


def project(trace: TraceKey, observed: Collection[str] | None) -> TraceKey:
    """The trace restricted to ``observed`` events, workers renamed again by first appearance."""
    if observed is None:
        return canonical(trace)
    return canonical(e for e in trace if e[1] in observed)


def compare(
    sc: LinkScenario,
    *,
    observed: Collection[str] | None = None,
    sequenced: bool = True,
    time_limit: float | None = None,
    max_executions: int | None = None,
    build: Builder = WorkerScheduler,
) -> Comparison:
    """``observed``: compare the projections onto these events (None: every event)."""
    started = time.perf_counter()
    found = explore_to_horizon(
        lambda on_start: link_program(
            sc, _discard, build=build, sequenced=sequenced, on_start=on_start, observed=observed
        ),
        time_limit=time_limit,
        max_executions=max_executions,
    )
    # as logged (harness workers are named w0.. like the spec's, so every realised transition of
    # either worker counts), then canonical for the comparison of traces
    logged = {tuple(event_key(e) for e in run.events()) for run in found.runs}
    raw = {canonical(t) for t in logged}
    impl = {project(t, observed) for t in raw}
    constants = sc.constants()
    # The spec side gets the same allowance as the harness side (``time_limit`` is per side).
    spec = spec_traces(constants, observed=observed, time_limit=time_limit)
    used: set[TransitionKey] = set()
    for t in logged:
        got, _ = realised(constants, tuple(e for e in t if observed is None or e[1] in observed), observed)
        used |= got
    return Comparison(
        subject=f"link {sc.label()}" + ("" if observed is None else f" on {'/'.join(sorted(observed))}"),
        harness=found.verdict,
        executions=found.executions,
        spec_traces=len(spec.traces),
        impl_traces=len(impl),
        common=len(impl & spec.traces),
        spec_transitions=len(spec.labelled_transitions),
        realised_transitions=len(used & spec.labelled_transitions),
        seconds=time.perf_counter() - started,
        impl_only=sorted(impl - spec.traces),
        spec_only=sorted(spec.traces - impl),
        bounded_by=found.bounded_by,
        failure=found.failure,
        raw_impl=raw,
    )


def _discard(run: Run) -> None:
    return None
