"""The Schedule Gate spec holds at its configurations, and every mutant is caught as expected."""

from __future__ import annotations

from itertools import product

import pytest

from model_checks.designs.schedule_gate.configs import CONFIGS
from model_checks.designs.schedule_gate.spec_mutants import MUTANTS
from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from reference import schedule_gate as ref
from spec import schedule_gate as sg
from tests.helpers.spec_walk import steps

pytestmark = pytest.mark.timeout(120)

PROPERTIES = ("EveryAcceptedEventProcessed", "EveryPermitReturned", "DeferredDecisionMade")


def test_small_holds_with_every_action_fired() -> None:
    result = check(sg.SPEC, CONFIGS["small"], Options(), config="small")
    assert result.verdict == "holds", result.violation
    assert result.stats.unfired() == []
    for prop in PROPERTIES:
        assert prop in result.properties_checked
    assert result.stats.states == 7_651


def test_small_reaches_every_directive() -> None:
    """Not only every action: every directive of both deciding CASes, and a deferred decision made."""
    seen = {
        (t.action.event or "", t.fields["directive"], bool(t.fields.get("deferred")))
        for _, t in steps(sg.SPEC, CONFIGS["small"])
        if t.fields is not None and "directive" in t.fields
    }
    assert {(e, d) for e, d, _ in seen} == {
        ("admit_end", sg.NO_ACTION),
        ("admit_end", sg.ENQUEUE),
        ("admit_end", sg.RELEASE),
        ("drain_end", sg.ENQUEUE),
        ("drain_end", sg.DEFERRED),
        ("drain_end", sg.RELEASE),
    }
    assert ("admit_end", sg.ENQUEUE, True) in seen  # the last producer reschedules for the worker
    assert ("admit_end", sg.RELEASE, True) in seen  # ... or sends the actor Idle for it


@pytest.mark.slow
def test_standard_holds() -> None:
    result = check(sg.SPEC, CONFIGS["standard"], Options(), config="standard")
    assert result.verdict == "holds", result.violation
    assert result.stats.unfired() == []
    assert result.stats.states == 133_944


def test_symmetry_reduces_and_says_liveness_is_skipped() -> None:
    full = check(sg.SPEC, CONFIGS["small"], Options(liveness=False))
    reduced = check(sg.SPEC, CONFIGS["small"], Options(symmetry=True))
    assert reduced.verdict == full.verdict == "holds"
    assert reduced.stats.states <= full.stats.states
    assert any("liveness NOT checked" in note for note in reduced.notes)


def test_the_four_required_mutants_exist() -> None:
    required = {"check-then-act", "release-before-decision", "idle-ignoring-producers", "second-token"}
    assert required <= set(MUTANTS)


# --------------------------------------------------------------------------- spec <-> reference words


def _spec_word(word: int) -> sg.Gate:
    view = ref.decode(word)
    return sg.Gate(view.phase, view.pending, view.resched, view.inside)


def _ref_word(g: sg.Gate) -> int:
    return (
        sg.PHASES.index(g.phase)
        | (ref.PENDING if g.pending else 0)
        | (ref.RESCHED if g.resched else 0)
        | (g.inside * ref.ONE)
    )


WORDS = [
    _ref_word(sg.Gate(phase, pending, resched, n))
    for phase, pending, resched, n in product(sg.PHASES, (False, True), (False, True), range(4))
]


@pytest.mark.parametrize("word", WORDS)
def test_reference_transitions_are_the_spec_table_bit_for_bit(word: int) -> None:
    g = _spec_word(word)
    first = sg.AdmitFirstWord(g)
    assert ref.admit_first_word(word) == (None if first is None else _ref_word(first))
    join = sg.AdmitJoinWord(g)
    assert ref.admit_join_word(word) == (None if join is None else _ref_word(join))
    begin = sg.DrainBeginWord(g)
    assert ref.drain_begin_word(word) == (None if begin is None else _ref_word(begin))
    # The deciding CASes, from the words where the design can make them.
    reachable = not (g.pending and g.phase != sg.ADMITTING) and not (
        g.resched and g.phase not in (sg.DRAINING, sg.COMPLETING)
    )
    if g.inside > 0 and g.phase != sg.IDLE and reachable:
        for ok in (False, True):
            new, directive = sg.AdmitEndWord(g, ok)
            assert ref.admit_end_word(word, ok) == (_ref_word(new), ref.Directive(directive))
    if g.phase == sg.DRAINING and not g.pending:
        for budget in (False, True):
            new, directive = sg.DrainEndWord(g, budget)
            assert ref.drain_end_word(word, budget) == (_ref_word(new), ref.Directive(directive))
