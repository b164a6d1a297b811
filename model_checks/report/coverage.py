"""Coverage: what the checks reached.

Per spec action: the explorer's firings (at the configuration ``verify --quick`` checks) and how
often the real reference performed it in bounded runs of the design's correct harness scenarios
(``real_runs``: an action is matched by the event it logs), and how many spec states their traces
matched (``state_coverage``; a share of the explorer's states only under the same constants). The
harness rows count executions and
steps of the reference; a design's link comparisons (spec traces against the reference's) report
the spec traces and transitions they covered. A design without them gets a sentence saying so,
not an empty table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from model_checks.report.counting import ConfigCount
from model_checks.report.html import esc, note, table
from model_checks.report.real_runs import RealRuns
from model_checks.verify import VerifyRow
from spec.language import Action

REACHING_AREAS = ("harness", "harness-mutant", "conformance")


STATES_NOT_COMPARABLE = (
    "not a share of the explorer's states: the validator judged the traces under its own binding of "
    "the constants"
)


def _reached(fired: int, seen: int, event: str | None, runs: RealRuns | None) -> str:
    if runs is not None and event is not None and seen:
        return '<span class="ok">explorer and real runs</span>' if fired else "real runs only"
    if fired:
        if event is None:
            return "explorer (internal step: no event to see in a run)"
        return "explorer only" if runs is not None else "explorer"
    return '<span class="bad">never seen</span>'


def action_coverage(count: ConfigCount | None, actions: Sequence[Action], runs: RealRuns | None) -> str:
    """Per spec action: fired by the explorer, seen in the real runs, or never seen."""
    explored = count is not None and count.complete
    seen = runs.seen() if runs is not None else {}
    parts = []
    if explored:
        assert count is not None
        fired_n = sum(1 for a in actions if count.coverage.get(a.name, 0))
        parts.append(
            f"<p>The explorer reached {esc(count.text)} at <code>{esc(count.config)}</code>; "
            f"{fired_n} of {len(actions)} actions fire there.</p>"
        )
    else:
        why = count.text if count is not None else "no configuration"
        parts.append(
            note(f"spec action coverage by the explorer not measured: the quick configuration was {esc(why)}")
        )
    if runs is not None:
        observable = [a for a in actions if a.event]
        hit = sum(1 for a in observable if seen.get(a.event or "", 0))
        parts.append(
            f"<p>Real runs: the reference's correct harness scenarios, {esc(runs.bound)} "
            f"({sum(r.executions for r in runs.runs):,} executions); {hit} of {len(observable)} "
            "observable actions seen, matched by the event each logs.</p>"
        )
    sharing = Counter(a.event for a in actions if a.event)
    rows = []
    for a in actions:
        fired = count.coverage.get(a.name, 0) if explored and count is not None else 0
        n = seen.get(a.event, 0) if a.event is not None else 0
        if not explored:
            shown = "not measured"
        else:
            shown = f"{fired:,}" if fired else '<span class="bad">0 — never fires (vacuous?)</span>'
        row = [f'<a href="#action-{esc(a.name)}"><code>{esc(a.name)}</code></a>', shown]
        if runs is not None:
            row += [
                f"<code>{esc(a.event)}</code>" if a.event else '<span class="muted">internal</span>',
                f"{n:,}" if a.event else "",
            ]
        reached = _reached(fired, n, a.event, runs)
        if runs is not None and a.event is not None and sharing[a.event] > 1 and n:
            # the trace names the event, not the action: a count here may be another action's
            reached += f' <span class="muted">(event shared by {sharing[a.event]} actions)</span>'
        row.append(reached)
        rows.append(row)
    head = ["spec action", "transitions it produced (explorer)"]
    if runs is not None:
        head += ["event it logs", "times seen in real runs"]
    parts.append(table([*head, "reached by"], rows))
    if runs is not None:
        parts.append(_runs_table(runs, {a.event for a in actions if a.event}))
        parts.append(state_coverage(count, runs))
    return "".join(parts)


def state_coverage(count: ConfigCount | None, runs: RealRuns) -> str:
    """How many distinct spec states the real runs' allowed traces matched, and against what."""
    st = runs.states
    if st.why_not is not None:
        return note(f"state coverage of the real runs is not available: {esc(st.why_not)}")
    unusable = "".join(
        f"<li><code>{esc(name)}</code>: {esc(why)}</li>" for name, why in sorted(st.unusable.items())
    )
    unusable = f"<p>Runs that gave no states:</p><ul>{unusable}</ul>" if unusable else ""
    if not st.traces:
        none = f"state coverage of the real runs: no trace could be judged ({esc(st.sample)})"
        return note(none) + unusable
    n = len(st.collected.fingerprints)
    judged = (
        f"{st.traces:,} traces judged by the streaming search of {esc(st.judged_by)}; {esc(st.sample)}"
        + (
            f'; <span class="bad">{st.rejected:,} not allowed, their states left out</span>'
            if st.rejected
            else ""
        )
    )
    if comparable(count, runs):
        assert count is not None
        head = (
            f"<p>Spec states matched by real runs: <b>{n:,}</b> (of {count.states:,} reachable at "
            f"<code>{esc(count.config)}</code>, from the explorer); {judged}.</p>"
        )
        return head + unusable
    where = f" at <code>{esc(count.config)}</code>" if count is not None else ""
    kinds = ", ".join(st.collected.constants_kinds())
    return (
        f"<p>Spec states matched by real runs: <b>{n:,}</b>; {judged}.</p>"
        + note(
            f"{STATES_NOT_COMPARABLE} (<code>{esc(kinds)}</code>: processes and sizes as each trace showed "
            f"them), not the explorer's configuration{where}, so no ratio is shown"
        )
        + unusable
    )


def comparable(count: ConfigCount | None, runs: RealRuns) -> bool:
    """May the real runs' states be shown as a share of the explorer's?"""
    return count is not None and count.complete and runs.states.collected.same_constants(count.constants)


def states_summary(count: ConfigCount | None, runs: RealRuns | None) -> str:
    """One cell for the landing page: the states the real runs matched, how many executions were
    judged and under what budget; or why there is no figure (plain text)."""
    if runs is None:
        return "no real runs (no correct harness scenario or no trace format)"
    st = runs.states
    if st.why_not is not None:
        return f"not available: {st.why_not}"
    if not st.traces:
        return "no trace could be judged"
    n = len(st.collected.fingerprints)
    if comparable(count, runs):
        assert count is not None
        figure = f"{n:,} of {count.states:,} states"
    else:
        figure = f"{n:,} states (own binding of the constants: no ratio)"
    rejected = f"; {st.rejected:,} traces not allowed" if st.rejected else ""
    return f"{figure}; {st.sample}{rejected}; runs: {runs.bound}"


def _runs_table(runs: RealRuns, logged: set[str]) -> str:
    rows = []
    for r in runs.runs:
        if r.problem is not None:
            what = f'<span class="bad">not run: {esc(r.problem)}</span>'
        elif not r.traced:
            what = '<span class="muted">its program records no trace (no <code>rt.trace</code> source)</span>'
        else:
            what = esc(", ".join(f"{e} {n:,}" for e, n in sorted(r.events.items())) or "no events")
        failed = f"; {r.failed} failed" if r.failed else ""
        judged = f"; {r.judged:,} judged for states" if r.judged else ""
        rows.append(
            [f"<code>{esc(r.name)}</code>", f"{r.executions:,}{failed}{judged}", f"{r.seconds:.1f}", what]
        )
    extra = sorted(set(runs.seen()) - logged)
    tail = (
        f"<p>Events of the trace format no spec action logs, seen: {esc(', '.join(extra))}.</p>"
        if extra
        else ""
    )
    return (
        "<h3>Real runs by scenario</h3>" + table(["scenario", "executions", "s", "events seen"], rows) + tail
    )


def no_real_runs(has_scenarios: bool, has_format: bool) -> str:
    """Why a design's page shows no real-run coverage."""
    if has_scenarios and has_format:
        return note("real-run coverage: this design has no correct harness scenario")
    missing = [
        what
        for what, there in (("harness scenarios", has_scenarios), ("trace format", has_format))
        if not there
    ]
    return note(
        f"no real-run coverage: this design has no {' and no '.join(missing)}, "
        "so nothing maps its reference's runs to spec actions"
    )


def reached_by_checks(rows: Sequence[VerifyRow], computed: bool) -> str:
    mine = [r for r in rows if r.area in REACHING_AREAS]
    if not mine:
        if not computed:
            return note(
                "harness and link-comparison rows were not computed (report --quick); run without --quick"
            )
        return note("no coverage data: this design has no harness scenarios or link comparisons")
    cells = [[esc(r.area), esc(r.subject), esc(r.figures)] for r in mine]
    return (
        "<p>What the harness (executions, steps of the real reference) and the link comparisons "
        "(spec traces and transitions the reference reproduced) reached:</p>"
        + table(["area", "check", "what it reached"], cells)
    )
