"""`lanecheck traces export DIR`: behaviours of the spec as trace files, for ports to replay."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from model_checks.commands import CommandError
from model_checks.conformance.export import ExportError, export
from model_checks.conformance.trace_schema import SchemaUnreadable
from model_checks.conformance.validator import default_design
from model_checks.design import load
from model_checks.registry import design, designs


def target_directory(text: str, force: bool) -> Path:
    """The directory to export into, refused (``CommandError``) before any work when it cannot be:
    an empty name, a file, a path under a file, a place this user cannot write, or a directory
    that already holds files (unless ``force``)."""
    if text.strip() == "":
        raise CommandError("an empty name is no directory (use . for the current one)", "DIR")
    directory = Path(text)
    if directory.exists() and not directory.is_dir():
        raise CommandError(f"{directory} is a file, not a directory", "DIR")
    existing = directory
    while not existing.exists():  # the nearest ancestor that exists is where the export starts
        if existing.parent == existing:
            break
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise CommandError(f"{existing} is a file: there can be no directory under it", "DIR")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise CommandError(f"cannot write in {existing}: permission denied", "DIR")
    if directory.is_dir() and any(directory.iterdir()) and not force:
        raise CommandError(
            f"{directory} is not empty: give an empty or new directory, or --force to replace "
            "this export's earlier files there",
            "DIR",
        )
    return directory


def register(app: typer.Typer) -> None:
    traces_app = typer.Typer(help="Traces generated from the spec.", no_args_is_help=True)
    app.add_typer(traces_app, name="traces")

    @traces_app.command("export")
    def export_command(
        directory: Annotated[
            str, typer.Argument(metavar="DIR", help="a new or empty directory for the .jsonl files")
        ],
        config: Annotated[str, typer.Option("--config", "-c", help="small | standard | large")] = "small",
        design_name: Annotated[
            str | None,
            typer.Option("--design", help="a design with a trace format (default: the first registered)"),
        ] = None,
        force: Annotated[
            bool,
            typer.Option(
                "--force",
                help="export into a directory that is not empty: files of the same export "
                "(<design>-<config>-NNN.jsonl) are replaced, other files are left alone",
            ),
        ] = False,
    ) -> None:
        """Write complete behaviours that together fire every labelled action with every
        event-field combination, each in the design's trace format and each validated first:
        either every file is written or none is."""
        design_name = design_name if design_name is not None else default_design()
        try:
            d = design(design_name)
            constants = d.config(config)
        except KeyError as problem:
            raise CommandError(str(problem.args[0])) from None
        if d.trace_format is None:  # its spec runs, but nothing could read what would be written
            having = ", ".join(name for name, other in designs().items() if other.trace_format is not None)
            raise CommandError(f"{d.name} has no trace format yet; designs with one: {having}", "--design")
        if d.exporter is None and not callable(getattr(constants, "header", None)):
            # The generic export copies the spec's labelled events under a header built from the
            # constants; a design whose constants cannot say what its trace header holds needs an
            # exporter of its own (``Design.exporter``), and has none yet.
            raise CommandError(
                f"{d.name}: its spec's configuration gives no trace header (no Constants.header()) "
                "and the design has no exporter of its own, so its traces cannot be exported yet",
                "--design",
            )
        target = target_directory(directory, force)
        try:
            name = f"{design_name}-{config}"
            if d.exporter is not None:
                written = load(d.exporter)(target, constants, name, replace=force)
            else:
                written = export(target, d.spec, constants, name=name, design=d.name, replace=force)
        except SchemaUnreadable as problem:  # the design's own file, not the directory
            raise CommandError(str(problem), "--design") from None
        except OSError as problem:  # a place that refuses files despite its permissions (/proc, a full disk)
            raise CommandError(f"cannot write in {target}: {problem.strerror or problem}", "DIR") from None
        except ExportError as problem:
            Console(stderr=True).print(f"[red]error:[/red] {problem}", highlight=False)
            raise typer.Exit(1) from None
        Console().print(f"wrote {len(written)} {d.name} traces to {target} (each validates)", highlight=False)
