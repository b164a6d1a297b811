"""`lanecheck traces export DIR`: behaviours of the spec as trace files, for ports to replay."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from model_checks.conformance import validate_file
from model_checks.conformance.export import export
from model_checks.registry import design


def register(app: typer.Typer) -> None:
    traces_app = typer.Typer(help="Traces generated from the spec.", no_args_is_help=True)
    app.add_typer(traces_app, name="traces")

    @traces_app.command("export")
    def export_command(
        directory: Annotated[Path, typer.Argument(metavar="DIR", help="where to write the .jsonl files")],
        config: Annotated[str, typer.Option("--config", "-c", help="small | standard | large")] = "small",
        design_name: Annotated[str, typer.Option("--design")] = "work-lane",
    ) -> None:
        """Write complete behaviours that together fire every labelled action with "
        "every event-field combination."""
        err = Console(stderr=True)
        try:
            d = design(design_name)
            constants = d.config(config)
        except KeyError as problem:
            err.print(f"[red]error:[/red] {problem.args[0]}")
            raise typer.Exit(2) from None
        written = export(directory, d.spec, constants, name=f"{design_name}-{config}")
        for path in written:
            verdict = validate_file(path)
            if verdict.code != 0:  # never expected: the spec's own behaviours
                err.print(f"[red]error:[/red] exported {path} does not validate: {verdict.message}")
                raise typer.Exit(1)
        Console().print(f"wrote {len(written)} traces to {directory} (each validates)")
