"""Checks of ``lanecheck`` command results that several command test modules share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer


def refused(result: Any, *words: str) -> None:
    """Exit 2, no traceback, and the message names each of ``words``."""
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    for word in words:
        assert word in result.output, (word, result.output)


def bad_option(command_line: str) -> tuple[list[str], str]:
    """A bad-argument row written as one command line: its words, and the option it gets wrong,
    which is its last option (the earlier ones are context, like ``--automaton``)."""
    words = command_line.split()
    options = [word for word in words if word.startswith("--")]
    if not options:
        raise ValueError(f"bad-argument row {command_line!r} names no option")
    return words, options[-1]


def command_app(*registers: Callable[[typer.Typer], None]) -> typer.Typer:
    """A ``typer`` app with these command modules' ``register`` applied, as a group: each command
    is a subcommand named as in ``lanecheck`` (a lone command would otherwise be the app itself)."""
    app = typer.Typer()

    @app.callback()
    def _group() -> None:
        return None

    for register in registers:
        register(app)
    return app
