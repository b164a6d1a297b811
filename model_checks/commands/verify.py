"""`lanecheck verify`: the main job — every check at its standard configuration, one verdict table."""

from __future__ import annotations

import json
import sys
import time
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from model_checks.commands import CommandError
from model_checks.registry import designs as registered_designs
from model_checks.verify import VerifyRow, plan


def collect(
    quick: bool, areas: list[str] | None, console: Console | None, designs: list[str] | None = None
) -> list[VerifyRow]:
    rows: list[VerifyRow] = []
    for step in plan(areas, designs):
        started = time.perf_counter()
        label = f"{step.area} ({step.covers})"
        if console is not None:
            with console.status(f"verify: {label} ..."):
                rows.extend(step.run(quick))
            console.log(f"{label}: done in {time.perf_counter() - started:.1f} s")
        else:
            rows.extend(step.run(quick))
    return rows


def table(rows: list[VerifyRow]) -> Table:
    t = Table(title="lanecheck verify")
    for column in ("area", "subject", "expected", "actual", "ok", "figures", "s"):
        t.add_column(column)
    for r in rows:
        t.add_row(
            r.area,
            r.subject,
            r.expected,
            r.actual,
            "[green]yes[/green]" if r.ok else "[red]NO[/red]",
            r.figures,
            f"{r.seconds:.1f}",
        )
    return t


def register(app: typer.Typer) -> None:
    @app.command("verify")
    def verify_command(
        quick: Annotated[bool, typer.Option(help="small configurations only (seconds, not minutes)")] = False,
        area: Annotated[list[str] | None, typer.Option(help="only these areas (repeatable)")] = None,
        design: Annotated[
            list[str] | None,
            typer.Option(
                "--design",
                help="only this design's rows (repeatable); the harness's own programs are left out",
            ),
        ] = None,
        json_out: Annotated[bool, typer.Option("--json", help="print the rows as JSON")] = False,
    ) -> None:
        """Check every spec at its standard configuration, every mutant, the harness and conformance."""
        err = Console(stderr=True)
        names = list(registered_designs())
        unknown = [d for d in design or [] if d not in names]
        if unknown:
            shown = ", ".join(repr(d[:40]) for d in unknown[:5])
            raise CommandError(f"no design {shown}; the designs are: {', '.join(names)}", "--design")
        known = list(dict.fromkeys(step.area for step in plan()))
        unknown = [a for a in area or [] if a not in known]
        if unknown:
            shown = ", ".join(repr(a[:40]) for a in unknown[:5])
            raise CommandError(f"no area {shown}; the areas are: {', '.join(known)}", "--area")
        rows = collect(quick, area, None if json_out else err, design)
        failed = [r for r in rows if not r.ok]
        if json_out:
            sys.stdout.write(
                json.dumps({"ok": not failed, "rows": [r.as_json() for r in rows]}, indent=2) + "\n"
            )
        else:
            Console().print(table(rows))
            if failed:
                missed = f"{len(failed)} of {len(rows)} checks did not get their expected verdict"
                Console().print(f"[bold red]{missed}[/bold red]")
            else:
                Console().print(f"[bold green]all {len(rows)} checks got their expected verdict[/bold green]")
        if not rows:
            raise typer.Exit(2)
        incomplete = [r for r in failed if r.actual in ("incomplete", "bounded")]
        raise typer.Exit(0 if not failed else (3 if len(incomplete) == len(failed) else 1))
