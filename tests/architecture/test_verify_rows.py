"""`lanecheck verify` keeps its rows: the row set of `verify --quick` is pinned.

A restructure must not drop, rename or re-expect a row; a new design or check adds rows
here on purpose (regenerate with ``python -m tests.architecture.test_verify_rows``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from model_checks.commands.verify import Timing, collect, collect_timed
from model_checks.verify import VerifyRow, plan, units

PINNED = Path(__file__).with_name("verify_rows_quick.json")

# The tests below read one run of the whole `verify --quick` (about 110 CPU seconds): one worker
# runs them, so the run is made once.
pytestmark = [pytest.mark.xdist_group("quick-verify"), pytest.mark.slow, pytest.mark.timeout(900)]


def keys(rows: list[VerifyRow]) -> list[dict[str, str]]:
    return [{"area": r.area, "subject": r.subject, "expected": r.expected} for r in rows]


@pytest.fixture(scope="module")
def quick_run() -> tuple[list[VerifyRow], Timing]:
    # On every core, as `lanecheck verify` runs them, and on two at least, so that the rows are
    # also those of worker processes (compared with the serial ones below).
    return collect_timed(True, None, None, jobs=max(2, os.cpu_count() or 1))


def test_the_quick_verify_rows_are_pinned_and_all_get_their_verdict(
    quick_run: tuple[list[VerifyRow], Timing],
) -> None:
    rows = quick_run[0]
    pinned = json.loads(PINNED.read_text())
    got = keys(rows)
    missing = [r for r in pinned if r not in got]
    extra = [r for r in got if r not in pinned]
    assert not missing and not extra, f"rows missing: {missing}; rows not pinned: {extra}"
    assert len(got) == len(pinned), "a row appears twice"
    wrong = [(r.subject, r.expected, r.actual) for r in rows if not r.ok]
    assert not wrong, f"rows without their expected verdict: {wrong}"


def verdicts(rows: list[VerifyRow]) -> list[tuple[str, str, str, str]]:
    return [(r.area, r.subject, r.expected, r.actual) for r in rows]


def test_parallel_spec_rows_are_the_serial_rows_in_the_same_order(
    quick_run: tuple[list[VerifyRow], Timing],
) -> None:
    # `lanecheck verify --jobs N`: every design's spec step (its spec row and one unit per
    # mutant), run in worker processes, gives the rows, verdicts and order of the steps' providers
    # run one after another in this process, as verify ran them before it had units.
    # (tests/verify/test_parallel.py: the same for a step cut per scenario, in one process.)
    rows, timing = quick_run
    assert timing.jobs >= 2
    todo = units(None, None)
    assert [u.key for u in timing.units] == [u.key for u in todo]
    parallel: list[VerifyRow] = []
    start = 0
    for unit, ran in zip(todo, timing.units, strict=True):
        if unit.area == "spec":
            parallel += rows[start : start + ran.rows]
        start += ran.rows
    assert start == len(rows)
    serial = [row for step in plan(["spec"], None) for row in step.run(True)]
    assert verdicts(parallel) == verdicts(serial)
    assert len(parallel) > 9 and all(r.ok for r in parallel)


if __name__ == "__main__":
    PINNED.write_text(json.dumps(keys(collect(True, None, None, jobs=os.cpu_count() or 1)), indent=1) + "\n")
