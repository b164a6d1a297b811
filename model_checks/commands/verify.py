"""`lanecheck verify`: the main job — every check at its standard configuration, one verdict table."""

from __future__ import annotations

import json
import sys
import time
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from model_checks.verify import PROVIDERS, VerifyRow, load_provider


def collect(quick: bool, areas: list[str] | None, console: Console | None) -> list[VerifyRow]:
    rows: list[VerifyRow] = []
    for area, target in PROVIDERS:
        if areas and area not in areas:
            continue
        started = time.perf_counter()
        if console is not None:
            with console.status(f"verify: {area} ..."):
                rows.extend(load_provider(target)(quick))
        else:
            rows.extend(load_provider(target)(quick))
        if console is not None:
            console.log(f"{area}: done in {time.perf_counter() - started:.1f} s")
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
        json_out: Annotated[bool, typer.Option("--json", help="print the rows as JSON")] = False,
    ) -> None:
        """Check every spec at its standard configuration, every mutant, the harness and conformance."""
        err = Console(stderr=True)
        rows = collect(quick, area, None if json_out else err)
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
