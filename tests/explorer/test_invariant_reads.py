"""Invariants' ``reads=`` hints: each declared set covers what the predicate reads, and remembering
verdicts by the values read finds what evaluating every invariant in every state finds."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings

from model_checks.designs.work_lane.configs import CONFIGS
from model_checks.designs.work_lane.spec_mutants import MUTANTS
from model_checks.explorer.check import check
from model_checks.explorer.invariants import InvariantChecker
from model_checks.explorer.search import Options
from spec.language import Spec, SpecBuilder, SpecError
from spec.work_lane import SPEC
from tests.explorer.graphs import Graph, as_spec, assert_same_search, graphs
from tests.spec_helpers import assert_reads_cover, reachable


@pytest.mark.timeout(120)
def test_work_lane_reads_cover_every_reachable_state() -> None:
    constants = CONFIGS["small"]
    assert_reads_cover(SPEC, constants, reachable(SPEC, constants))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_work_lane_reads_cover_mutant_states(name: str) -> None:
    # A mutant reaches states the design does not, where a predicate takes its failing branch.
    mutant = MUTANTS[name]
    constants = mutant.constants(CONFIGS[mutant.config])
    assert_reads_cover(mutant.spec, constants, reachable(mutant.spec, constants))


# ----------------------------------------------------------------------------- the checker


class Rec(NamedTuple):
    a: int
    b: int


def _spec_with(*invariants: tuple[str, tuple[str, ...] | None]) -> Spec:
    builder = SpecBuilder("rec")
    for name, reads in invariants:

        def fn(c: Any, s: Any, name: str = name) -> str | None:
            return f"{name} fails at {s.a},{s.b}" if s.a > 0 else None

        fn.__name__ = name
        if reads is None:
            builder.invariant(fn)
        else:
            builder.invariant(reads=reads)(fn)
    return builder.spec


def test_nested_reads_share_a_table_and_keep_declaration_order() -> None:
    spec = _spec_with(("First", ("a",)), ("Second", ("a", "b")), ("Third", None))
    checker = InvariantChecker(spec.invariants, None, Rec(0, 0))
    assert [len(members) for members, _, _ in checker.groups] == [2, 1]
    assert checker.first_violated(Rec(0, 5)) is None
    assert checker.first_violated(Rec(1, 2)) == ("First", "First fails at 1,2")
    # Remembered by (a, b): the verdict of the group is the first violation in it.
    assert checker.first_violated(Rec(1, 2)) == ("First", "First fails at 1,2")
    assert checker.first_violated(Rec(1, 3)) == ("First", "First fails at 1,3")


def test_disjoint_reads_get_their_own_tables() -> None:
    spec = _spec_with(("First", ("a",)), ("Second", ("b",)))
    checker = InvariantChecker(spec.invariants, None, Rec(0, 0))
    assert [len(members) for members, _, _ in checker.groups] == [1, 1]


def test_reads_of_an_unknown_variable_is_a_spec_error() -> None:
    spec = _spec_with(("First", ("a", "c")))
    with pytest.raises(SpecError, match="First reads c"):
        InvariantChecker(spec.invariants, None, Rec(0, 0))


def test_reads_must_name_variables() -> None:
    with pytest.raises(SpecError, match="not a variable name"):
        SpecBuilder("x").invariant(reads=("a", "b c"))


def test_reads_may_be_one_name() -> None:
    spec = _spec_with(("First", None))
    builder = SpecBuilder("one")
    builder.invariant(reads="a")(spec.invariants[0].fn)
    assert builder.spec.invariants[0].reads == ("a",)


def test_states_that_are_not_records_evaluate_every_time() -> None:
    spec = _spec_with(("First", ("a",)))
    checker = InvariantChecker(spec.invariants, None, 7)
    assert [project for _, project, _ in checker.groups] == [None]


# ----------------------------------------------------------------------------- differential


class At(NamedTuple):
    node: int
    pad: int


def _as_record_spec(g: Graph) -> Spec:
    """``as_spec(g)`` with record states and a hinted invariant: the memoised path."""
    plain = as_spec(g)
    b = SpecBuilder("random-graph-records")
    b.init(lambda c: [At(s, 0) for s in sorted(c.init)])
    move = plain.actions[0]

    def Move(c: Graph, s: At, p: str, t: int) -> At | None:
        return At(t, 0) if (s.node, p, t) in c.edges else None

    b.action(*move.domains, event="move")(Move)

    def Safe(c: Graph, s: At) -> str | None:
        return f"state {s.node} is bad" if s.node in c.bad else None

    b.invariant(reads=("node",))(Safe)
    b.terminal(lambda c, s: s.node in c.terminal)
    return replace(b.spec, fair=plain.fair)


@pytest.mark.timeout(120)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_remembered_verdicts_match_evaluating_every_state(g: Graph) -> None:
    expected = check(as_spec(g), g, Options(liveness=False))
    got = check(_as_record_spec(g), g, Options(liveness=False))
    assert_same_search(got, expected)
    if expected.violation is not None:
        assert got.violation is not None and got.counterexample is not None
        assert expected.counterexample is not None
        assert (got.violation.kind, got.violation.name, got.violation.reason) == (
            expected.violation.kind,
            expected.violation.name,
            expected.violation.reason,
        )
        assert got.counterexample.length == expected.counterexample.length


def test_a_group_whose_variables_the_step_left_alone_is_not_evaluated() -> None:
    calls: list[Rec] = []

    def Counted(c: Any, s: Any) -> str | None:
        calls.append(s)
        return "a is negative" if s.a < 0 else None

    builder = SpecBuilder("counted")
    builder.invariant(reads=("a",))(Counted)
    checker = InvariantChecker(builder.spec.invariants, None, Rec(0, 0))
    assert checker.first_violated(Rec(1, 9), parent=Rec(1, 0)) is None
    assert calls == []
    assert checker.first_violated(Rec(-1, 0), parent=Rec(1, 0)) == ("Counted", "a is negative")
    assert calls == [Rec(-1, 0)]
