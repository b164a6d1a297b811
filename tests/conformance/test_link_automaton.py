"""Check 2 at scale: the spec's observable traces as an automaton (``trace_automaton.py``).

The automaton must be the same language as the listed trace sets wherever those can be listed,
restrict a Stop from a callback to the harness scenario's one call (checked against a brute-force
enumeration of paths), and, on the whole ``small`` configuration, decide every trace the
reference logs and catch a reference mutant's.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from model_checks.designs.work_lane.configs import CONFIGS
from model_checks.designs.work_lane.link.comparisons import CASES
from model_checks.designs.work_lane.link.scenario import LINK_SCENARIOS, LinkScenario, TraceKey, canonical
from model_checks.designs.work_lane.link.spec_to_impl import compare, compare_by_automaton
from model_checks.designs.work_lane.link.spec_traces import spec_traces, transition_event
from model_checks.designs.work_lane.link.trace_automaton import CyclicTraces, TraceAutomaton
from model_checks.designs.work_lane.reference_mutants import REFERENCE_MUTANTS
from reference.results import Result
from reference.scheduler import StopMode, WorkerScheduler
from spec import work_lane as wl
from spec.language import Instance

LISTABLE = [name for name in LINK_SCENARIOS if name != "small"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", LISTABLE)
def test_automaton_is_the_listed_trace_set(name: str) -> None:
    constants = LINK_SCENARIOS[name].constants()
    listed = spec_traces(constants).traces
    automaton = TraceAutomaton(constants)
    assert automaton.count() == len(listed)
    assert set(automaton.words()) == listed
    for trace in listed:
        assert automaton.accepts(trace)
        if trace and trace[:-1] not in listed:
            assert not automaton.accepts(trace[:-1])  # a prefix is not a complete trace


def test_automaton_keeps_only_the_canonical_worker_naming() -> None:
    automaton = TraceAutomaton(LINK_SCENARIOS["1x1-2w"].constants())
    (trace,) = list(automaton.words())
    renamed = tuple((("w1" if t == "w0" else t), e, f) for t, e, f in trace)
    assert renamed != trace and not automaton.accepts(renamed)
    assert canonical(renamed) == trace


def _brute_force(constants: wl.Constants, mode: str) -> set[TraceKey]:
    """Every complete behaviour walked path by path (no memo, no subsets), with the callback's
    Stop at most once and of ``mode``, kept when it is there exactly when an item was invoked."""
    inst = Instance(wl.SPEC, constants)
    out: set[TraceKey] = set()

    def walk(state: Any, trace: tuple[Any, ...], callback: bool, invoked: bool) -> None:
        successors = list(inst.successors(state))
        if not successors and callback == invoked:
            out.add(canonical(trace))
        for t in successors:
            if t.event is None:
                walk(t.state, trace, callback, invoked)
                continue
            ev = transition_event(t)
            fields = dict(ev[2])
            if t.event == "stop_rejected" and fields.get("reason") == "in_callback":
                if callback or fields.get("mode") != mode:
                    continue
                walk(t.state, (*trace, ev), True, invoked)
            else:
                walk(t.state, (*trace, ev), callback, invoked or t.event == "invoke")

    for s in inst.initial_states():
        walk(s, (), False, False)
    return out


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "scenario",
    [
        LinkScenario(script=((0,),), capacity=1, lanes=1, workers=1, callback_stop="drain"),
        LinkScenario(script=((0, 0),), capacity=2, lanes=1, workers=1, budget=2, callback_stop="discard"),
        LinkScenario(script=((0,),), capacity=1, lanes=1, workers=2, stops=("drain",), callback_stop="drain"),
    ],
)
def test_callback_stop_is_restricted_to_the_scenario_s_one_call(scenario: LinkScenario) -> None:
    constants = scenario.constants()
    assert constants.callback_stop
    with pytest.raises(CyclicTraces):
        TraceAutomaton(constants).count()  # the spec lets a callback call Stop forever
    assert scenario.callback_stop is not None
    automaton = TraceAutomaton(constants, callback_mode=scenario.callback_stop)
    expected = _brute_force(constants, scenario.callback_stop)
    assert automaton.count() == len(expected) > 0
    assert set(automaton.words()) == expected


@pytest.mark.timeout(120)
def test_callback_stop_scenario_conforms_exhaustively() -> None:
    sc = LinkScenario(script=((0,),), capacity=1, lanes=1, workers=1, callback_stop="drain")
    c = compare_by_automaton(sc)
    assert c.verdict == "covered", c.figures()
    assert c.common == c.spec_traces and c.realised_steps == c.spec_steps


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["2x1-cap1-full", "1x1-stop-discard"])
def test_automaton_comparison_agrees_with_the_listed_one(name: str) -> None:
    listed = compare(LINK_SCENARIOS[name])
    counted = compare_by_automaton(LINK_SCENARIOS[name])
    assert (counted.spec_traces, counted.common, counted.impl_traces) == (
        listed.spec_traces,
        listed.common,
        listed.impl_traces,
    )
    assert counted.impl_only == listed.impl_only == []
    assert counted.harness == listed.harness == "exhaustive"
    assert sorted(counted.spec_only) == sorted(listed.spec_only)  # listed, then classified


def test_the_small_link_scenario_is_the_small_configuration() -> None:
    assert LINK_SCENARIOS["small"].constants() == CONFIGS["small"]
    assert not CASES["small"].listable


@pytest.mark.timeout(300)
def test_small_reference_traces_are_all_allowed_and_a_mutant_s_are_not() -> None:
    sc = LINK_SCENARIOS["small"]
    good = compare_by_automaton(sc, strategy="pct", max_executions=300, seed=1)
    assert good.spec_traces == 1_282_626_087  # the spec's small configuration, callback Stop once
    assert good.verdict == "incomplete" and good.harness == "bounded", good.figures()
    assert good.impl_only == [] and good.common == good.impl_traces > 100
    assert 0 < good.realised_steps < good.spec_steps
    bad = compare_by_automaton(
        sc, strategy="pct", max_executions=300, seed=1, build=REFERENCE_MUTANTS["stop-skips-inflight"].build
    )
    assert bad.verdict == "impl-only-traces" and bad.impl_only, bad.figures()


def test_small_without_the_callback_is_counted_too() -> None:
    plain = dataclasses.replace(CONFIGS["small"], callback_stop=False)
    assert TraceAutomaton(plain).count() == 209_295_891


class _CallbackStopSucceeds(WorkerScheduler[Any]):
    """A broken scheduler: Stop from its own callback claims SUCCESS (and does nothing)."""

    def stop(self, mode: StopMode = StopMode.DRAIN) -> Result:
        if self._pool.is_worker(self._runtime.current_thread()):
            return Result.SUCCESS
        return super().stop(mode)


@pytest.mark.timeout(120)
def test_a_stop_from_a_callback_that_is_not_refused_is_caught_both_ways() -> None:
    sc = LinkScenario(script=((0,),), capacity=1, lanes=1, workers=1, callback_stop="drain")
    # to the horizon (executions abandoned at quiescence): its trace lacks the stop_rejected
    cut = compare_by_automaton(sc, build=_CallbackStopSucceeds)
    assert cut.verdict == "impl-only-traces", cut.figures()
    # run to the end: the scenario's own final check sees the result code
    whole = compare_by_automaton(sc, strategy="pct", max_executions=5, build=_CallbackStopSucceeds)
    assert whole.verdict == "harness-failure", whole.figures()
    assert "Stop from a callback returned SUCCESS" in whole.failure
