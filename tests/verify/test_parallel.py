"""`lanecheck verify --jobs N`: the same rows, verdicts and order as one after another."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_checks.commands.verify import collect
from model_checks.registry import design
from model_checks.verify import VerifyRow, plan, run_unit, run_units, units


def keys(rows: list[VerifyRow]) -> list[tuple[str, str, str, str]]:
    return [(r.area, r.subject, r.expected, r.actual) for r in rows]


def stepwise(quick: bool, areas: list[str] | None, designs: list[str] | None) -> list[VerifyRow]:
    """The rows as verify computed them before it had units: each step's provider, in turn."""
    return [row for step in plan(areas, designs) for row in step.run(quick)]


@pytest.mark.timeout(600)
def test_a_step_cut_per_scenario_gives_the_step_s_rows_in_its_order() -> None:
    # (every design's spec step in worker processes against the serial steps: tests/architecture/
    # test_verify_rows.py, from the whole `verify --quick` run that test makes anyway)
    cut = collect(True, ["harness"], None, ["event-pool"], jobs=1)
    assert keys(cut) == keys(stepwise(True, ["harness"], ["event-pool"]))
    assert len(cut) > 1 and all(r.ok for r in cut)


def test_a_step_along_a_design_field_is_cut_into_one_unit_per_entry() -> None:
    steps = plan(["harness"], ["event-pool"])
    cut = units(["harness"], ["event-pool"])
    assert len(steps) == 1 < len(cut)
    scenarios = design("event-pool").harness()
    assert {u.part for u in cut} == {name for name, s in scenarios.items() if s.verify}
    spec_step = units(["spec"], ["event-pool"])
    assert [u.part for u in spec_step] == ["spec", *(f"--variant {m}" for m in design("event-pool").mutants)]


@pytest.mark.timeout(120)
def test_the_spec_step_cut_into_its_spec_row_and_each_mutant_gives_the_step_s_rows() -> None:
    cut = [row for unit in units(["spec"], ["job-pool"]) for row in run_unit(unit, True)]
    assert keys(cut) == keys(stepwise(True, ["spec"], ["job-pool"]))
    assert len(cut) > 2 and all(r.ok for r in cut)
    [spec_row] = run_unit(units(["spec"], ["job-pool"])[0], True)
    assert spec_row.area == "spec"  # the spec row alone, no mutant


def test_a_part_of_the_spec_step_that_names_no_mutant_is_refused() -> None:
    from model_checks.verify import Unit, mutant_of

    with pytest.raises(ValueError, match="'nothing' is not a part of the spec step"):
        mutant_of("nothing")
    unknown = Unit(
        "spec", "job-pool", "per-design", "model_checks.explorer.verify_rows:rows", "--variant nope"
    )
    with pytest.raises(KeyError, match="job-pool has no variant 'nope'"):
        run_unit(unknown, True)


@pytest.mark.timeout(120)
def test_rows_come_back_in_the_order_asked_whatever_the_order_they_ran_in() -> None:
    todo = [u for u in units(["spec"], ["job-pool", "event-pool", "admission"]) if u.part == "spec"]
    finished: list[int] = []
    results = run_units(todo, True, 2, lambda i, rows, s: finished.append(i), order=[2, 1, 0])
    assert [rows[0].subject.split(" ")[0] for rows in results] == ["job-pool", "event-pool", "admission"]
    assert sorted(finished) == [0, 1, 2]
    with pytest.raises(ValueError, match="each unit once"):
        run_units(todo, True, 1, order=[0, 1])  # unit 2 would never run


@pytest.mark.timeout(120)
def test_an_error_in_a_worker_is_raised_as_in_a_serial_run(tmp_path: Path) -> None:
    from model_checks.verify import Unit

    bad = Unit("spec", "no-such-design", "per-design", "model_checks.explorer.verify_rows:rows")
    with pytest.raises(KeyError, match="no-such-design"):
        run_units([bad, *units(["spec"], ["job-pool"])], True, 2)
    with pytest.raises(KeyError, match="no-such-design"):
        run_units([bad], True, 1)
