"""The verdict rows a report shows: computed as `lanecheck verify --quick` computes them, or read
from a `lanecheck verify --json` file; and which design each row belongs to.

Rows are computed through ``model_checks.verify.plan`` itself (not the verify command's module), so
that the command may call ``write_site`` without an import cycle between the two packages.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from model_checks.verify import VerifyRow, plan

# The areas `report --quick` computes: the explorer's, seconds; the harness and conformance rows
# of `verify --quick` take minutes per design, so the quick site leaves them out and says so.
QUICK_AREAS = ("spec",)
MAX_ROWS_FILE = 64 * 1024 * 1024


def compute(
    design_names: Sequence[str], quick: bool, log: Callable[[str], None] | None = None
) -> list[VerifyRow]:
    """The rows of `lanecheck verify --quick --design D ...` (only the spec areas when ``quick``)."""
    rows: list[VerifyRow] = []
    for step in plan(list(QUICK_AREAS) if quick else None, list(design_names)):
        if log is not None:
            log(f"verify rows: {step.area} ({step.covers})")
        rows.extend(step.run(True))
    return rows


def _field(row: Any, index: int, name: str, kind: type) -> Any:
    if name not in row:
        raise ValueError(f"row {index}: no {name!r}")
    value = row[name]
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(f"row {index}: {name!r} is not a finite number: {str(value)[:40]!r}")
        return float(value)
    if not isinstance(value, kind):
        raise ValueError(f"row {index}: {name!r} is not a {kind.__name__}: {str(value)[:40]!r}")
    return value


def parse(text: str) -> list[VerifyRow]:
    """The rows of a `lanecheck verify --json` document; ``ValueError`` naming what is wrong."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as problem:
        raise ValueError(f"not JSON: line {problem.lineno}, column {problem.colno}: {problem.msg}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise ValueError('not the output of `lanecheck verify --json` (an object with a "rows" list)')
    rows = []
    for i, row in enumerate(doc["rows"], start=1):
        if not isinstance(row, dict):
            raise ValueError(f"row {i}: not an object")
        values = {
            name: _field(row, i, name, str) for name in ("area", "subject", "expected", "actual", "figures")
        }
        rows.append(VerifyRow(**values, seconds=_field(row, i, "seconds", float)))
    return rows


def read(path: Path) -> list[VerifyRow]:
    size = path.stat().st_size
    if size > MAX_ROWS_FILE:
        raise ValueError(f"{path}: {size:,} bytes, more than the {MAX_ROWS_FILE:,} a verify output can be")
    try:
        return parse(path.read_text(encoding="utf-8"))
    except ValueError as problem:
        raise ValueError(f"{path}: {problem}") from None


def _pattern(name: str) -> re.Pattern[str]:
    # a whole name: "work-lane" must not claim "work-lane-lockfree"'s rows
    return re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")


def by_design(
    rows: Sequence[VerifyRow], names: Sequence[str]
) -> tuple[dict[str, list[VerifyRow]], list[VerifyRow]]:
    """Each design's rows (its name in the row's subject), and the rows of no listed design."""
    patterns = {name: _pattern(name) for name in names}
    mine: dict[str, list[VerifyRow]] = {name: [] for name in names}
    rest: list[VerifyRow] = []
    for row in rows:
        owners = [name for name, p in patterns.items() if p.search(row.subject)]
        if owners:
            # the longest name wins when one design's name holds another's ("job-pool" in a subject)
            mine[max(owners, key=len)].append(row)
        else:
            rest.append(row)
    return mine, rest
