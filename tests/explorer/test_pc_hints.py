"""Program-counter hints (``at=``) save calls and change nothing else."""

from __future__ import annotations

import pytest

from model_checks.designs.work_lane.configs import CONFIGS
from model_checks.designs.work_lane.spec_mutants import MUTANTS
from model_checks.explorer.dispatch import Dispatch
from model_checks.explorer.search import Options, search
from model_checks.registry import DESIGNS
from spec.language import Instance, SpecBuilder, SpecError, variant
from spec.work_lane import SPEC
from spec.work_lane_state import W_DRAIN

pytestmark = pytest.mark.timeout(300)


def _same_search(spec: object, constants: object, **kw: object) -> None:
    inst = Instance(spec, constants)  # type: ignore[arg-type]
    plain = search(inst, Options(pc_hints=False, **kw))  # type: ignore[arg-type]
    hinted = search(inst, Options(**kw))  # type: ignore[arg-type]
    assert hinted.verdict == plain.verdict
    # The same states in the same order, the same transitions and firings: an action
    # that fired from a program counter its at= leaves out would show up here.
    assert hinted.graph.states == plain.graph.states
    assert hinted.stats.transitions == plain.stats.transitions
    assert hinted.stats.coverage == plain.stats.coverage
    if plain.violation is not None:
        assert hinted.violation is not None and hinted.violation.path == plain.violation.path


@pytest.mark.parametrize("symmetry", [False, True], ids=["plain", "symmetry"])
def test_hints_change_nothing_on_the_design(symmetry: bool) -> None:
    _same_search(SPEC, CONFIGS["small"], liveness=False, symmetry=symmetry)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_hints_change_nothing_on_the_mutants(name: str) -> None:
    mutant = MUTANTS[name]
    _same_search(mutant.spec, mutant.constants(CONFIGS[mutant.config]), liveness=False)


def test_hints_skip_calls() -> None:
    dispatch = Dispatch(Instance(SPEC, CONFIGS["small"]))
    initial = Instance(SPEC, CONFIGS["small"]).initial_states()[0]
    assert len(dispatch.calls(initial)) < len(dispatch.all_calls)
    unhinted = Dispatch(Instance(SPEC, CONFIGS["small"]), use_hints=False)
    assert unhinted.calls(initial) == unhinted.all_calls


def test_designs_without_hints_still_work() -> None:
    for d in DESIGNS.values():
        if not d.spec.program_counters:
            dispatch = Dispatch(Instance(d.spec, d.config("small")))
            assert not dispatch.hinted


def test_a_replaced_action_loses_its_hint() -> None:
    def Pop(c: object, s: object, w: str) -> None:
        return None

    mutant = variant(SPEC, "no-pop", replace_actions={"Pop": Pop})
    assert next(a for a in SPEC.actions if a.name == "Pop").at == frozenset([W_DRAIN])
    assert next(a for a in mutant.actions if a.name == "Pop").at is None


def test_a_hint_needs_a_program_counter() -> None:
    b = SpecBuilder("no-pc")

    def Procs(c: object) -> tuple[str, ...]:
        return ("p",)

    with pytest.raises(SpecError, match="no program_counter"):
        b.action(Procs, at="idle")(lambda c, s, p: None)
    with pytest.raises(SpecError, match="names no program counter"):
        b.action(Procs, at=())
    b.program_counter(Procs)(lambda c, s, p: "idle")
    with pytest.raises(SpecError, match="declared twice"):
        b.program_counter(Procs)(lambda c, s, p: "idle")
