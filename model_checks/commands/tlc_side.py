"""`lanecheck check DESIGN --tlc`: run TLC on the TLA+ twin and show both checkers side by side."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from model_checks.explorer.check import CheckResult
from model_checks.tlc import jar
from model_checks.tlc.run import TlcError, TlcResult, run
from model_checks.tlc.twin import TlaTwin, twin_of


def _ours(result: CheckResult) -> dict[str, Any]:
    cx = result.counterexample
    return {
        "states": result.stats.transitions,
        "distinct_states": result.stats.states,
        "depth": result.stats.depth,
        "verdict": result.verdict,
        "violated": result.violation.name if result.violation is not None else None,
        "counterexample_length": cx.length if cx is not None else None,
        "seconds": round(result.stats.seconds, 3),
    }


def _theirs(tlc: TlcResult) -> dict[str, Any]:
    return {
        "states": tlc.states_generated,
        "distinct_states": tlc.distinct_states,
        "depth": tlc.depth,
        "verdict": tlc.verdict,
        "violated": tlc.violated,
        "counterexample_length": tlc.trace_length,
        "seconds": round(tlc.seconds, 3),
        "tlc_seconds": tlc.tlc_seconds,
        "max_rss_bytes": tlc.max_rss_bytes,
        "workers": tlc.workers,
        "model": f"{tlc.model}.tla",
        "cfg": tlc.cfg,
    }


def _liveness_checked(twin: TlaTwin, result: CheckResult) -> bool:
    """Whether TLC should check the properties: when the explorer did (never under symmetry).

    The explorer reports a safety violation before it looks at liveness, and TLC
    (which checks liveness only at the end of the search) does too.
    """
    if result.symmetry:
        return False
    properties = {p.name for p in twin.spec_of(result.variant)[0].properties}
    return bool(properties & set(result.properties_checked)) or result.verdict == "violated"


def print_tlc_side_by_side(
    design_name: str,
    config: str,
    variant: str | None,
    result: CheckResult,
    json_out: bool,
    *,
    workers: int = 1,
    console: Console | None = None,
) -> dict[str, Any]:
    """Run TLC on the twin of what ``result`` checked and compare; print a table unless ``json_out``.

    Returns ``{"explorer": {...}, "tlc": {...}, "agree": {...}}`` (``"tlc"`` is ``None`` and
    ``"skipped"`` says why when TLC cannot run). TLC checks the same constants, symmetry,
    deadlock and (without symmetry) liveness as the explorer did. "states" is the
    explorer's transitions and TLC's states generated, which counts one stuttering step
    per reachable Done state (so it is a little larger); the distinct states must be equal.
    """
    twin = twin_of(design_name)
    mine = _ours(result)
    out: dict[str, Any] = {"design": design_name, "config": config, "variant": variant, "explorer": mine}
    reason = jar.unavailable()
    tlc: TlcResult | None = None
    if reason is None:
        try:
            tlc = run(
                twin,
                config,
                variant,
                symmetry=result.symmetry,
                liveness=_liveness_checked(twin, result),
                deadlock="Deadlock" in result.properties_checked,
                workers=workers,
                constants=result.constants,
            )
        except TlcError as problem:
            reason = str(problem)
    if tlc is None:
        out["tlc"], out["skipped"], out["agree"] = None, reason, None
    else:
        theirs = _theirs(tlc)
        out["tlc"] = theirs
        compared: tuple[str, ...] = ("verdict", "violated", "counterexample_length")
        if result.verdict != "violated":  # at a violation TLC stops at once; the explorer finishes the layer
            compared = ("distinct_states", "depth", *compared)
        out["agree"] = {key: mine[key] == theirs[key] for key in compared}
    if not json_out:
        _print(out, console or Console())
    return out


def _print(out: dict[str, Any], console: Console) -> None:
    title = f"{out['design']} [{out['config']}]" + (f" variant {out['variant']}" if out["variant"] else "")
    if out["tlc"] is None:
        console.print(f"[yellow]TLC not run[/yellow] for {title}: {out['skipped']}")
        return
    mine, theirs, agree = out["explorer"], out["tlc"], out["agree"]
    table = Table(title=escape(f"explorer vs TLC — {title}"))
    table.add_column("")
    table.add_column("lanecheck explorer", justify="right")
    plural = "s" if theirs["workers"] > 1 else ""
    table.add_column(f"TLC ({theirs['workers']} worker{plural})", justify="right")
    table.add_column("")
    rows = [
        ("states (transitions / generated)", "states"),
        ("distinct states", "distinct_states"),
        ("depth", "depth"),
        ("verdict", "verdict"),
        ("violated property", "violated"),
        ("counterexample length", "counterexample_length"),
        ("time (s; TLC's includes the JVM)", "seconds"),
    ]
    for label, key in rows:
        mark = ""
        if key in agree:
            mark = "[green]=[/green]" if agree[key] else "[red]≠[/red]"
        table.add_row(label, _show(mine[key]), _show(theirs[key]), mark)
    console.print(table)
    console.print(
        escape(f"TLC model {theirs['model']} with {theirs['cfg']}, generated from the Python configuration")
        + " (the small and standard ones are committed in spec/tla/)"
    )
    if not all(agree.values()):
        console.print("[red]the checkers disagree: a bug in the spec, its twin, or a checker[/red]")


def _show(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)
