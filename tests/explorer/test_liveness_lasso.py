"""Liveness counterexamples are the shortest lassos found, and always fair ones (review 16 F5, F6).

A lasso's length is its prefix's steps plus its cycle's. Every counterexample here is checked
independently of explorer/liveness.py: each step is an edge of the state graph, the cycle closes,
visits a state where the property fails (``<>[]``), and is fair to every fair process (one of its
states disables it, or one of its steps is that process's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import pytest

from model_checks.explorer.check import check
from model_checks.explorer.liveness import FairnessOracle, check_property
from model_checks.explorer.outcome import Graph, Violation
from model_checks.explorer.search import Options, search
from model_checks.registry import design
from spec.language import WF, EventuallyAlways, Instance, LeadsTo, Property, SpecBuilder

pytestmark = pytest.mark.timeout(300)


@dataclass(frozen=True)
class C:
    items: int = 1


class V(NamedTuple):
    got: int
    rpc: str  # clear | check


Busy = SpecBuilder("busy", "a receiver that looks forever while the sender never sends")
Receiver = lambda c: ("r",)  # noqa: E731
Sender = lambda c: ("s",)  # noqa: E731


@Busy.init
def Init(c: C) -> list[V]:
    return [V(got=0, rpc="clear")]


@Busy.action(Receiver)
def Clear(c: C, s: V, r: str) -> object:
    return s._replace(rpc="check") if s.rpc == "clear" else None


@Busy.action(Receiver)
def BusyLook(c: C, s: V, r: str) -> object:
    return s._replace(rpc="clear") if s.rpc == "check" else None


@Busy.action(Sender)
def Put(c: C, s: V, p: str) -> object:
    return None  # the polite sender: never enabled


Busy.fairness(WF(Sender), WF(Receiver))
Busy.property(EventuallyAlways("EveryItemArrives", lambda c, s: s.got == c.items, "every item has arrived"))
BUSY = Busy.spec


def edges_between(graph: Graph, a: int, b: int) -> set[int]:
    assert graph.dst is not None and graph.proc is not None
    return {graph.proc[e] for e in graph.edges(a) if graph.dst[e] == b}


def assert_fair_lasso(inst: Instance, graph: Graph, prop: Property, v: Violation) -> int:
    """The lasso's length, after checking it is a fair behaviour that violates ``prop``."""
    assert graph.enabled is not None and v.cycle is not None
    c = inst.constants
    assert graph.parent[v.path[0]] < 0, "the prefix starts in an initial state"
    for a, b in zip(v.path, v.path[1:], strict=False):
        assert edges_between(graph, a, b), f"no step {a} -> {b}"
    assert v.cycle[0] == v.path[-1]
    fair = FairnessOracle(graph, inst.fair_processes()).fair_mask
    if v.stutter:
        assert v.cycle == [v.path[-1]] and graph.enabled[v.cycle[0]] & fair == 0
        looped = v.cycle
    else:
        assert v.cycle[-1] == v.cycle[0] and len(v.cycle) >= 3
        looped = v.cycle[:-1]
        taken = 0
        for a, b in zip(v.cycle, v.cycle[1:], strict=False):
            procs = edges_between(graph, a, b)
            assert procs, f"no step {a} -> {b} on the cycle"
            for p in procs:
                taken |= 1 << p
        disabled = 0
        for s in looped:
            disabled |= ~graph.enabled[s] & fair
        assert (taken | disabled) & fair == fair, "the cycle is not fair to every fair process"
    if isinstance(prop, EventuallyAlways):
        assert any(not prop.q(c, graph.states[s]) for s in looped)
    else:
        assert isinstance(prop, LeadsTo)
        assert all(not prop.q(c, graph.states[s]) for s in looped)
    return len(v.path) - 1 + len(v.cycle) - 1


def lasso(spec: Any, constants: Any, name: str) -> tuple[int, Violation]:
    inst = Instance(spec, constants)
    outcome = search(inst, Options())
    prop = next(p for p in spec.properties if p.name == name)
    found = check_property(inst, outcome.graph, prop)
    assert found is not None
    return assert_fair_lasso(inst, outcome.graph, prop, found), found


def test_init_on_the_fair_cycle_gives_the_two_step_lasso() -> None:
    # Tarjan's order meets the state after Clear first; entering at Init is one step shorter.
    length, found = lasso(BUSY, C(), "EveryItemArrives")
    assert length == 2 and len(found.path) == 1


def test_the_reason_names_the_property_and_says_it_does_not_hold() -> None:
    result = check(BUSY, C())
    assert result.violation is not None
    assert result.violation.reason == (
        "a fair loop keeps returning to a state where EveryItemArrives (every item has arrived) does not hold"
    )
    assert result.counterexample is not None and result.counterexample.length == 2


# The built-in mutants whose pinned length shrank with the shortest lasso (was: 12, 13, 17, 11).
SHORTER = [
    ("admission", "budget-counts-queued", 6),
    ("admission", "oversized-deferred", 11),
    ("admission", "claim-then-admit", 9),
    ("job-pool", "never-scale-down", 10),
]


@pytest.mark.parametrize(("name", "variant", "length"), SHORTER)
def test_shorter_built_in_lassos_are_fair_and_pinned(name: str, variant: str, length: int) -> None:
    d = design(name)
    m = d.mutant(variant)
    got, _ = lasso(m.spec, m.constants(d.config(m.config)), m.expect)
    assert got == length == m.length


def _liveness_mutants() -> list[tuple[str, str]]:
    from model_checks.registry import DESIGNS

    return [
        (name, m.name)
        for name, d in DESIGNS.items()
        for m in d.mutants.values()
        if any(p.name == m.expect for p in m.spec.properties)
    ]


@pytest.mark.parametrize(("name", "variant"), _liveness_mutants())
def test_every_built_in_liveness_counterexample_is_a_fair_lasso_of_its_pinned_length(
    name: str, variant: str
) -> None:
    d = design(name)
    m = d.mutant(variant)
    got, _ = lasso(m.spec, m.constants(d.config(m.config)), m.expect)
    assert got == m.length
