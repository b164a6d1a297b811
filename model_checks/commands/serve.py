"""`lanecheck serve [DESIGN]`: the live state explorer (``model_checks.serve``) on a local port."""

from __future__ import annotations

import threading
import webbrowser
from typing import Annotated

import typer

from model_checks.commands import CommandError
from model_checks.registry import DESIGNS

MAX_PORT = 65535


def start_page(design_name: str | None, config: str | None, mutant: str | None) -> str:
    """The path the browser opens; ``CommandError`` names an unknown design, configuration or
    mutant (checked here, before a port is taken) or one the spec's assumptions refuse."""
    from model_checks.serve.pages import location
    from model_checks.serve.subject import NotFound, default_config, subject
    from spec.language import SpecError

    if design_name is None:
        for given, option in ((config, "--config"), (mutant, "--mutant")):
            if given is not None:
                raise CommandError("names nothing without a DESIGN (lanecheck serve DESIGN ...)", option)
        return "/"
    try:
        default_config(design_name, None)  # the design first: its error names the design
    except NotFound as problem:
        raise CommandError(problem.message) from None
    try:
        chosen = config if config is not None else default_config(design_name, mutant)
    except NotFound as problem:
        raise CommandError(problem.message, "--mutant") from None
    try:
        subject(design_name, chosen, mutant)
    except NotFound as problem:
        raise CommandError(problem.message, "--config" if config is not None else "--mutant") from None
    except SpecError as problem:
        raise CommandError(str(problem), "--config") from None
    return location(design_name, chosen, mutant)


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_command(
        design_name: Annotated[
            str | None,
            typer.Argument(metavar="DESIGN", help=f"open at this design (one of: {', '.join(DESIGNS)})"),
        ] = None,
        config: Annotated[
            str | None,
            typer.Option("--config", "-c", help="its configuration (default: the mutant's, else small)"),
        ] = None,
        mutant: Annotated[str | None, typer.Option(help="open at one of its mutants (seeded bugs)")] = None,
        port: Annotated[
            int, typer.Option(min=0, max=MAX_PORT, help=f"0: any free port [0..{MAX_PORT}]")
        ] = 8022,
        host: Annotated[str, typer.Option(help="the address to listen on")] = "127.0.0.1",
        open_browser: Annotated[
            bool, typer.Option("--open/--no-open", help="open the page in a web browser")
        ] = True,
    ) -> None:
        """Explore a design's spec in the browser: step through states, see the invariants, share the path.

        From an initial state: the variables, the invariants (which hold, which
        fails), the enabled actions as buttons; step, go back, or jump to a
        mutant's shortest counterexample. The path is in the URL
        (/DESIGN/CONFIG?mutant=M&path=3.0.1): share it, reopen it (docs/serve.md).
        Runs until Ctrl-C. Exit 2: an unknown name, or a port it cannot listen on.
        """
        page = start_page(design_name, config, mutant)
        from model_checks.serve.server import CannotListen, bind, serve_forever, url_of

        try:
            sock = bind(host, port)
        except CannotListen as problem:
            raise CommandError(str(problem), problem.option) from None
        url = url_of(sock) + page
        typer.echo(f"lanecheck serve: {url}  (Ctrl-C stops it)")
        if open_browser:
            # after the socket listens: the browser's first request waits in its backlog
            threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
        try:
            serve_forever(sock)
        finally:
            sock.close()
