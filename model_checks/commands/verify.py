"""`lanecheck verify`: the main job — every check at its standard configuration, one verdict table."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from model_checks.commands import CommandError
from model_checks.registry import designs as registered_designs
from model_checks.verify import VerifyRow, plan, units

MAX_JOBS = 256


def collect(
    quick: bool,
    areas: list[str] | None,
    console: Console | None,
    designs: list[str] | None = None,
    *,
    jobs: int = 1,
    certificate: Path | None = None,
    fresh: bool = False,
) -> list[VerifyRow]:
    """The rows, in plan order; ``jobs`` worker processes; reused from / written to ``certificate``."""
    from model_checks.certificate.run import verify

    todo = units(areas, designs)
    command: dict[str, Any] = {"quick": quick, "areas": areas, "designs": designs}
    if console is None:
        return verify(todo, quick, jobs, certificate, fresh, command)
    with console.status(f"verify: {len(todo)} units, {min(jobs, len(todo) or 1)} at a time ..."):
        return verify(todo, quick, jobs, certificate, fresh, command, console.log)


def table(rows: list[VerifyRow]) -> Table:
    t = Table(title="lanecheck verify")
    for column in ("area", "subject", "expected", "actual", "ok", "figures", "s"):
        t.add_column(column)
    for r in rows:
        reused = f" [dim](reused from certificate {r.reused_from})[/dim]" if r.reused_from else ""
        t.add_row(
            r.area,
            r.subject,
            r.expected,
            r.actual,
            "[green]yes[/green]" if r.ok else "[red]NO[/red]",
            r.figures + reused,
            f"{r.seconds:.1f}",
        )
    return t


def write_report(out: Path, design_names: list[str] | None, rows: list[VerifyRow]) -> None:
    from model_checks.report import write_site  # another command's package: only when asked for

    write_site(out=out, design_names=design_names, rows=rows)


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
        jobs: Annotated[
            int | None,
            typer.Option(
                min=1,
                max=MAX_JOBS,
                help="worker processes running independent rows (1..256; default: every core); "
                "1 runs them one after another in this process",
            ),
        ] = None,
        certificate: Annotated[
            Path | None,
            typer.Option(
                dir_okay=False,
                help="write a certificate of the run here (code hashes, configuration, counts, verdicts, "
                "tool versions); when it exists, rows whose code is unchanged are reused from it",
            ),
        ] = None,
        fresh: Annotated[bool, typer.Option(help="with --certificate: run every row, reuse nothing")] = False,
        report: Annotated[
            Path | None,
            typer.Option(file_okay=False, help="also write the design-review site of these rows to DIR"),
        ] = None,
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
        if fresh and certificate is None:
            raise CommandError(
                "--fresh re-runs the rows a certificate would give: it needs --certificate", "--fresh"
            )
        if certificate is not None and certificate.exists() and not fresh:
            from model_checks.certificate.document import read

            try:
                read(certificate)
            except ValueError as problem:
                raise CommandError(f"{problem}; --fresh writes a new one over it", "--certificate") from None
        rows = collect(
            quick,
            area,
            None if json_out else err,
            design,
            jobs=jobs if jobs is not None else os.cpu_count() or 1,
            certificate=certificate,
            fresh=fresh,
        )
        if report is not None:
            write_report(report, design, rows)
        failed = [r for r in rows if not r.ok]
        if json_out:
            sys.stdout.write(
                json.dumps({"ok": not failed, "rows": [r.as_json() for r in rows]}, indent=2) + "\n"
            )
        else:
            Console().print(table(rows))
            reused = sum(1 for r in rows if r.reused_from)
            if reused:
                Console().print(
                    f"{reused} of {len(rows)} rows reused from {certificate} (their code unchanged)"
                )
            if failed:
                missed = f"{len(failed)} of {len(rows)} checks did not get their expected verdict"
                Console().print(f"[bold red]{missed}[/bold red]")
            else:
                Console().print(f"[bold green]all {len(rows)} checks got their expected verdict[/bold green]")
        if not rows:
            raise typer.Exit(2)
        incomplete = [r for r in failed if r.actual in ("incomplete", "bounded")]
        raise typer.Exit(0 if not failed else (3 if len(incomplete) == len(failed) else 1))
