"""The Work Lane spec holds at its configurations, and every mutant is caught as expected."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from model_checks.designs.work_lane.configs import CONFIGS
from model_checks.designs.work_lane.spec_mutants import MUTANTS
from model_checks.explorer import render
from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from spec.language import SpecError, variant
from spec.work_lane import SPEC
from spec.work_lane_state import Constants
from tests.spec_helpers import assert_holds, assert_symmetry_reduces

pytestmark = pytest.mark.timeout(300)


def test_small_holds_with_every_action_fired() -> None:
    result = assert_holds(SPEC, CONFIGS["small"], "small", states=11_996, unfired=[])
    assert "EveryAcceptedItemSettles" in result.properties_checked
    assert "EveryStopReturns" in result.properties_checked


def test_symmetry_reduces_but_skips_liveness_and_says_so() -> None:
    reduced = assert_symmetry_reduces(SPEC, CONFIGS["small"])
    assert "EveryStopReturns" not in reduced.properties_checked


def test_bounds_give_incomplete_never_holds() -> None:
    for options in (Options(max_states=100), Options(max_depth=3), Options(time_limit=0.0)):
        result = check(SPEC, CONFIGS["small"], options)
        assert result.verdict == "incomplete", options
        assert result.exit_code == 3


def test_liveness_violation_is_a_lasso() -> None:
    """Workers that never take work: with deadlock reporting off, liveness must still catch it."""
    lazy = variant(SPEC, "lazy-workers", drop_actions=["Take"])
    consts = replace(CONFIGS["small"], stops=(), callback_stop=False)
    result = check(lazy, consts, Options(deadlock=False))
    assert result.verdict == "violated"
    assert result.violation is not None and result.violation.kind == "liveness"
    assert result.violation.name == "EveryAcceptedItemSettles"
    cx = result.counterexample
    assert cx is not None and cx.loop_start is not None


def test_deadlock_is_reported() -> None:
    lazy = variant(SPEC, "lazy-workers", drop_actions=["Take"])
    result = check(lazy, replace(CONFIGS["small"], stops=("drain",)), Options())
    assert result.verdict == "violated"
    assert result.violation is not None and result.violation.kind == "deadlock"


def test_violated_assumption_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="ReadyQueueHoldsEveryLane"):
        check(SPEC, replace(CONFIGS["small"], ready_capacity=1), Options())


def test_counterexample_renders_as_table_mermaid_and_json() -> None:
    mutant = MUTANTS["split-idle"]
    result = check(mutant.spec, CONFIGS["small"], Options())
    diagram = render.mermaid(result)
    assert diagram.startswith("sequenceDiagram")
    assert "DrainEndIdleLate" in diagram and "NoLostWakeup violated" in diagram
    data = json.loads(render.dumps(result))
    assert data["verdict"] == "violated"
    assert data["violation"]["property"] == "NoLostWakeup"
    assert len(data["violation"]["steps"]) == mutant.length
    last = data["violation"]["steps"][-1]
    assert last["event"] == "drain_end" and last["changes"]["status[0]"] == {
        "before": "Draining",
        "after": "Idle",
    }


def test_constants_header_matches_trace_format() -> None:
    c: Constants = CONFIGS["small"]
    assert set(c.header()) == {"lanes", "workers", "lane_capacity", "max_per_drain", "ready_capacity"}
