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

from model_checks.designs.work_lane.link.automaton_feedback import AutomatonFeedback
from model_checks.designs.work_lane.link.horizon import explore_to_horizon
from model_checks.designs.work_lane.link.reachable import Reach, reach
from model_checks.designs.work_lane.link.scenario import (
    Builder,
    EventKey,
    LinkScenario,
    Run,
    TraceKey,
    canonical,
    event_key,
    link_program,
)
from model_checks.designs.work_lane.link.spec_traces import TransitionKey, realised, spec_traces
from model_checks.designs.work_lane.link.trace_automaton import TraceAutomaton
from model_checks.harness import Options, check
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
        return _verdict(self.failure, bool(self.impl_only), self.harness, not self.spec_only)

    def figures(self) -> str:
        return (
            f"{self.common}/{self.spec_traces} spec traces ({self.trace_coverage:.0%}), "
            f"{self.realised_transitions}/{self.spec_transitions} spec transitions "
            f"({self.transition_coverage:.0%}), {len(self.impl_only)} impl-only, "
            f"{self.executions} executions ({_how(self.harness, self.bounded_by, self.failure)}"
        )


def _verdict(failure: str, impl_only: bool, harness: str, all_realised: bool) -> str:
    """One comparison's verdict: what went wrong first, then how complete it is."""
    if failure:
        return "harness-failure"
    if impl_only:
        return "impl-only-traces"
    if harness != "exhaustive":
        return "incomplete"
    return "covered" if all_realised else "no-impl-only-traces"


def _how(harness: str, bounded_by: list[str], failure: str) -> str:
    """The end of a comparison's figures: how the harness side ended, and why."""
    return (
        harness
        + (f", {', '.join(bounded_by)}" if bounded_by else "")
        + ")"
        + (f"; {failure}" if failure else "")
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
    logged = found.traces
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


SPEC_ONLY_LISTED = 10_000  # an exhaustive comparison lists (and classifies) at most this many
# PCT with more priority change points reaches more of a trace language in the same time: on
# ``small``, 25 s reach 24% of the observable spec steps at depth 3, 36% at 8, 39% at 12, 40% at 20
COVERAGE_PCT_DEPTH = 12


@dataclass
class AutomatonComparison:
    """``compare_by_automaton``'s result: the spec side counted, not listed."""

    subject: str
    strategy: str
    harness: str  # exhaustive | bounded | failed
    executions: int
    seconds: float
    spec_traces: int  # every complete canonical trace the spec allows (``TraceAutomaton.count``)
    impl_traces: int
    common: int
    spec_steps: int  # edges of the spec's observable automaton that lie on a complete trace
    realised_steps: int  # of those, the ones some implementation trace takes
    automaton_states: int
    impl_only: list[TraceKey] = field(default_factory=list)
    # listed when the harness was exhaustive and they are few (``SPEC_ONLY_LISTED``)
    spec_only: list[TraceKey] = field(default_factory=list)
    bounded_by: list[str] = field(default_factory=list)
    failure: str = ""
    # (seconds, observable spec steps realised) each time that grew; empty for dpor, whose traces
    # are collected at the end of its search
    timeline: list[tuple[float, int]] = field(default_factory=list)
    harness_seconds: float = 0.0  # of ``seconds``, the harness side (the rest is the automaton)
    # the observable spec steps the reference can realise at all, where a search proved it
    # (``strategy="states"`` exhaustive: ``reachable.py``); ``spec_steps`` stays the denominator
    reachable_steps: int | None = None

    @property
    def verdict(self) -> str:
        return _verdict(self.failure, bool(self.impl_only), self.harness, self.common == self.spec_traces)

    def figures(self) -> str:
        share = self.common / self.spec_traces if self.spec_traces else 1.0
        steps = self.realised_steps / self.spec_steps if self.spec_steps else 1.0
        reachable = "" if self.reachable_steps is None else f", all {self.reachable_steps:,} reachable"
        return (
            f"{self.common:,}/{self.spec_traces:,} spec traces ({share:.2g}), "
            f"{self.realised_steps:,}/{self.spec_steps:,} observable spec steps ({steps:.0%}{reachable}), "
            f"{len(self.impl_only)} impl-only, {self.executions:,} executions "
            f"({self.strategy}, {_how(self.harness, self.bounded_by, self.failure)}"
        )


def compare_by_automaton(
    sc: LinkScenario,
    *,
    strategy: str = "dpor",
    observed: Collection[str] | None = None,
    time_limit: float | None = None,
    max_executions: int | None = None,
    seed: int = 0,
    pct_depth: int = COVERAGE_PCT_DEPTH,
    build: Builder = WorkerScheduler,
) -> AutomatonComparison:
    """Check 2 where the spec's traces are too many to list (the whole ``small`` configuration
    allows about a billion): the spec side is its observable automaton (``trace_automaton``),
    which counts the traces and decides each implementation trace; the implementation side is
    DPOR to the horizon (``strategy="dpor"``: exhaustive if it ends within the bounds) or
    sampling (``"pct"``, ``"random"``; ``"coverage"``: steered toward automaton edges not covered
    yet, ``automaton_feedback``; always bounded) or every state once (``"states"``,
    ``reachable.py``: when it ends, ``reachable_steps`` is every step the reference can realise,
    and those are what it reports realised). Coverage is given as traces realised
    and as *observable spec steps* realised: the automaton's edges, i.e. every event the spec
    allows next after every trace prefix (up to what the prefix determines). ``pct_depth``: PCT's
    bug depth (``COVERAGE_PCT_DEPTH`` by default, deeper than the harness's 3)."""
    started = time.perf_counter()
    automaton = TraceAutomaton(sc.constants(), observed=observed, callback_mode=sc.callback_stop)
    spec_count = automaton.count()
    feedback: AutomatonFeedback | None = None
    states_run: Reach | None = None
    harness_started = time.perf_counter()
    if strategy == "dpor":
        found = explore_to_horizon(
            lambda on_start: link_program(sc, _discard, build=build, on_start=on_start, observed=observed),
            time_limit=time_limit,
            max_executions=max_executions,
        )
        logged, verdict, executions = found.traces, found.verdict, found.executions
        bounded_by, failure = list(found.bounded_by), found.failure
    elif strategy in ("pct", "random", "coverage"):
        logged = set()
        feedback = AutomatonFeedback(automaton, observed)
        guided = feedback if strategy == "coverage" else None

        def keep(run: Run) -> None:
            trace = tuple(event_key(e) for e in run.events())
            if trace not in logged:
                logged.add(trace)
                feedback.complete(project(trace, observed))

        result = check(
            link_program(
                sc,
                keep,
                build=build,
                observed=observed,
                on_start=None if guided is None else guided.attach,
                listener=guided,
            ),
            Options(
                strategy="pct" if strategy == "pct" else "random" if strategy == "random" else "coverage",
                seed=seed,
                pct_depth=pct_depth,
                max_executions=max_executions,
                time_limit=time_limit,
                max_steps=5_000,
                minimize=False,
                feedback=guided,
            ),
        )
        verdict = "failed" if result.failure is not None else "bounded"
        executions, bounded_by = result.executions, list(result.bounded_by)
        failure = "" if result.failure is None else f"{result.failure.kind}: {result.failure.message}"
    elif strategy == "states":
        states_run = reach(
            sc,
            automaton=automaton,
            observed=observed,
            time_limit=time_limit,
            max_executions=max_executions,
            build=build,
        )
        logged = states_run.traces | states_run.impl_only
        verdict, executions = states_run.verdict, states_run.executions
        bounded_by, failure = states_run.bounded_by, states_run.failure
    else:
        raise ValueError(
            f"unknown strategy {strategy!r}: use 'dpor', 'pct', 'random', 'coverage' or 'states'"
        )
    harness_seconds = time.perf_counter() - harness_started
    impl = {project(t, observed) for t in logged}
    accepted = {t for t in impl if automaton.accepts(t)}
    realised: set[tuple[object, EventKey]] = set()
    for t in accepted:
        q = automaton.start
        for ev in t:
            realised.add((q, ev))
            q = automaton.edges(q)[ev]
    spec_only: list[TraceKey] = []
    # (the state search runs each state once, not each trace: its traces are not all the
    # reference's, so what it did not run is no spec-only finding)
    if verdict == "exhaustive" and strategy != "states" and spec_count - len(accepted) <= SPEC_ONLY_LISTED:
        spec_only = list(automaton.words(skip=accepted))
    reachable: int | None = None
    timeline = [] if feedback is None else list(feedback.timeline)
    if states_run is not None:
        timeline = states_run.timeline
        if states_run.proven:
            realised = states_run.reached
            reachable = len(realised)
            timeline.append((harness_seconds, reachable))
    return AutomatonComparison(
        subject=f"link {sc.label()}" + ("" if observed is None else f" on {'/'.join(sorted(observed))}"),
        strategy=strategy,
        harness=verdict,
        executions=executions,
        seconds=time.perf_counter() - started,
        spec_traces=spec_count,
        impl_traces=len(impl),
        common=len(accepted),
        spec_steps=len(automaton.live_edges_cached()),
        realised_steps=len(realised),
        automaton_states=automaton.size,
        impl_only=sorted(impl - accepted),
        spec_only=spec_only,
        bounded_by=bounded_by,
        failure=failure,
        timeline=timeline,  # seconds of the harness side
        harness_seconds=harness_seconds,
        reachable_steps=reachable,
    )
