"""The generic benches find the designs through the registry: workloads, trace benches, defaults."""

from __future__ import annotations

import dataclasses
import json
import sys
import types
from pathlib import Path

import pytest

from model_checks import registry
from model_checks.bench import explorer, harness, traces, validate, workload
from model_checks.commands import bench as bench_command
from model_checks.conformance import validate_file
from model_checks.conformance.export import header
from model_checks.conformance.validator import default_design


def test_every_reference_design_offers_the_shared_workload_in_registry_order() -> None:
    # (a later design may offer it too: it comes after these)
    assert list(workload.workloads())[:3] == ["work-lane", "schedule-gate", "akka-mailbox"]


@pytest.mark.timeout(120)
def test_each_shared_workload_runs_every_item() -> None:
    small = workload.Workload(targets=4, workers=2, budget=4, producers=2)
    for name, run in workload.workloads().items():
        assert run(400, small) > 0, name


def test_the_defaults_are_the_first_registered_designs_that_fit() -> None:
    assert harness.standard() == "work-lane/lanes-2x2-budget1"
    assert explorer.default_design() == "work-lane"
    assert default_design() == "work-lane"
    assert header(registry.design("work-lane").config("small"))["design"] == "work-lane"


def test_the_explorer_bench_refuses_a_design_without_a_twin_before_running() -> None:
    with pytest.raises(KeyError, match="schedule-gate has no TLA\\+ twin"):
        explorer.bench(quick=True, config="small", design="schedule-gate")


@pytest.mark.timeout(120)
def test_trace_benches_write_traces_their_validator_accepts(tmp_path: Path) -> None:
    benches = traces.trace_benches()
    assert list(benches)[:3] == ["work-lane", "schedule-gate", "akka-mailbox"]
    assert benches["akka-mailbox"].complete and not benches["work-lane"].complete
    for name, bench in benches.items():
        path = tmp_path / f"{name}.jsonl"
        events = validate.write_trace(path, 20, design=name)
        assert events > 0
        assert json.loads(path.read_text().splitlines()[0])["design"] == name
        assert validate_file(path, complete=bench.complete).code == 0, name


def test_write_trace_names_the_designs_that_have_a_trace_bench(tmp_path: Path) -> None:
    with pytest.raises(LookupError, match="'job-pool' has no trace bench; designs with one: work-lane"):
        validate.write_trace(tmp_path / "t.jsonl", 10, design="job-pool")


def test_a_design_bench_named_like_another_is_left_out_with_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = registry.designs()
    clash = dataclasses.replace(
        real["work-lane"], name="clashing", benches={"harness": ("nowhere", "shadows the generic bench")}
    )
    monkeypatch.setattr(registry, "designs", lambda: {**real, "clashing": clash})
    with pytest.warns(UserWarning, match="bench 'harness' of design clashing not registered"):
        found = bench_command.benches()
    assert found["harness"] == bench_command.GENERIC_BENCHES["harness"]
    assert {"scheduler", "schedule-gate", "akka-mailbox"} <= set(found)


@pytest.mark.timeout(120)
def test_a_bench_module_may_give_a_trace_bench_and_a_goal_instead_of_bench(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = types.ModuleType("a_trace_bench")
    first = next(iter(traces.trace_benches().values()))
    module.TRACE_BENCH = dataclasses.replace(first, quick_sizes=(40, 20))  # type: ignore[attr-defined]
    module.GOAL = 1  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(bench_command, "benches", lambda: {"a-trace": (module.__name__, "a trace bench")})
    assert not bench_command.takes_store("a-trace")
    figures = bench_command.run_bench("a-trace", quick=True)
    assert figures["goal_events_per_s"] == 1 and figures["meets_goal"], figures
