"""Checks every design's spec tests make the same way: a configuration holds, symmetry reduces,
and each invariant's ``reads=`` hint covers what the predicate reads."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from model_checks.design import Design
from model_checks.explorer.check import CheckResult, check
from model_checks.explorer.search import Options, search
from model_checks.mutant import SpecMutant
from spec.language import Instance, Spec


def assert_holds(spec: Spec, constants: Any, config: str, states: int, unfired: list[str]) -> CheckResult:
    """The configuration holds with exactly ``states`` states, every action but ``unfired`` fired."""
    result = check(spec, constants, Options(), config=config)
    assert result.verdict == "holds", result.violation
    assert result.stats.unfired() == unfired
    assert result.stats.states == states
    return result


def assert_symmetry_reduces(spec: Spec, constants: Any) -> CheckResult:
    """Symmetry finds fewer states and the same verdict, and says it skipped liveness."""
    full = check(spec, constants, Options(liveness=False))
    reduced = check(spec, constants, Options(symmetry=True))
    assert reduced.verdict == full.verdict == "holds"
    assert reduced.stats.states < full.stats.states
    assert any("liveness NOT checked" in note for note in reduced.notes)
    return reduced


def assert_caught_with_symmetry(mutant: SpecMutant, constants: Any) -> None:
    """Under symmetry the mutant is still caught, with a counterexample of its expected length."""
    result = check(mutant.spec, constants, Options(symmetry=True))
    assert result.verdict == "violated"
    assert result.counterexample is not None and result.counterexample.length == mutant.length


def reachable(spec: Spec, constants: Any) -> list[Any]:
    """Every state the spec reaches under these constants (no symmetry)."""
    return list(search(Instance(spec, constants), Options(liveness=False, deadlock=False)).graph.states)


class _Only:
    """A state that lets a predicate read only the variables it declared."""

    def __init__(self, state: Any, allowed: frozenset[str], name: str) -> None:
        self._state, self._allowed, self._name = state, allowed, name

    def __getattr__(self, field: str) -> Any:
        if field not in self._allowed:
            raise AssertionError(f"invariant {self._name} reads {field}, which its reads= does not name")
        return getattr(self._state, field)


def assert_reads_cover(spec: Spec, constants: Any, states: list[Any]) -> None:
    """Each invariant with ``reads=`` gives the same verdict when it may read only those variables."""
    hinted = [inv for inv in spec.invariants if inv.reads is not None]
    assert hinted, "the spec declares no reads= at all: nothing would be checked"
    for state in states:
        for inv in hinted:
            assert inv.reads is not None
            seen_by = _Only(state, frozenset(inv.reads), inv.name)
            assert inv.fn(constants, seen_by) == inv.fn(constants, state)


def assert_enabled_only_at(
    spec: Spec, constants: Any, enabled_at: dict[str, Any], pc_of: Callable[[Any, Any], Any]
) -> None:
    """Each internal action, in every reachable state, fires only at a pc ``enabled_at`` lists for it
    (``pc_of(state, process)``), and every internal action fires somewhere."""
    inst = Instance(spec, constants)
    internal = {a.name for a in spec.actions if a.event is None}
    assert internal == set(enabled_at)
    seen = set(inst.initial_states())
    todo = deque(seen)
    fired: set[str] = set()
    while todo:
        s = todo.popleft()
        for t in inst.successors(s):
            if t.action.event is None:
                assert pc_of(s, t.process) in enabled_at[t.action.name], (t.action.name, s)
                fired.add(t.action.name)
            if t.state not in seen:
                seen.add(t.state)
                todo.append(t.state)
    assert fired == internal


def spec_or_mutant(
    spec: Spec, mutants: Mapping[str, SpecMutant], name: str, constants: Any
) -> tuple[Spec, Any]:
    """The design's spec and ``constants`` (``name`` "design"), or mutant ``name``'s spec and constants."""
    if name == "design":
        return spec, constants
    return mutants[name].spec, mutants[name].constants(constants)


def assert_pc_hints_change_nothing(spec: Spec, constants: Any) -> None:
    """The explorer's pc hints are an optimisation only: the same states and transitions without them."""
    hinted = check(spec, constants, Options(liveness=False))
    plain = check(spec, constants, Options(liveness=False, pc_hints=False))
    assert (hinted.stats.states, hinted.stats.transitions) == (plain.stats.states, plain.stats.transitions)


def initial_projections(design: Design, mutants: Mapping[str, SpecMutant]) -> list[Hashable]:
    """A built-in design object: its configurations, its mutants, and its diagram projections of
    the small configuration's initial state (each must project it)."""
    assert {"small", "standard"} <= set(design.configs)
    assert design.mutants is mutants
    small = design.config("small")
    state = Instance(design.spec, small).initial_states()[0]
    return [project(small, state) for project in design.projections.values()]
