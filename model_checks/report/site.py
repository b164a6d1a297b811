"""``write_site``: the whole design-review site for the chosen designs, and its landing page."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from model_checks.registry import design as find_design
from model_checks.registry import designs as all_designs
from model_checks.registry import load_errors
from model_checks.report import rows as verify_rows
from model_checks.report.design_page import DesignSummary, write_design
from model_checks.report.html import esc, note, page, table, unique_slugs
from model_checks.report.ownership import previous_files, settle
from model_checks.report.verdicts import verdict_table
from model_checks.verify import VerifyRow


def _landing(
    summaries: Sequence[DesignSummary], others: Sequence[VerifyRow], quick: bool, seconds: float
) -> str:
    rows = [
        [
            f'<a href="{esc(s.href)}">{esc(s.name)}</a>',
            esc(s.summary),
            f"{s.mutants_caught} of {s.mutants}",
            f"{s.rows_ok} of {s.rows}",
            esc(s.states),
        ]
        for s in summaries
    ]
    body = (
        "<p>For each design: what is specified, what was checked, and how each bug would happen. "
        "Every page is generated from the registered designs (plug-ins included).</p>"
        + table(
            [
                "design",
                "summary",
                "mutants caught as expected",
                "verify rows as expected",
                "spec states matched by real runs",
            ],
            rows,
        )
    )
    for problem in load_errors():
        body += note(f"not shown: {esc(problem)}")
    if others:
        body += "<h2>Rows of no design listed here</h2>" + verdict_table(others)
    mode = "quick (small configurations, explorer rows only)" if quick else "full"
    body += f'<p class="muted">built {time.strftime("%Y-%m-%d %H:%M")} in {seconds:.0f} s; mode: {mode}.</p>'
    return page("lanecheck design review", body, "")


def write_site(
    out: Path,
    design_names: Sequence[str] | None = None,
    rows: Sequence[VerifyRow] | None = None,
    *,
    quick: bool = False,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Write the site under ``out`` and return its ``index.html``.

    ``design_names``: the designs to show (default every registered one; an unknown name raises
    ``KeyError`` naming it, before anything is written). ``rows``: verify rows already computed;
    without them the rows of `lanecheck verify --quick` for these designs are computed here (with
    ``quick``, only the explorer's). ``quick`` also caps each configuration's count more tightly.

    The site owns ``out`` (``ownership``): an ``out`` holding files no previous report wrote raises
    ``OutFolderError`` (a ``ValueError``) naming them, before anything is computed or written; pages
    an earlier report wrote there and this one does not are removed.
    """
    started = time.perf_counter()
    say = log or (lambda _message: None)
    chosen = [find_design(name) for name in design_names] if design_names else list(all_designs().values())
    before = previous_files(out)
    complete = rows is not None or not quick
    if rows is None:
        rows = verify_rows.compute([d.name for d in chosen], quick, say)
    mine, others = verify_rows.by_design(rows, [d.name for d in chosen])
    out.mkdir(parents=True, exist_ok=True)
    folders = unique_slugs(d.name for d in chosen)
    summaries = [write_design(out, folders[d.name], d, mine[d.name], complete, quick, say) for d in chosen]
    index = out / "index.html"
    index.write_text(_landing(summaries, others, quick, time.perf_counter() - started), encoding="utf-8")
    for gone in settle(out, before, [index, *(f for s in summaries for f in s.files)]):
        say(f"removed {gone}: the previous report wrote it, this one did not")
    return index
