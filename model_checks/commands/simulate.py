"""`lanecheck simulate DESIGN ...`: the step simulators some designs bring.

A design adds its simulator from one of its ``Design.commands`` entries by calling
``add_simulator(app, design_name, command)``; the command becomes ``lanecheck simulate
<design_name>`` with options of its own. ``register(app)`` adds the (possibly empty) group, so
that ``lanecheck simulate`` exists and lists the simulators even when no design has one. A name
that is not a simulator is refused with exit 2, saying whether the design exists without one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperGroup

from model_checks import registry
from model_checks.commands import CommandError


class SimulatorGroup(TyperGroup):
    """Resolves the design name, refusing unknown ones with a message listing the simulators."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:  # typer vendors click's types
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            have = ", ".join(sorted(self.commands)) or "none"
            if name in registry.designs():
                raise CommandError(f"design {name!r} has no simulator; designs with one: {have}")
            raise CommandError(f"unknown design {name[:60]!r}; designs with a simulator: {have}")
        return super().resolve_command(ctx, args)


simulate_app = typer.Typer(
    cls=SimulatorGroup,
    help="Step simulators of the designs: `lanecheck simulate DESIGN --help` for one's options.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    """Add ``lanecheck simulate`` to ``app`` (once)."""
    if not any(group.typer_instance is simulate_app for group in app.registered_groups):
        app.add_typer(simulate_app, name="simulate")


def add_simulator(app: typer.Typer, design: str, command: Callable[..., Any], help: str) -> None:
    """``lanecheck simulate <design>`` runs ``command`` (a typer command function)."""
    register(app)
    if any(c.name == design for c in simulate_app.registered_commands):
        return  # already added (a second app built in the same process, e.g. by tests)
    simulate_app.command(design, help=help)(command)
