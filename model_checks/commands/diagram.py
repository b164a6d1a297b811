"""`lanecheck diagram DESIGN`: Mermaid state diagrams derived from the spec's reachable states."""

from __future__ import annotations

from typing import Annotated

import typer

from model_checks.commands import CommandError
from model_checks.explorer.diagram import mermaid_state_diagram, projected_edges
from model_checks.registry import design


def diagram_text(design_name: str, component: str | None, config: str = "small") -> str:
    """``component`` None: the design's first projection (each design names its own parts)."""
    d = design(design_name)
    if not d.projections:
        raise KeyError(
            f"{design_name} declares no projections (Design.projections), so it has no component to draw"
        )
    if component is None:
        component = next(iter(d.projections))
    if component not in d.projections:
        raise KeyError(f"{design_name} has no component {component!r}; known: {', '.join(d.projections)}")
    initial, edges = projected_edges(d.spec, d.config(config), d.projections[component])
    return mermaid_state_diagram(initial, edges, f"{design_name}: {component} ({config})")


def register(app: typer.Typer) -> None:
    @app.command("diagram")
    def diagram_command(
        design_name: Annotated[str, typer.Argument(metavar="DESIGN")],
        component: Annotated[
            str | None,
            typer.Option(help="which part (the design's Design.projections) [default: its first]"),
        ] = None,
        config: Annotated[str, typer.Option("--config", "-c")] = "small",
    ) -> None:
        """Print the state machine of one component, as the spec allows it (Mermaid)."""
        try:
            text = diagram_text(design_name, component, config)
        except KeyError as problem:
            raise CommandError(str(problem.args[0])) from None
        typer.echo(text, nl=False)
