"""The work-stealing spec holds at its configurations, and every mutant is caught as expected."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from model_checks.designs.work_stealing import DESIGN
from model_checks.designs.work_stealing.configs import CONFIGS
from model_checks.designs.work_stealing.spec_mutants import MUTANTS, STEAL_FROM_SELF
from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from spec import work_stealing as ws
from spec.language import Instance, SpecError
from spec.work_stealing import SPEC
from tests.helpers.design_spec_checks import DesignSpecChecks
from tests.spec_helpers import assert_holds, initial_projections

pytestmark = pytest.mark.timeout(180)


def test_small_holds_under_tso_with_every_action_fired() -> None:
    result = assert_holds(SPEC, CONFIGS["small"], "small", states=12_436, unfired=[])
    assert "AllTasksDone" in result.properties_checked


def test_small_sc_holds_and_its_store_buffers_stay_empty() -> None:
    # under SC nothing is ever buffered
    assert_holds(SPEC, CONFIGS["small-sc"], "small-sc", states=4_599, unfired=["Flush"])


def test_standard_holds() -> None:
    assert_holds(SPEC, CONFIGS["standard"], "standard", states=85_668, unfired=[])


def test_missing_fence_is_caught_under_tso_only() -> None:
    mutant = MUTANTS["missing-fence"]
    assert CONFIGS[mutant.config].memory == "tso"
    tso = check(mutant.spec, CONFIGS["small"], Options())
    assert tso.verdict == "violated" and tso.counterexample is not None
    # The counterexample needs the store buffer: the owner loads top with its bottom store still buffered.
    assert any(
        step.action == "TakeUnfenced" and step.state.mem.pending(step.process)
        for step in tso.counterexample.steps
    )
    sc = check(mutant.spec, CONFIGS["small-sc"], Options())
    assert sc.verdict == "holds", sc.violation
    assert check(mutant.spec, CONFIGS["standard"], Options(liveness=False)).verdict == "violated"


def test_the_required_mutants_exist() -> None:
    required = {
        "take-without-cas",
        "steal-reads-after-cas",
        "resize-drops-newest",
        "stale-mask",
        "missing-fence",
        "park-without-recheck",
        "join-never-helps",
    }
    assert required <= set(MUTANTS) and len(MUTANTS) >= 8


def test_linearizability_check_catches_a_thief_taking_the_wrong_end() -> None:
    """steal-newest: the sequential deque sees the wrong element at the steal, before anything runs twice."""
    mutant = MUTANTS["steal-newest"]
    result = check(mutant.spec, CONFIGS["small"], Options())
    assert result.violation is not None and result.violation.name == "DequeLinearizable"
    assert "returned c from its top" in result.violation.reason
    ghostly = {"DequeLinearizable", "HeldOnce"}  # the two checks that read the sequential deque
    blind = replace(mutant.spec, invariants=tuple(i for i in SPEC.invariants if i.name not in ghostly))
    late = check(blind, CONFIGS["small"], Options())
    assert late.violation is not None and late.violation.name == "RunsAtMostOnce"
    assert late.counterexample is not None and late.counterexample.length > mutant.length


def test_committed_compares_with_the_sequential_deque() -> None:
    state = Instance(SPEC, CONFIGS["small"]).initial_states()[0]
    state = state._replace(deque=state.deque.except_("w0", ("b", "c")))
    assert ws.Committed(state, "w0", "c", "bottom").wrong is None
    assert ws.Committed(state, "w0", "b", "top").wrong is None
    wrong = ws.Committed(state, "w0", "b", "bottom").wrong
    assert wrong is not None and wrong[2] == "b" and wrong[3] == ("b", "c")
    assert ws.FoundEmpty(state, "w0").wrong is not None


def test_join_never_helps_needs_join_mode_and_the_design_holds_there() -> None:
    mutant = MUTANTS["join-never-helps"]
    consts = mutant.constants(CONFIGS[mutant.config])
    assert consts.join
    assert check(SPEC, consts, Options()).verdict == "holds"


def test_stealing_from_self_is_harmless_in_this_model() -> None:
    result = check(STEAL_FROM_SELF, CONFIGS["small"], Options())
    assert result.verdict == "holds", result.violation


@pytest.mark.parametrize(
    "change", [{"workers": 1}, {"capacity": 3}, {"memory": "arm"}, {"roots": ("a", "b")}], ids=str
)
def test_bad_constants_are_refused(change: dict[str, Any]) -> None:
    with pytest.raises(SpecError):
        check(SPEC, replace(CONFIGS["small"], **change), Options())


def test_design_object() -> None:
    assert DESIGN.name == "work-stealing"
    assert len(initial_projections(DESIGN, MUTANTS)) == len(DESIGN.projections)


def test_two_processes_find_the_same_states() -> None:
    """Memory values nest records: the parallel search's pickle fallback must carry them intact."""
    one = check(SPEC, CONFIGS["small"], Options(liveness=False))
    two = check(SPEC, CONFIGS["small"], Options(liveness=False, workers=2))
    assert (two.verdict, two.stats.states, two.stats.transitions) == (
        one.verdict,
        one.stats.states,
        one.stats.transitions,
    )


class TestDesignSpec(DesignSpecChecks):
    design = DESIGN
    symmetry_mutant = "take-without-cas"
    pc_hints_config = "small-sc"
    reads_cover = ("design", "take-without-cas", "park-without-recheck")
