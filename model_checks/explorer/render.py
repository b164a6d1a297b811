"""How check results look: a rich summary and step table, a Mermaid sequence diagram, JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from model_checks.explorer.check import CheckResult
from model_checks.explorer.counterexample import Counterexample
from spec.language import plain

VERDICT_STYLE = {"holds": "bold green", "violated": "bold red", "incomplete": "bold yellow"}


def _fmt(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_fmt(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return str(value)


def constants_json(constants: Any) -> Any:
    if is_dataclass(constants) and not isinstance(constants, type):
        return plain(asdict(constants))
    return repr(constants)


def summary(result: CheckResult) -> Group:
    title = result.spec + (f" --variant {result.variant}" if result.variant else "") + f" [{result.config}]"
    stats = result.stats
    table = Table(title=title, show_header=False, box=None)
    table.add_row("verdict", Text(result.verdict.upper(), style=VERDICT_STYLE[result.verdict]))
    if result.violation is not None:
        table.add_row("violated", f"{result.violation.name} ({result.violation.kind})")
        table.add_row("reason", escape(result.violation.reason))
    if result.incomplete_reason:
        table.add_row("bound", result.incomplete_reason + " — NOT a pass")
    table.add_row("distinct states", f"{stats.states:,}")
    table.add_row("transitions", f"{stats.transitions:,}")
    table.add_row("depth", str(stats.depth))
    table.add_row("time", f"{stats.seconds:.2f} s ({stats.states_per_second:,.0f} states/s)")
    table.add_row("checked", ", ".join(result.properties_checked))
    table.add_row("symmetry", "on (liveness not checked)" if result.symmetry else "off")
    if result.workers > 1:
        table.add_row("processes", str(result.workers))
    cov = ", ".join(f"{name} {n:,}" for name, n in stats.coverage.items())
    table.add_row("action coverage", cov)
    parts: list[Any] = [table]
    for note in result.notes:
        parts.append(Text("note: " + note, style="yellow"))
    if result.verdict == "holds" and not result.counterexample:
        parts.append(
            Text(
                f"all {len(result.properties_checked)} properties hold in every reachable state",
                style="green",
            )
        )
    if result.counterexample is not None:
        parts.append(step_table(result.counterexample))
    return Group(*parts)


def step_table(cx: Counterexample) -> Table:
    table = Table(title=f"counterexample: {cx.length} steps, {cx.context_switches} context switches")
    table.add_column("#", justify="right")
    table.add_column("process")
    table.add_column("action")
    table.add_column("event")
    table.add_column("changed")
    for i, step in enumerate(cx.steps):
        marker = "↻ " if cx.loop_start is not None and i == cx.loop_start else ""
        event = ""
        if step.event is not None:
            event = step.event + " " + " ".join(f"{k}={_fmt(v)}" for k, v in (step.fields or {}).items())
        args = f"({', '.join(map(str, step.args))})" if step.args else ""
        changed = "; ".join(f"{k}: {_fmt(b)} → {_fmt(a)}" for k, (b, a) in step.changes.items())
        table.add_row(
            f"{marker}{step.number}",
            str(step.process),
            escape(step.action + args),
            escape(event),
            escape(changed),
        )
    if cx.stutter:
        table.add_row("", "", "(stutters forever)", "", "no fair process can move")
    elif cx.loop_start is not None:
        table.add_row("", "", f"(back to step {cx.loop_start + 1}, forever)", "", "")
    return table


def mermaid(result: CheckResult) -> str:
    """A Mermaid sequence diagram of the counterexample: one lifeline per process, one for the lanes."""
    cx = result.counterexample
    if cx is None:
        return ""
    processes = sorted({str(s.process) for s in cx.steps})
    lines = ["sequenceDiagram", "    participant S as scheduler state"]
    lines += [f"    participant {p}" for p in processes]
    for i, step in enumerate(cx.steps):
        if cx.loop_start is not None and i == cx.loop_start:
            lines.append("    loop forever (fair)")
        label = step.action
        if step.event is not None:
            fields = ", ".join(f"{k}={_fmt(v)}" for k, v in (step.fields or {}).items())
            label += f": {step.event}({fields})"
        arrow = "->>" if step.event is not None else "-)"
        lines.append(f"    {step.process}{arrow}S: {step.number}. {_mermaid_escape(label)}")
    if cx.loop_start is not None:
        lines.append("    end")
    if result.violation is not None:
        lines.append(
            f"    Note over S: {result.violation.name} violated: {_mermaid_escape(result.violation.reason)}"
        )
    return "\n".join(lines) + "\n"


def _mermaid_escape(text: str) -> str:
    return text.replace(";", ",").replace("#", "no.").replace("\n", " ")


def as_json(result: CheckResult) -> dict[str, Any]:
    stats = result.stats
    out: dict[str, Any] = {
        "spec": result.spec,
        "variant": result.variant,
        "config": result.config,
        "constants": constants_json(result.constants),
        "verdict": result.verdict,
        "exit_code": result.exit_code,
        "states": stats.states,
        "transitions": stats.transitions,
        "depth": stats.depth,
        "seconds": round(stats.seconds, 3),
        "states_per_second": round(stats.states_per_second, 1),
        "processes": result.workers,
        "coverage": stats.coverage,
        "unfired_actions": stats.unfired(),
        "checked": result.properties_checked,
        "incomplete_reason": result.incomplete_reason,
        "notes": result.notes,
        "violation": None,
    }
    if result.violation is not None and result.counterexample is not None:
        cx = result.counterexample
        out["violation"] = {
            "kind": result.violation.kind,
            "property": result.violation.name,
            "reason": result.violation.reason,
            "length": cx.length,
            "context_switches": cx.context_switches,
            "loop_start": cx.loop_start,
            "stutter": cx.stutter,
            "steps": [s.as_json() for s in cx.steps],
        }
    return out


def print_result(result: CheckResult, console: Console | None = None) -> None:
    (console or Console()).print(summary(result))


def dumps(result: CheckResult) -> str:
    return json.dumps(as_json(result), indent=2, default=str)
