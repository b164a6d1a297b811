"""The observable spec steps the reference can realise at all: every state of a link scenario
explored, with state-hash pruning (issue 16, "coverage of the spec by the real code").

``compare_by_automaton`` reports coverage as observable spec steps realised out of all the spec's
(29,428 on ``small``), but part of that denominator is out of any strategy's reach: the spec allows
orderings the reference never shows (``classify.py``). This search measures the reachable part R:

* the scenario runs as ``reach_program`` (no history in its state; each observed event is handed
  out through an outbox), under ``harness.stateful.check_states`` — plain DFS that stops an
  execution at an abstract state already explored;
* at every state the search takes, ``_Follower`` empties the outbox and moves the execution's
  position in the spec's trace automaton (``AutomatonFeedback``, as the coverage strategy does),
  recording every live edge a trace prefix takes; the state is then (automaton position, the
  workers' canonical names, whether the trace ended, the harness's generic fingerprint).

Why the union of the recorded edges is exactly R once the search is exhaustive, with no failure
and no implementation-only trace:

* *Nothing is lost by pruning.* The edges of a trace depend on the program's future and on the
  automaton position only, and both are in the state; so an execution stopped at a state already
  explored would have taken, from there on, the edges some execution from that state's first
  arrival took (graph DFS: every transition out of every reachable state is taken,
  ``strategies/stateful.py``). The edges *before* the stop are recorded as the prefix runs (the
  outbox is emptied before the state is fingerprinted), so every edge of every reference trace is
  recorded.
* *Nothing is counted that the comparison would not count.* The comparison counts an edge when a
  complete reference trace through it is accepted by the spec. A recorded edge lies on a prefix
  the reference ran; every prefix runs on to a complete execution (executions end: a ``livelock``
  or any other failure ends the search with a failure instead); and no complete reference trace
  is rejected: a rejected one leaves the automaton's live edges (or ends outside an accepting
  state) at some state, and that state's first arrival runs a complete execution whose trace is
  rejected too (same position, same future), which ``impl_only`` reports.

A bounded search proves neither, so it reports as ``realised`` only the edges of the complete,
accepted traces it ran (the comparison's own measure), and the prefix edges beside it as a lower
bound of R.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Collection, Hashable
from dataclasses import dataclass, field
from hashlib import blake2b
from typing import Any

from model_checks.designs.work_lane.link.automaton_feedback import AutomatonFeedback
from model_checks.designs.work_lane.link.class_bound import steps_outside
from model_checks.designs.work_lane.link.classify import CLASSES
from model_checks.designs.work_lane.link.reach_program import END, START, Outbox, reach_program
from model_checks.designs.work_lane.link.scenario import (
    LINK_SCENARIOS,
    Builder,
    EventKey,
    LinkScenario,
    TraceKey,
    canonical,
    emitted_key,
)
from model_checks.designs.work_lane.link.trace_automaton import TraceAutomaton
from model_checks.harness.options import Options
from model_checks.harness.rt.fingerprint import fingerprint
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.stateful import StatefulResult, check_states
from reference.scheduler import WorkerScheduler

Edge = tuple[Any, EventKey]  # (automaton state, event), as ``TraceAutomaton.live_edges``


@dataclass
class Reach:
    verdict: str  # exhaustive | bounded | failed (the state search's)
    executions: int
    states: int  # abstract states explored
    stopped: int  # executions stopped at a state already explored
    unhashed: int  # scheduling points whose state could not be taken (not pruned there)
    seconds: float
    spec_steps: int  # the automaton's live edges (the comparison's denominator)
    reached: set[Edge]  # live edges some explored trace prefix took
    covered: set[Edge]  # live edges of the complete, accepted traces run
    traces: set[TraceKey]  # the complete traces run (projected, canonical), accepted ones
    impl_only: set[TraceKey] = field(default_factory=set)
    in_class: int = 0  # complete traces run that a spec-only class of ``classify`` says never come
    bounded_by: list[str] = field(default_factory=list)
    failure: str = ""
    notes: list[str] = field(default_factory=list)
    timeline: list[tuple[float, int]] = field(default_factory=list)  # (s, covered) as it grew
    fingerprint_seconds: float = 0.0

    @property
    def proven(self) -> bool:
        """Is ``reached`` every step the reference can realise (the module's argument)?"""
        return self.verdict == "exhaustive" and not self.failure and not self.impl_only

    @property
    def reachable(self) -> int | None:
        """R: the observable spec steps the reference can realise; None unless proven."""
        return len(self.reached) if self.proven else None


class _Follower:
    """Follows each execution's events through the automaton, outside the program's state."""

    def __init__(self, feedback: AutomatonFeedback) -> None:
        self.feedback = feedback
        self.outbox: Outbox = []
        self.path: list[EventKey] = []
        self.ended = False
        self.traces: set[TraceKey] = set()
        self.impl_only: set[TraceKey] = set()
        self.in_class = 0
        self.seconds = 0.0  # in the generic fingerprint

    def drain(self) -> None:
        fb = self.feedback
        for item in self.outbox:
            if item is START:
                fb.begin()
                self.path.clear()
                self.ended = False
            elif item is END:
                self._end()
            elif not self.ended:
                thread, event, fields = item
                fb.logged(thread, event, fields)
                self.path.append(emitted_key(thread, event, fields))
        self.outbox.clear()

    def _end(self) -> None:
        self.ended = True
        trace = canonical(self.path)  # only observed events reach the outbox
        if trace in self.traces or trace in self.impl_only:
            return
        if not self.feedback.complete(trace):
            self.impl_only.add(trace)
            return
        self.traces.add(trace)
        if any(c.holds(trace) for c in CLASSES):
            self.in_class += 1

    def fingerprint(self, ex: Execution) -> Hashable | None:
        """``check_states``' state: the trace's part (emptied from the outbox first) and a digest
        of the harness's generic fingerprint of everything else; None where that one refuses.

        A digest, not the fingerprint itself (hash compaction, as SPIN's): a generic fingerprint
        of a Work Lane state is a tuple of thousands of nodes, and ``small`` has too many states to
        keep them. 128 bits of BLAKE2b over its ``repr`` (injective on what the fingerprint holds:
        numbers, strings, bytes, None, tuples): n states share a digest with probability below
        n**2 / 2**129, which is what the verdict then rests on besides the search."""
        self.drain()
        started = time.perf_counter()
        state = fingerprint(ex)
        try:
            digest = None if state is None else blake2b(repr(state).encode(), digest_size=16).digest()
        except RecursionError:  # a heap nested deeper than ``repr`` goes: not pruned there
            digest = None
        self.seconds += time.perf_counter() - started
        return None if digest is None else (self.feedback.trace_state(), self.ended, digest)


def reach(
    sc: LinkScenario,
    *,
    automaton: TraceAutomaton | None = None,
    observed: Collection[str] | None = None,
    time_limit: float | None = None,
    max_executions: int | None = None,
    build: Builder = WorkerScheduler,
) -> Reach:
    """Explore every state of ``sc`` on the reference (see the module's docstring)."""
    started = time.perf_counter()
    if automaton is None:
        automaton = TraceAutomaton(sc.constants(), observed=observed, callback_mode=sc.callback_stop)
    feedback = AutomatonFeedback(automaton, observed)
    follower = _Follower(feedback)
    result = check_states(
        reach_program(sc, follower.outbox, observed=observed, build=build),
        Options(max_steps=5_000, races=False, time_limit=time_limit, max_executions=max_executions),
        fingerprint_fn=follower.fingerprint,
        sleep_sets=False,  # a spec step is an edge: every transition must be taken, not only states
    )
    assert isinstance(result, StatefulResult)
    follower.drain()  # the last execution's tail
    named = feedback.states
    return Reach(
        verdict=result.verdict,
        executions=result.executions,
        states=result.states,
        stopped=result.states_pruned,
        unhashed=result.unhashed,
        seconds=time.perf_counter() - started,
        spec_steps=feedback.goals,
        reached={(named[q], ev) for q, ev in feedback.reached},
        covered={(named[q], ev) for q, ev in feedback.covered},
        traces=follower.traces,
        impl_only=follower.impl_only,
        in_class=follower.in_class,
        bounded_by=list(result.bounded_by),
        failure="" if result.failure is None else f"{result.failure.kind}: {result.failure.message}",
        notes=list(result.notes),
        timeline=list(feedback.timeline),
        fingerprint_seconds=follower.seconds,
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m model_checks.designs.work_lane.link.reachable NAME [--time-limit S]``: R, the
    bound the spec-only classes put on it, and what the search reached; exit 0 when R is proven,
    3 when the search was bounded, 1 on a failure or an implementation-only trace."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("name", choices=sorted(LINK_SCENARIOS))
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--max-executions", type=int, default=None)
    args = parser.parse_args(argv)
    sc = LINK_SCENARIOS[args.name]
    automaton = TraceAutomaton(sc.constants(), callback_mode=sc.callback_stop)
    bound = len(steps_outside(automaton))
    r = reach(sc, automaton=automaton, time_limit=args.time_limit, max_executions=args.max_executions)
    print(
        json.dumps(
            {
                "scenario": sc.label(),
                "verdict": r.verdict,
                "bounded_by": r.bounded_by,
                "failure": r.failure,
                "spec_steps": r.spec_steps,
                "reachable_steps": r.reachable,
                "reached_steps": len(r.reached),
                "covered_steps": len(r.covered),
                "steps_outside_spec_only_classes": bound,
                "impl_only": len(r.impl_only),
                "traces_in_a_class": r.in_class,
                "executions": r.executions,
                "states": r.states,
                "executions_stopped_at_an_explored_state": r.stopped,
                "states_not_fingerprinted": r.unhashed,
                "seconds": round(r.seconds, 1),
                "fingerprint_seconds": round(r.fingerprint_seconds, 1),
                "notes": r.notes,
            },
            indent=2,
        )
    )
    if r.failure or r.impl_only:
        return 1
    return 0 if r.proven else 3


if __name__ == "__main__":
    raise SystemExit(main())
