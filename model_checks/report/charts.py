"""Bar charts as inline SVG, for the extra pages a design provides (``report_pages``): e.g. the
work-stealing simulator's completed tasks per worker, stealing on and off."""

from __future__ import annotations

from collections.abc import Sequence

from model_checks.report.html import esc

BAR = 18
LABEL = 140
WIDTH = 420


def bar_chart(title: str, bars: Sequence[tuple[str, float]], unit: str = "") -> str:
    """One horizontal bar per (label, value); values must be finite and non-negative."""
    for label, value in bars:
        if not value >= 0 or value == float("inf"):
            raise ValueError(f"bar {label!r}: {value!r} is not a finite non-negative value")
    top = max((v for _, v in bars), default=0.0) or 1.0
    height = 30 + len(bars) * (BAR + 6) + 10
    total = LABEL + WIDTH + 90
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{total}" height="{height}" '
        f'viewBox="0 0 {total} {height}" role="img" aria-label="{esc(title)}">',
        f'<text x="4" y="18" font-size="13" font-weight="bold">{esc(title)}</text>',
    ]
    for i, (label, value) in enumerate(bars):
        y = 30 + i * (BAR + 6)
        w = WIDTH * value / top
        parts.append(
            f'<text x="{LABEL - 6}" y="{y + 13}" font-size="11" text-anchor="end">{esc(label)}</text>'
            f'<rect x="{LABEL}" y="{y}" width="{w:.1f}" height="{BAR}" fill="#3d6fb6"/>'
            f'<text x="{LABEL + w + 4:.1f}" y="{y + 13}" font-size="11">{value:,.4g}{esc(unit)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
