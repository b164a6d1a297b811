"""The verdict table of `lanecheck verify`: expected and actual verdict, figures (the bounds a
bounded row ran under are in them), seconds."""

from __future__ import annotations

from collections.abc import Sequence

from model_checks.report.html import esc, table
from model_checks.verify import VerifyRow


def verdict_table(rows: Sequence[VerifyRow]) -> str:
    cells = [
        [
            esc(r.area),
            esc(r.subject),
            esc(r.expected),
            esc(r.actual),
            '<span class="ok">yes</span>' if r.ok else '<span class="bad">NO</span>',
            esc(r.figures),
            f"{r.seconds:.2f}",
        ]
        for r in rows
    ]
    return table(["area", "subject", "expected", "actual", "ok", "figures and bounds", "s"], cells)


def tally(rows: Sequence[VerifyRow]) -> str:
    good = sum(1 for r in rows if r.ok)
    cls = "ok" if good == len(rows) else "bad"
    return f'<span class="{cls}">{good} of {len(rows)}</span>'
