"""Coverage growth of ``compare_by_automaton`` runs as a PNG chart (matplotlib, Agg canvas)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

PLOT_HINT = "pip install 'lanecheck[plot]' (or pip install matplotlib)"


def have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def plot_coverage(runs: Sequence[tuple[str, Any]], path: Path, title: str) -> None:
    """One line per run (``label``, an ``AutomatonComparison``): observable spec steps realised,
    as a share of them, against seconds of the harness side. A run without a timeline (dpor
    collects its traces at the end) is drawn as its final point."""
    # The object API with the Agg canvas: no pyplot, no global backend switch, no display needed.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.0), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    for label, c in runs:
        total = c.spec_steps or 1
        points = list(c.timeline) or [(c.seconds, c.realised_steps)]
        if c.timeline:
            # the line runs on to the end of the search, not to the last gain
            points.append((max(points[-1][0], c.harness_seconds), points[-1][1]))
        xs = [t for t, _ in points]
        ys = [100.0 * n / total for _, n in points]
        ax.step(xs, ys, where="post", label=f"{label}: {c.realised_steps:,}/{c.spec_steps:,}")
    ax.set_xlabel("seconds (harness side)")
    ax.set_ylabel("observable spec steps realised (%)")
    ax.set_ylim(0, 100)
    ax.axhline(95, color="gray", linestyle=":", linewidth=1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(title, fontsize=9)
    fig.savefig(path, format="png")
