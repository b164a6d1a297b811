"""`lanecheck validate TRACE`: does some behaviour of the spec produce this trace?"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from model_checks.commands import CommandError
from model_checks.conformance import ENGINES, Verdict, validate_file, validate_stream
from model_checks.conformance.reader import clip, limits_text, printable

# Text output is for people: a value longer than this is cut (``--json`` keeps it whole).
SHOWN_CHARS = 400
MESSAGE_CHARS = 2_000


def _text(value: str, limit: int) -> str:
    """Safe to print: cut to ``limit``, lone surrogates escaped, Rich markup taken literally."""
    return escape(printable(clip(value, limit)))


def _plain(value: str, limit: int) -> str:
    """Safe to print without Rich: cut to ``limit``, lone surrogates escaped."""
    return printable(clip(value, limit))


def render(verdict: Verdict, console: Console) -> None:
    message = _text(verdict.message, MESSAGE_CHARS)
    if verdict.code == 0:
        console.print(f"[green]ALLOWED[/green] {message}", highlight=False, soft_wrap=True)
    elif verdict.code == 1:
        console.print(f"[red]NOT ALLOWED[/red] {message}", highlight=False, soft_wrap=True)
        if verdict.rule is not None:
            console.print(
                f"  rule {verdict.rule}: {_text(verdict.rule_text() or '', MESSAGE_CHARS)}",
                highlight=False,
                soft_wrap=True,
            )
    else:
        console.print(f"[red]MALFORMED[/red] {message}", highlight=False, soft_wrap=True)
    if verdict.last_states:
        title = "states the spec could be in" + (" before that event" if verdict.code == 1 else "")
        console.print(f"  {title}:", highlight=False, soft_wrap=True)
        for n, state in enumerate(verdict.last_states, start=1):
            console.print(f"   #{n}", highlight=False, soft_wrap=True)
            for k, v in state.items():
                shown = _text(json.dumps(v, ensure_ascii=False), SHOWN_CHARS)
                console.print(f"     {_text(str(k), SHOWN_CHARS)}: {shown}", highlight=False, soft_wrap=True)


def _json(verdict: Verdict) -> str:
    doc: dict[str, Any] = verdict.as_json()
    # ensure_ascii escapes every non-ASCII character, a lone surrogate included: any stdout takes it.
    return json.dumps(doc, ensure_ascii=True)


HELP = (
    "Exit 0 allowed (or an allowed prefix), 1 not allowed, 2 not a well-formed trace (the line is named)."
    f" Limits (docs/trace-format.md): {limits_text()}."
)


def register(app: typer.Typer) -> None:
    @app.command("validate", help=HELP)
    def validate_command(
        trace: Annotated[
            Path,
            typer.Argument(
                metavar="TRACE", help="a JSON Lines trace (docs/trace-format.md); - reads it from stdin"
            ),
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
        # Usage errors are CommandError: one line on stderr, or a JSON object on stdout with --json.
        if engine not in ENGINES:
            raise CommandError(
                f"unknown engine {_plain(engine, 80)}; known: {', '.join(ENGINES)}", "--engine"
            )
        from_stdin = str(trace) == "-"
        if not from_stdin and not trace.is_file():
            what = "not a file" if trace.exists() else "no such file"
            raise CommandError(f"{what}: {_plain(str(trace), 400)}")
        try:
            if from_stdin:
                verdict = validate_stream(sys.stdin.buffer, engine=engine, complete=complete)
            else:
                verdict = validate_file(trace, engine=engine, complete=complete)
        except ValueError as problem:
            raise CommandError(_plain(str(problem), MESSAGE_CHARS)) from None
        except OSError as problem:
            why = _plain(problem.strerror or str(problem), 200)
            raise CommandError(f"cannot read {_plain(str(trace), 400)}: {why}") from None
        if json_out:
            sys.stdout.write(_json(verdict) + "\n")
        else:
            render(verdict, Console(width=200))
        raise typer.Exit(verdict.code)
