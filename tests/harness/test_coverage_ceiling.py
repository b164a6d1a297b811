"""How many observable spec steps the reference can realise at all (issue 16).

``link/reachable.py`` explores every state of a link scenario once (``check_states`` with the
trace's automaton position in the state instead of the trace) and records every automaton edge a
trace prefix takes; ``link/class_bound.py`` bounds the same figure from the spec side (the steps
that lie only on traces of a class the reference never logs). Checked here: the pruned search
records exactly exhaustive DPOR's steps (and pruning did cut executions, so the equality is about
pruning); a search whose pruning drops the edges of the prefix it stops fails that check; an
implementation-only trace leaves R unproven; the bound holds the reachable steps and is exact
where the class is the whole gap; ``compare_by_automaton``'s ``states`` strategy reports R only
when it is proven.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import replace
from typing import Any

import pytest

from model_checks.designs.work_lane.link import reachable
from model_checks.designs.work_lane.link.automaton_feedback import AutomatonFeedback
from model_checks.designs.work_lane.link.class_bound import steps_outside
from model_checks.designs.work_lane.link.classify import CLASSES, TraceClass
from model_checks.designs.work_lane.link.reach_program import END, START
from model_checks.designs.work_lane.link.reachable import Edge, reach
from model_checks.designs.work_lane.link.scenario import LINK_SCENARIOS, TraceKey
from model_checks.designs.work_lane.link.spec_to_impl import compare, compare_by_automaton
from model_checks.designs.work_lane.link.trace_automaton import TraceAutomaton
from model_checks.harness.rt.scheduler import Execution

# small enough for the pruned search in seconds (each state costs a generic fingerprint, ~20 ms);
# the others are exhaustive for DPOR in seconds but take the pruned search about 100 s each
TINY = "1x2-full-invalid"
LARGER = ["2x1-cap1-full", "1x1-stop-discard"]
(DISCARD_BEFORE_TAKE,) = CLASSES


def _automaton(name: str) -> TraceAutomaton:
    sc = LINK_SCENARIOS[name]
    return TraceAutomaton(sc.constants(), callback_mode=sc.callback_stop)


def _edges(automaton: TraceAutomaton, traces: Iterable[TraceKey]) -> set[Edge]:
    out: set[Edge] = set()
    for trace in traces:
        q = automaton.start
        for ev in trace:
            out.add((q, ev))
            q = automaton.edges(q)[ev]
    return out


_DPOR: dict[str, set[Edge]] = {}


def _dpor_steps(name: str) -> set[Edge]:
    """The automaton edges of every trace exhaustive DPOR finds (check 2's listing comparison)."""
    if name not in _DPOR:
        c = compare(LINK_SCENARIOS[name])
        assert c.harness == "exhaustive" and not c.impl_only, c.figures()
        _DPOR[name] = _edges(_automaton(name), c.raw_impl)
    return set(_DPOR[name])


def _assert_realises_what_dpor_does(name: str) -> reachable.Reach:
    r = reach(LINK_SCENARIOS[name])
    assert r.proven, (r.verdict, r.failure, r.bounded_by)
    assert r.stopped > 0, "no execution was stopped at an explored state: nothing about pruning is shown"
    assert r.unhashed == 0, "states the fingerprint refused are not pruned"
    assert r.reached == _dpor_steps(name), "the pruned search's steps differ from exhaustive DPOR's"
    assert r.reachable == len(r.reached)
    assert r.in_class == 0  # the reference never logs a trace of a spec-only class
    return r


@pytest.mark.timeout(120)
def test_the_pruned_search_realises_exactly_what_exhaustive_dpor_does() -> None:
    r = _assert_realises_what_dpor_does(TINY)
    # the comparison's own measure (the edges of complete traces) gives fewer on it, pruned
    # executions never completing: so a bounded search reports that, a proven one R
    assert r.covered < r.reached


@pytest.mark.soak
@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", LARGER)
def test_the_pruned_search_realises_what_dpor_does_on_larger_scenarios(name: str) -> None:
    _assert_realises_what_dpor_does(name)


class _DropsPrunedPrefixes(reachable._Follower):
    """A mutant: at a state met before (where the search stops the execution) the edges the
    prefix took since its last state are taken back: pruning that loses a prefix's edges."""

    def __init__(self, feedback: AutomatonFeedback) -> None:
        super().__init__(feedback)
        self.seen: set[Hashable] = set()

    def fingerprint(self, ex: Execution) -> Hashable | None:
        before = set(self.feedback.reached)
        key = super().fingerprint(ex)
        if key in self.seen:
            self.feedback.reached &= before
        elif key is not None:
            self.seen.add(key)
        return key


@pytest.mark.timeout(120)
def test_a_search_whose_pruning_drops_prefix_edges_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reachable, "_Follower", _DropsPrunedPrefixes)
    with pytest.raises(AssertionError, match="differ from exhaustive DPOR"):
        _assert_realises_what_dpor_does(TINY)


def test_an_implementation_only_trace_leaves_the_reachable_steps_unproven() -> None:
    automaton = _automaton(TINY)
    follower = reachable._Follower(AutomatonFeedback(automaton))
    good = next(t for t in automaton.words() if len(t) > 2)
    bad = (good[1], good[0], *good[2:])  # the second event first: not a spec trace
    assert not automaton.accepts(bad)
    for trace in (good, bad):
        follower.outbox += [START, *((t, e, dict(f)) for t, e, f in trace), END]
        follower.drain()
    assert follower.traces == {good} and follower.impl_only == {bad}
    assert follower.feedback.position() is None  # the bad prefix left the automaton at once
    proven = reachable.Reach(
        verdict="exhaustive",
        executions=1,
        states=1,
        stopped=0,
        unhashed=0,
        seconds=0.0,
        spec_steps=15,
        reached=set(),
        covered=set(),
        traces={good},
    )
    assert proven.proven and proven.reachable == 0
    assert replace(proven, impl_only={bad}).reachable is None
    assert not replace(proven, verdict="bounded").proven
    assert not replace(proven, failure="deadlock: ...").proven


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", [TINY, *LARGER])
def test_the_class_bound_holds_the_reachable_steps(name: str) -> None:
    automaton = _automaton(name)
    outside = steps_outside(automaton, [DISCARD_BEFORE_TAKE])
    live = automaton.live_edges_cached()
    assert _dpor_steps(name) <= outside <= live
    if name == "1x1-stop-discard":  # the class is the whole gap there (docs/conformance.md)
        assert _dpor_steps(name) == outside < live
    else:  # no Stop(discard): nothing lies only on the class's traces
        assert outside == live


def _always(m: Hashable, ev: Any) -> Hashable:
    return True


def _never(m: Hashable, ev: Any) -> Hashable:
    return False


@pytest.mark.timeout(120)
def test_the_class_bound_follows_the_class() -> None:
    automaton = _automaton("1x1-stop-discard")
    live = automaton.live_edges_cached()
    assert steps_outside(automaton, [TraceClass("all", "", "", (), _always)]) == set()
    assert steps_outside(automaton, [TraceClass("none", "", "", (), _never)]) == live
    assert steps_outside(automaton) == steps_outside(automaton, [DISCARD_BEFORE_TAKE])
    # the monitor decides as the whole-trace predicate did: the spec-only traces of the
    # exhaustive comparison are in the class, the reference's are not
    c = compare(LINK_SCENARIOS["1x1-stop-discard"])
    assert c.spec_only and all(DISCARD_BEFORE_TAKE.holds(t) for t in c.spec_only)
    assert not any(DISCARD_BEFORE_TAKE.holds(t) for t in c.raw_impl)


@pytest.mark.timeout(120)
def test_the_states_strategy_reports_reachable_steps_only_when_proven() -> None:
    sc = LINK_SCENARIOS[TINY]
    done = compare_by_automaton(sc, strategy="states")
    cut = compare_by_automaton(sc, strategy="states", max_executions=3)
    assert done.harness == "exhaustive" and not done.impl_only and not done.failure
    assert done.reachable_steps == done.realised_steps == len(_dpor_steps(TINY))
    assert done.spec_only == []  # it runs each state once, not each trace: no spec-only findings
    assert f"all {done.reachable_steps:,} reachable" in done.figures()
    assert done.timeline[-1][1] == done.reachable_steps
    assert cut.harness == "bounded" and cut.bounded_by == ["max_executions=3"]
    assert cut.reachable_steps is None and "reachable" not in cut.figures()
    assert cut.realised_steps < done.realised_steps
    with pytest.raises(ValueError, match="'states'"):
        compare_by_automaton(sc, strategy="state")
