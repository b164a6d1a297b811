"""Where `lanecheck verify`'s time goes: CPU seconds per row, the start order, the predicted wall time.

No test here times anything against a target: they check that the CPU a row reports is the CPU its
provider spent (a row that only waits reports next to none), that units start longest first, and
that the predicted wall time is the list schedule ``run_units`` makes.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from model_checks.cli import app
from model_checks.commands import verify_costs
from model_checks.commands.verify import collect_timed
from model_checks.verify import Unit, VerifyRow, cpu_now, longest_first, makespan, run_unit, units

runner = CliRunner()
BUSY = 0.3  # CPU seconds the busy row burns


def waiting_then_busy(quick: bool) -> Iterator[VerifyRow]:
    """A provider (``rows(quick)``) whose first row only waits and whose second computes."""
    started = time.perf_counter()
    time.sleep(BUSY)
    yield VerifyRow("test", "waits", "done", "done", "", time.perf_counter() - started)
    started = time.perf_counter()
    until = cpu_now() + BUSY
    while cpu_now() < until:
        pass
    yield VerifyRow("test", "computes", "done", "done", "", time.perf_counter() - started)


PROVIDER = Unit("test", "lanecheck", "design-free", f"{__name__}:waiting_then_busy")


@pytest.mark.timeout(60)
def test_a_row_reports_the_cpu_its_provider_spent_on_it_not_the_time_it_waited() -> None:
    waits, computes = run_unit(PROVIDER, quick=True)
    assert waits.seconds >= BUSY and computes.seconds >= BUSY  # both took the time...
    assert waits.cpu_seconds is not None and computes.cpu_seconds is not None
    assert waits.cpu_seconds < computes.cpu_seconds / 2  # ...only one spent it (process CPU: margin)
    assert computes.cpu_seconds >= BUSY * 0.9
    assert waits.as_json()["cpu_seconds"] == waits.cpu_seconds
    # it crosses to the parent with the row (a worker process), and is no part of what the row says
    assert pickle.loads(pickle.dumps(computes)).cpu_seconds == computes.cpu_seconds
    assert dataclasses.replace(computes).cpu_seconds is None and dataclasses.replace(computes) == computes


def test_units_start_longest_first_and_those_of_unknown_cost_before_them() -> None:
    todo = [Unit("a", "d", "design-own", f"m:{name}") for name in "pqrst"]
    costs = {todo[0].key: 5.0, todo[1].key: 50.0, todo[3].key: 5.0, todo[4].key: 0.5}
    # r has no cost: first; then by cost, a tie in plan order
    assert longest_first(todo, costs) == [2, 1, 0, 3, 4]
    assert longest_first(todo, {}) == [0, 1, 2, 3, 4]


def test_the_predicted_wall_time_is_the_list_schedule_of_the_units_in_their_start_order() -> None:
    plan_order = [10.0, 10.0, 10.0, 40.0]  # the long unit last: one worker ends alone
    assert makespan(plan_order, 2) == 50.0
    assert makespan(sorted(plan_order, reverse=True), 2) == 40.0
    assert makespan(plan_order, 1) == 70.0
    assert makespan(plan_order, 8) == 40.0
    assert makespan([], 2) == 0.0
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        makespan(plan_order, 0)


@pytest.mark.timeout(120)
def test_verify_json_has_each_row_s_cpu_and_the_timing_of_each_unit() -> None:
    result = runner.invoke(
        app, ["verify", "--quick", "--design", "job-wakeup", "--area", "spec", "--jobs", "1", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    rows, timing = data["rows"], data["timing"]
    assert all(isinstance(r["cpu_seconds"], float) and r["cpu_seconds"] >= 0 for r in rows)
    assert [u["key"] for u in timing["units"]] == [u.key for u in units(["spec"], ["job-wakeup"])]
    assert sum(u["rows"] for u in timing["units"]) == len(rows)
    cpu = sum(r["cpu_seconds"] for r in rows)
    assert timing["cpu_seconds"] == pytest.approx(cpu, abs=0.1)
    assert timing["jobs"] == 1 and timing["quick"] is True
    # one worker: the units one after another
    assert timing["predicted_wall_seconds"] == pytest.approx(cpu, abs=0.1)
    assert timing["floor_seconds"] == pytest.approx(cpu, abs=0.1)
    assert timing["longest_unit"]["cpu_seconds"] == max(u["cpu_seconds"] for u in timing["units"])


@pytest.mark.timeout(300)
@pytest.mark.usefixtures("frozen_tree")
def test_with_a_certificate_reused_units_cost_nothing_in_this_run(handoff: Path, tmp_path: Path) -> None:
    cert = tmp_path / "run.json"
    first, timing = collect_timed(True, None, None, ["handoff"], jobs=1, certificate=cert)
    assert all(u.cpu_seconds is not None for u in timing.units)
    # the machine's speed of the moment goes with the run, so two runs' wall times can be compared
    machine = timing.as_json()["machine"]
    assert machine["reference_loop_ms"] > 0 and machine["cores"] >= 1
    assert f"reference loop {machine['reference_loop_ms']:g} ms" in timing.line()
    assert sum(u.rows for u in timing.units) == len(first)
    again, timing = collect_timed(True, None, None, ["handoff"], jobs=1, certificate=cert)
    assert all(r.reused_from for r in again) and all(r.cpu_seconds is None for r in again)
    assert all(u.cpu_seconds is None and u.seconds is None for u in timing.units)
    assert timing.as_json()["cpu_seconds"] == 0


def test_the_cost_table_is_rewritten_from_a_run_and_bad_runs_are_refused(tmp_path: Path) -> None:
    # the module's table is its data file, read at import
    assert verify_costs.read_table() == verify_costs.COSTS and verify_costs.COSTS
    run = {
        "timing": {
            "quick": False,
            "date": "D",
            "units": [
                {"key": "spec | d | m:rows | spec", "cpu_seconds": 12.34},
                {"key": "harness | d | m:rows | long", "cpu_seconds": 50.0},
                {"key": "spec | d | m:rows | reused", "cpu_seconds": None},
            ],
        }
    }
    source, table = tmp_path / "run.json", tmp_path / "costs.json"
    source.write_text(json.dumps(run), encoding="utf-8")
    assert verify_costs.main([str(source)], table) == 0
    # longest first, rounded; a reused unit (no CPU measured in the run) is left out, never 0
    assert verify_costs.read_table(table) == {
        "harness | d | m:rows | long": 50.0,
        "spec | d | m:rows | spec": 12.3,
    }
    assert list(verify_costs.read_table(table)) == ["harness | d | m:rows | long", "spec | d | m:rows | spec"]
    assert json.loads(table.read_text(encoding="utf-8"))["source"] == "full configurations, measured D"
    assert not list(tmp_path.glob("*.tmp"))
    with pytest.raises(ValueError, match=r"no timing\.units"):
        verify_costs.costs_of({"rows": []})
    with pytest.raises(ValueError, match="is not a number"):
        verify_costs.costs_of({"timing": {"units": [{"key": "k", "cpu_seconds": "fast"}]}})
    # a bad run leaves the table as it was
    source.write_text(json.dumps({"rows": []}), encoding="utf-8")
    before = table.read_text(encoding="utf-8")
    assert verify_costs.main([str(source)], table) == 2 and table.read_text(encoding="utf-8") == before
    for bad, problem in (({"costs": {"k": -1}}, "is not a number"), ({"cost": {}}, "no .costs. object")):
        table.write_text(json.dumps(bad), encoding="utf-8")
        with pytest.raises(ValueError, match=problem):
            verify_costs.read_table(table)
