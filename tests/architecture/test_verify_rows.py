"""`lanecheck verify` keeps its rows: the row set of `verify --quick` is pinned.

A restructure must not drop, rename or re-expect a row; a new design or check adds rows
here on purpose (regenerate with ``python -m tests.architecture.test_verify_rows``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from model_checks.commands.verify import collect
from model_checks.verify import VerifyRow

PINNED = Path(__file__).with_name("verify_rows_quick.json")


def keys(rows: list[VerifyRow]) -> list[dict[str, str]]:
    return [{"area": r.area, "subject": r.subject, "expected": r.expected} for r in rows]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_quick_verify_rows_are_pinned_and_all_get_their_verdict() -> None:
    # On every core, as `lanecheck verify` runs them (the rows and their order are the serial
    # ones: tests/verify/test_parallel.py).
    rows = collect(True, None, None, jobs=os.cpu_count() or 1)
    pinned = json.loads(PINNED.read_text())
    got = keys(rows)
    missing = [r for r in pinned if r not in got]
    extra = [r for r in got if r not in pinned]
    assert not missing and not extra, f"rows missing: {missing}; rows not pinned: {extra}"
    assert len(got) == len(pinned), "a row appears twice"
    wrong = [(r.subject, r.expected, r.actual) for r in rows if not r.ok]
    assert not wrong, f"rows without their expected verdict: {wrong}"


if __name__ == "__main__":
    PINNED.write_text(json.dumps(keys(collect(True, None, None, jobs=os.cpu_count() or 1)), indent=1) + "\n")
