"""`lanecheck report`: the static design-review site (``model_checks.report``).

Exit codes: 0 written, 2 usage (an unknown design, an --out that cannot be written, a --rows
file that is not `lanecheck verify --json` output).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from model_checks.commands import CommandError
from model_checks.registry import designs as registered_designs
from model_checks.report import graphs
from model_checks.report import rows as verify_rows
from model_checks.report.site import write_site


def check_out(out: Path) -> None:
    """Refuse, before any work, a folder the site could not be written to."""
    if str(out) == "":
        raise CommandError("an empty path names no folder", "--out")
    if out.exists() and not out.is_dir():
        raise CommandError(f"{out} is a file, not a folder", "--out")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as problem:
        raise CommandError(f"cannot create {out}: {problem.strerror or problem}", "--out") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise CommandError(f"cannot write to {out}: permission denied", "--out")
    from model_checks.report.ownership import OutFolderError, previous_files

    try:
        previous_files(out)  # a folder holding files of someone else's is refused before any work
    except OutFolderError as problem:
        raise CommandError(str(problem), "--out") from None


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_command(
        design: Annotated[
            list[str] | None,
            typer.Option("--design", help="only this design (repeatable); default every registered design"),
        ] = None,
        out: Annotated[Path, typer.Option("--out", help="the folder to write the site into")] = Path(
            "lanecheck-report"
        ),
        quick: Annotated[
            bool,
            typer.Option(
                help="tighter time caps, and only the explorer's verify rows (seconds, not minutes)"
            ),
        ] = False,
        rows_file: Annotated[
            Path | None,
            typer.Option("--rows", help="show the rows of this `lanecheck verify --json` output instead"),
        ] = None,
    ) -> None:
        """Write the design-review site: specs, state graphs, verdicts, counterexamples as sequence diagrams.

        Works from the file system, offline. Stable links: DESIGN/index.html and
        DESIGN/mutants/NAME.html#step-K.
        """
        names = list(registered_designs())
        unknown = [d for d in design or [] if d not in names]
        if unknown:
            shown = ", ".join(repr(d[:40]) for d in unknown[:5])
            raise CommandError(f"no design {shown}; the designs are: {', '.join(names)}", "--design")
        rows = None
        if rows_file is not None:
            try:
                rows = verify_rows.read(rows_file)
            except (OSError, ValueError) as problem:
                text = problem.strerror if isinstance(problem, OSError) and problem.strerror else str(problem)
                raise CommandError(
                    f"{rows_file}: {text}" if isinstance(problem, OSError) else text, "--rows"
                ) from None
        check_out(out)
        err = Console(stderr=True)
        if not graphs.dot_available():
            err.print(f"[yellow]{graphs.DOT_MISSING}[/yellow]")
        with err.status("report ...") as status:
            index = write_site(
                out, design, rows, quick=quick, log=lambda message: status.update(f"report: {message}")
            )
        typer.echo(f"site written: {index}")
