"""A design's page: spec, configurations and counts, state graphs, verdicts, mutants, coverage,
and the design's own extra pages; and the mutant pages under it (``mutants/NAME.html``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from model_checks.design import Design
from model_checks.report import graphs
from model_checks.report.counterexamples import MutantRun, run_mutant
from model_checks.report.counting import ConfigCount, count_all
from model_checks.report.coverage import action_coverage, no_real_runs, reached_by_checks, states_summary
from model_checks.report.extras import extra_pages
from model_checks.report.html import esc, note, page, table, unique_slugs
from model_checks.report.mutant_page import mutant_body
from model_checks.report.real_runs import real_runs
from model_checks.report.replay import Replay, replay, twins
from model_checks.report.spec_view import constants_text, spec_section
from model_checks.report.verdicts import tally, verdict_table
from model_checks.verify import VerifyRow

Log = Callable[[str], None]
REPLAY_CAP_QUICK = 10.0
REPLAY_CAP = 60.0


@dataclass
class DesignSummary:
    """What the landing page shows of a design."""

    name: str
    summary: str
    href: str
    mutants_caught: int = 0
    mutants: int = 0
    rows_ok: int = 0
    rows: int = 0
    notes: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)  # every file written for the design
    # the spec states its real runs matched, the executions judged and the budget; or why none
    states: str = ""


def _configs_table(counts: Sequence[ConfigCount], design: Design) -> str:
    rows = []
    for c in counts:
        role = []
        if c.config == design.standard:
            role.append("verify")
        if c.config == design.quick:
            role.append("verify --quick")
        rows.append(
            [
                f"<code>{esc(c.config)}</code>",
                esc(", ".join(role)),
                f"<code>{esc(constants_text(c.constants))}</code>" if c.constants is not None else "",
                esc(c.text),
                f"{c.seconds:.2f}",
            ]
        )
    return table(["configuration", "used by", "constants", "reachable states", "s"], rows)


def _graphs(design: Design, counts: Sequence[ConfigCount], log: Log) -> str:
    if not design.projections:
        return note("this design declares no component projections")
    constants = next((c.constants for c in counts if c.config == design.quick), None)
    if constants is None:
        return note(f"no state graphs: the configuration {esc(design.quick)} could not be built")
    walk = graphs.project_all(design.spec, constants, design.projections)
    head = (
        "<p>Each component's states over the reachable states of "
        f"<code>{esc(design.quick)}</code> ({walk.states:,} states)"
    )
    head += (
        ", every transition that changes it labelled by its actions.</p>"
        if walk.complete
        else (f"; <b>incomplete</b>: drawn from the first {walk.states:,} states only.</p>")
    )
    have_dot = graphs.dot_available()
    if not have_dot:
        log(graphs.DOT_MISSING)
        head += note(esc(graphs.DOT_MISSING) + "; the transitions are listed instead")
    parts = [head]
    for item in walk.components:
        parts.append(f'<h3 id="graph-{esc(item.name)}">{esc(item.name)}</h3>')
        if item.error is not None:
            parts.append(note(f"the projection failed: {esc(item.error)}"))
            continue
        if have_dot:
            try:
                svg = graphs.render_svg(graphs.to_dot(item, f"{design.name}: {item.name} ({design.quick})"))
                parts.append(f'<div class="graph">{svg}</div>')
                continue
            except (OSError, RuntimeError, ValueError) as problem:
                parts.append(note(f"dot could not draw it: {esc(problem)}"))
        rows = [
            [f"<code>{esc(a)}</code>", esc(act), f"<code>{esc(b)}</code>"] for a, act, b in sorted(item.edges)
        ]
        parts.append(
            f"<p>initial: <code>{esc(item.initial)}</code></p>" + table(["from", "action", "to"], rows)
        )
    return "".join(parts)


def _replays(design: Design, name: str, quick: bool) -> list[Replay]:
    cap = REPLAY_CAP_QUICK if quick else REPLAY_CAP
    return [replay(design, scen_name, scen, cap) for scen_name, scen in twins(design, name).items()]


def write_design(
    root: Path,
    folder_name: str,
    design: Design,
    rows: Sequence[VerifyRow],
    rows_complete: bool,
    quick: bool,
    log: Log,
) -> DesignSummary:
    folder = root / folder_name
    (folder / "mutants").mkdir(parents=True, exist_ok=True)
    log(f"{design.name}: counting states")
    counts = count_all(design, quick)
    log(f"{design.name}: state graphs")
    graph_html = _graphs(design, counts, log)
    slugs = unique_slugs(design.mutants)
    written: list[Path] = []
    runs: list[MutantRun] = []
    for name, mutant in design.mutants.items():
        log(f"{design.name}: mutant {name}")
        run = run_mutant(design, mutant, quick)
        runs.append(run)
        body = mutant_body(design.name, design.spec, run, _replays(design, name, quick), True)
        crumbs = [(design.name, "../index.html")]
        target = folder / "mutants" / f"{slugs[name]}.html"
        target.write_text(page(f"{design.name}: mutant {name}", body, "../../", crumbs), encoding="utf-8")
        written.append(target)
    mutant_rows = [
        [
            f'<a href="mutants/{esc(slugs[r.mutant.name])}.html">{esc(r.mutant.name)}</a>',
            esc(r.mutant.doc),
            f"<code>{esc(r.mutant.expect)}</code> in {r.mutant.length}",
            esc(r.summary),
        ]
        for r in runs
    ]
    caught = sum(
        1
        for r in runs
        if r.result is not None
        and r.result.violation is not None
        and r.result.counterexample is not None
        and r.result.violation.name == r.mutant.expect
        and r.result.counterexample.length == r.mutant.length
    )
    pages, problems = extra_pages(design, quick)
    extra_links = []
    if pages:
        (folder / "extra").mkdir(exist_ok=True)
        extra_slugs = unique_slugs(p.title for p in pages)
        for p in pages:
            target = folder / "extra" / f"{extra_slugs[p.title]}.html"
            target.write_text(
                page(f"{design.name}: {p.title}", p.fragment, "../../", [(design.name, "../index.html")]),
                encoding="utf-8",
            )
            written.append(target)
            extra_links.append(
                f'<li><a href="extra/{esc(extra_slugs[p.title])}.html">{esc(p.title)}</a></li>'
            )
    quick_count = next((c for c in counts if c.config == design.quick), None)
    log(f"{design.name}: real runs of its correct scenarios")
    real = real_runs(design, quick)
    coverage = action_coverage(quick_count, design.spec.actions, real)
    if real is None:
        coverage += no_real_runs(bool(design.harness()), bool(design.trace_format))
    verdicts = verdict_table(rows) if rows else note("no verify rows for this design")
    if not rows_complete:
        verdicts += note(
            "only the explorer's rows were computed (report --quick): "
            "the harness and conformance rows take minutes"
        )
    sections = [
        (
            "spec",
            "Specification",
            spec_section(
                design.spec,
                quick_count.constants
                if quick_count and quick_count.constants is not None
                else next((c.constants for c in counts if c.constants is not None), None),
            ),
        ),
        ("configs", "Configurations and state counts", _configs_table(counts, design)),
        ("graphs", "State graphs of the components", graph_html),
        ("verdicts", f"Verdicts ({tally(rows)} as expected)", verdicts),
        (
            "mutants",
            f"Mutants: every bug's counterexample ({caught} of {len(runs)} caught as expected)",
            table(["mutant", "the bug", "must violate", "explorer found"], mutant_rows)
            if runs
            else note("this design has no spec mutants"),
        ),
        (
            "coverage",
            "Coverage",
            coverage + reached_by_checks(rows, rows_complete),
        ),
    ]
    if pages or problems:
        extra = f"<ul>{''.join(extra_links)}</ul>" + "".join(
            note(f"extra page not made: {esc(p)}") for p in problems
        )
        sections.append(("extra", "The design's own pages", extra))
    toc = "".join(f'<li><a href="#{sid}">{title}</a></li>' for sid, title, _ in sections)
    body = f"<p>{esc(design.summary)}</p><ul>{toc}</ul>" + "".join(
        f'<h2 id="{sid}">{title}</h2>{html}' for sid, title, html in sections
    )
    (folder / "index.html").write_text(page(f"design {design.name}", body, "../"), encoding="utf-8")
    written.append(folder / "index.html")
    return DesignSummary(
        design.name,
        design.summary,
        f"{folder_name}/index.html",
        caught,
        len(runs),
        sum(1 for r in rows if r.ok),
        len(rows),
        problems,
        written,
        states_summary(quick_count, real),
    )
