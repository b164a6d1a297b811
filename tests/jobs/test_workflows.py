"""Workflows: steps and for_each over state, per-run budgets failing the run with a reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reference.jobs import Conditions, JobState, Workflow
from reference.jobs.core import StoreCore
from tests.jobs.handlers import plan, square
from tests.jobs.helpers import Clock, make_store

HANDLERS = {"plan": plan, "square": square}


@pytest.fixture(params=["sqlite", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreCore:
    return make_store(str(request.param), tmp_path, Clock())


def drain(store: StoreCore, extra: dict[str, Any] | None = None) -> int:
    """Run every claimable job with ``HANDLERS`` (plus ``extra``); how many ran."""
    handlers = {**HANDLERS, **(extra or {})}
    ran = 0
    while (claim := store.claim("w", Conditions()).claim) is not None:
        store.finish(claim.job.id, claim.token, handlers[claim.job.handler](claim.job.payload), 0.0, 0)
        ran += 1
    return ran


def research() -> Workflow:
    return Workflow("research").then("plan").for_each("tasks", "square", "results")


def test_steps_and_for_each_complete_with_state_and_budget_payload(store: StoreCore) -> None:
    run_id = store.start_workflow(research().max_cost_units(40), {"count": 4})
    assert drain(store) == 5
    run = store.workflow(run_id)
    assert run is not None and run["status"] == "completed"
    assert run["state"]["results"] == [0, 1, 4, 9]
    assert run["budget"]["limits"]["max_cost_units"] == 40
    assert run["budget"]["usage"]["cost_units"] == 5 and run["budget"]["usage"]["transitions"] == 2
    assert run["budget"]["usage"]["for_each_items"] == 4


@pytest.mark.parametrize(
    ("budget", "limit"),
    [
        ("max_transitions", 1),
        ("max_for_each_items", 3),
        ("max_state_bytes", 40),
        ("max_cost_units", 4),
    ],
)
def test_each_budget_fails_the_run_with_a_constraint_violation(
    store: StoreCore, budget: str, limit: int
) -> None:
    flow = research()
    getattr(flow, budget)(limit)
    run_id = store.start_workflow(flow, {"count": 4})
    drain(store)
    run = store.workflow(run_id)
    assert run is not None and run["status"] == "failed"
    assert str(run["reason"]).startswith(f"constraint_violation: {budget} {limit} exceeded")
    assert store.status().counts["pending"] == 0  # nothing left to retry


def test_max_started_workflows(store: StoreCore) -> None:
    child = Workflow("child").then("plan").definition()

    def spawn(state: Any) -> Any:
        return {"_start_workflows": [{"definition": child, "state": {}}] * 3}

    run_id = store.start_workflow(Workflow("parent").max_started_workflows(2).then("spawn"), {})
    drain(store, {"spawn": spawn})
    run = store.workflow(run_id)
    assert run is not None and run["status"] == "failed"
    assert "max_started_workflows 2 exceeded" in str(run["reason"])
    ok_id = store.start_workflow(Workflow("parent").max_started_workflows(3).then("spawn"), {})
    drain(store, {"spawn": spawn})
    ok = store.workflow(ok_id)
    assert ok is not None and ok["status"] == "completed" and ok["budget"]["usage"]["started_workflows"] == 3
    assert store.workflow(ok_id + 3) is not None  # the children ran as runs of their own


def test_a_violation_discards_pending_jobs_with_the_reason(store: StoreCore) -> None:
    flow = Workflow("w").max_cost_units(3).then("plan").for_each("tasks", "square", "results", cost_units=1)
    run_id = store.start_workflow(flow, {"count": 2})
    claim = store.claim("w", Conditions()).claim
    assert claim is not None
    store.finish(claim.job.id, claim.token, {"tasks": [1, 2, 3]}, 0.0, 0)
    run = store.workflow(run_id)
    assert run is not None and run["status"] == "failed" and "max_cost_units 3" in str(run["reason"])


def test_a_step_failing_for_good_fails_the_run(store: StoreCore) -> None:
    flow = Workflow("w").then("plan", max_attempts=1)
    run_id = store.start_workflow(flow, {})
    claim = store.claim("w", Conditions()).claim
    assert claim is not None
    failed = store.fail(claim.job.id, claim.token, "RuntimeError: no", 0.0, 0)
    assert failed.state is JobState.FAILED
    run = store.workflow(run_id)
    assert run is not None and run["status"] == "failed" and "step 0 failed" in str(run["reason"])


def test_definitions_round_trip_and_bad_ones_are_refused() -> None:
    flow = research().max_transitions(20)
    assert Workflow.from_definition(flow.definition()).definition() == flow.definition()
    with pytest.raises(ValueError, match="unknown budget"):
        Workflow.from_definition(
            {
                "name": "x",
                "steps": [{"kind": "then", "handler": "h", "queue": "q"}],
                "budget": {"max_wishes": 1},
            }
        )
    with pytest.raises(ValueError, match="steps"):
        Workflow.from_definition({"name": "x", "steps": []})
    with pytest.raises(ValueError, match="max_cost_units"):
        Workflow("x").max_cost_units(-1)
