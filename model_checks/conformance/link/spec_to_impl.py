"""Check 2, spec -> implementation: the spec's observable traces against the reference's.

For one ``LinkScenario`` the spec side is ``spec_traces`` (every complete behaviour, projected);
the implementation side is every trace the harness produces exploring the same scenario
exhaustively (DPOR) with a ``SequencedTracer`` (every emit a scheduling point on one counter, so
every order of logging is explored). Traces are compared up to renaming of the interchangeable
workers. Implementation-only traces are failures; spec-only traces are reported (docs/conformance.md
explains each class).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from model_checks.conformance.link.scenario import (
    LinkScenario,
    Run,
    TraceKey,
    canonical,
    event_key,
    link_program,
)
from model_checks.conformance.link.spec_traces import TransitionKey, realised, spec_traces
from model_checks.harness import Options, check


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

    @property
    def trace_coverage(self) -> float:
        return self.common / self.spec_traces if self.spec_traces else 1.0

    @property
    def transition_coverage(self) -> float:
        return self.realised_transitions / self.spec_transitions if self.spec_transitions else 1.0

    @property
    def verdict(self) -> str:
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
            f"{self.executions} executions ({self.harness})"
        )


def compare(sc: LinkScenario, options: Options | None = None, *, sequenced: bool = True) -> Comparison:
    started = time.perf_counter()
    runs: list[Run] = []
    opts = options or Options(strategy="dpor", max_steps=5_000)
    result = check(link_program(sc, runs.append, sequenced=sequenced), opts)
    raw = {tuple(event_key(e) for e in run.events()) for run in runs}
    impl = {canonical(t) for t in raw}
    spec = spec_traces(sc.constants())
    constants = sc.constants()
    used: set[TransitionKey] = set()
    for t in raw:
        got, _ = realised(constants, t)
        used |= got
    return Comparison(
        subject=f"link {sc.label()}",
        harness=result.verdict,
        executions=result.executions,
        spec_traces=len(spec.traces),
        impl_traces=len(impl),
        common=len(impl & spec.traces),
        spec_transitions=len(spec.labelled_transitions),
        realised_transitions=len(used & spec.labelled_transitions),
        seconds=time.perf_counter() - started,
        impl_only=sorted(impl - spec.traces),
        spec_only=sorted(spec.traces - impl),
    )
