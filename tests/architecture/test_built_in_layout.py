"""``built_in`` names a folder's harness scenarios and trace format by the layout, only where the
folder has those modules, and a field the folder gives itself wins."""

from __future__ import annotations

from model_checks.design import built_in
from model_checks.registry import designs


def test_a_folder_with_a_harness_and_a_trace_module_gets_both_by_the_layout() -> None:
    d = built_in("model_checks.designs.schedule_gate", "schedule-gate")
    assert d.scenarios == "model_checks.designs.schedule_gate.harness:SCENARIOS"
    assert d.trace_format == "model_checks.designs.schedule_gate.trace:FORMAT"
    assert d.harness() is designs()["schedule-gate"].harness()


def test_a_folder_without_them_has_none_and_a_given_field_wins() -> None:
    bare = built_in("model_checks.designs.job_pool", "job-pool")
    assert bare.scenarios == {} and bare.trace_format is None
    lane = built_in("model_checks.designs.work_lane", "work-lane", trace_format=".trace.validate:FORMAT")
    assert lane.trace_format == "model_checks.designs.work_lane.trace.validate:FORMAT"
    assert lane.scenarios == "model_checks.designs.work_lane.harness:SCENARIOS"
