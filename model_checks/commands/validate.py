"""`lanecheck validate TRACE`: does some behaviour of the spec produce this trace?"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from model_checks.conformance import ENGINES, Verdict, validate_file


def render(verdict: Verdict, console: Console) -> None:
    if verdict.code == 0:
        console.print(f"[green]ALLOWED[/green] {verdict.message}", highlight=False)
    elif verdict.code == 1:
        console.print(f"[red]NOT ALLOWED[/red] {verdict.message}", highlight=False)
        if verdict.rule is not None:
            console.print(f"  rule {verdict.rule}: {verdict.rule_text()}", highlight=False)
    else:
        console.print(f"[red]MALFORMED[/red] {verdict.message}", highlight=False)
    if verdict.last_states:
        title = "states the spec could be in" + (" before that event" if verdict.code == 1 else "")
        console.print(f"  {title}:", highlight=False)
        for n, state in enumerate(verdict.last_states, start=1):
            console.print(f"   #{n}", highlight=False)
            for k, v in state.items():
                console.print(f"     {k}: {json.dumps(v, ensure_ascii=False)}", highlight=False)


def register(app: typer.Typer) -> None:
    @app.command("validate")
    def validate_command(
        trace: Annotated[
            Path, typer.Argument(metavar="TRACE", help="a JSON Lines trace (docs/trace-format.md)")
        ],
        json_out: Annotated[bool, typer.Option("--json", help="print the verdict as JSON")] = False,
        engine: Annotated[
            str, typer.Option(help=f"one of: {', '.join(ENGINES)} (spec: the generic search)")
        ] = "fast",
        complete: Annotated[
            bool,
            typer.Option(
                "--complete",
                help="the run that wrote the trace is over: judge it as a complete behaviour, not a prefix"
                " (schedule-gate, akka-mailbox; work-lane traces show this with stop_end)",
            ),
        ] = False,
    ) -> None:
        """Exit 0 allowed (or an allowed prefix), 1 not allowed, 2 not a well-formed trace."""
        if engine not in ENGINES:
            Console(stderr=True).print(
                f"[red]error:[/red] unknown engine {engine!r}; known: {', '.join(ENGINES)}"
            )
            raise typer.Exit(2)
        if not trace.is_file():
            Console(stderr=True).print(f"[red]error:[/red] no such file: {trace}")
            raise typer.Exit(2)
        try:
            verdict = validate_file(trace, engine=engine, complete=complete)
        except ValueError as problem:
            Console(stderr=True).print(f"[red]error:[/red] {problem}")
            raise typer.Exit(2) from None
        if json_out:
            sys.stdout.write(json.dumps(verdict.as_json(), ensure_ascii=False) + "\n")
        else:
            render(verdict, Console(width=200))
        raise typer.Exit(verdict.code)
