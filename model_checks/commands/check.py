"""`lanecheck check DESIGN`: explore a spec (or one of its mutants) at a configuration."""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from model_checks.commands import (
    MAX_WORKERS,
    CommandError,
    RayAddressOption,
    at_least_zero,
    check_engine,
    check_workers,
    count,
    output_file,
    seconds,
)
from model_checks.explorer import render
from model_checks.explorer.check import CheckResult, check
from model_checks.explorer.search import Options
from model_checks.progress import spinner
from model_checks.registry import DESIGNS, design
from spec.language import Spec, SpecError


def load_target(design_name: str, config: str, variant: str | None) -> tuple[Spec, Any]:
    """The spec (the design's, or a mutant's) and its constants; ``KeyError`` for an unknown name.

    Module-level, so that a Ray worker can be handed it (with its arguments) and call it there.
    """
    d = design(design_name)
    if variant is None:
        return d.spec, d.config(config)
    mutant = d.mutant(variant)
    return mutant.spec, mutant.constants(d.config(config))


def run_check(
    design_name: str,
    config: str,
    variant: str | None,
    options: Options,
    engine: str = "local",
    address: str | None = None,
) -> CheckResult:
    """Resolve names and run the explorer; ``KeyError`` for an unknown name, ``SpecError`` for a bad spec.

    ``engine="ray"``: on Ray (``address``: a cluster's, else a local Ray), ``options.workers`` workers.
    """
    spec, constants = load_target(design_name, config, variant)
    if engine == "ray":
        from model_checks.explorer.ray.engine import NotSupported, check_ray
        from model_checks.explorer.ray.session import RayUnavailable

        load = partial(load_target, design_name, config, variant)
        try:
            return check_ray(
                spec, constants, load, options, config=config, workers=options.workers, address=address
            )
        except NotSupported as problem:
            raise CommandError(str(problem), "--liveness") from None
        except RayUnavailable as problem:
            raise CommandError(str(problem), problem.option) from None
    return check(spec, constants, options, config=config)


def refuse_without_twin(design_name: str) -> None:
    """``--tlc`` on a design without a TLA+ twin is a usage error, found before the check runs."""
    from model_checks.tlc.twin import twin_of

    if design_name not in DESIGNS:
        return  # the check itself names the unknown design
    try:
        twin_of(design_name)
    except KeyError as problem:
        raise CommandError(str(problem.args[0]), "--tlc") from None


def choose_config(design_name: str, config: str | None, variant: str | None, err: Console) -> str:
    """The configuration to check at: the user's, else the mutant's own (what `verify` checks it
    at, so that `check D --variant M` reproduces a verify row), else ``small``."""
    if variant is None or design_name not in DESIGNS:
        return config or "small"
    try:
        meant = design(design_name).mutant(variant).config
    except KeyError:
        return config or "small"  # the check itself names the unknown mutant
    if config is None:
        if meant != "small":
            err.print(
                f"note: checking {variant} at its own configuration {meant!r} (SpecMutant.config)",
                soft_wrap=True,
            )
        return meant
    if config != meant:
        err.print(
            f"note: the mutant {variant} is meant for configuration {meant!r} (SpecMutant.config,"
            f" what `lanecheck verify` checks it at); checking at {config!r} as asked",
            soft_wrap=True,
        )
    return config


def register(app: typer.Typer) -> None:
    @app.command("check")
    def check_command(
        design_name: Annotated[str, typer.Argument(metavar="DESIGN", help=f"one of: {', '.join(DESIGNS)}")],
        config: Annotated[
            str | None,
            typer.Option(
                "--config",
                "-c",
                help="small | standard | large [default: small; with --variant, the mutant's own]",
            ),
        ] = None,
        variant: Annotated[
            str | None, typer.Option(help="check a named mutant instead of the design")
        ] = None,
        symmetry: Annotated[
            bool, typer.Option(help="reduce by the spec's symmetry (skips liveness)")
        ] = False,
        liveness: Annotated[bool, typer.Option(help="check liveness properties under fairness")] = True,
        deadlock: Annotated[bool, typer.Option(help="report states with no enabled action")] = True,
        max_states: Annotated[int | None, count("stop after this many states (verdict: incomplete)")] = None,
        max_depth: Annotated[int | None, at_least_zero("stop at this depth (verdict: incomplete)")] = None,
        time_limit: Annotated[
            float | None, seconds("stop after this many seconds (verdict: incomplete)")
        ] = None,
        json_out: Annotated[bool, typer.Option("--json", help="print the result as JSON")] = False,
        mermaid: Annotated[
            Path | None, typer.Option(help="write the counterexample as a Mermaid diagram")
        ] = None,
        counterexample: Annotated[
            Path | None, typer.Option(help="write the result with its counterexample as JSON")
        ] = None,
        tlc: Annotated[bool, typer.Option(help="also run TLC on the TLA+ twin, side by side")] = False,
        workers: Annotated[
            int,
            typer.Option(
                min=1,
                max=MAX_WORKERS,
                help="processes sharing the search; liveness needs the whole graph in one process,"
                " so with liveness on the search uses one (and says so) [1..64, fewer when the"
                " open-file limit cannot hold a pipe between every pair of processes]",
            ),
        ] = 1,
        engine: Annotated[
            str,
            typer.Option(
                help="local | ray: search here, or on Ray workers (safety and deadlock only;"
                " needs the ray extra, docs/scale-out.md)"
            ),
        ] = "local",
        address: RayAddressOption = None,
    ) -> None:
        """Explore every reachable state; exit 0 holds, 1 violated, 2 usage/spec error, 3 incomplete."""
        err = Console(stderr=True)
        check_engine(engine, address)
        if address is not None and engine != "ray":
            raise CommandError("an address is a Ray cluster's: give --engine ray too", "--address")
        if engine == "local":
            check_workers(workers)
        output_file(mermaid, "--mermaid")
        output_file(counterexample, "--counterexample")
        if tlc:
            refuse_without_twin(design_name)
        config = choose_config(design_name, config, variant, err)
        options = Options(
            symmetry=symmetry,
            liveness=liveness,
            deadlock=deadlock,
            max_states=max_states,
            max_depth=max_depth,
            time_limit=time_limit,
            workers=workers,
        )
        try:
            with spinner(err, f"exploring {design_name} [{config}]", enabled=not json_out) as progress:
                options.progress = progress
                result = run_check(design_name, config, variant, options, engine, address)
        except (KeyError, SpecError) as problem:
            raise CommandError(str(problem.args[0] if problem.args else problem)) from None
        if mermaid is not None:
            mermaid.write_text(render.mermaid(result))
        if counterexample is not None:
            counterexample.write_text(render.dumps(result))
        side: dict[str, object] | None = None
        if tlc:
            from model_checks.commands.tlc_side import print_tlc_side_by_side

            if not json_out:
                render.print_result(result, Console())
            side = print_tlc_side_by_side(design_name, config, variant, result, json_out)
        if json_out:
            data = render.as_json(result)
            if side is not None:
                data["tlc_side_by_side"] = side
            sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
        elif side is None:
            render.print_result(result, Console())
        raise typer.Exit(result.exit_code)
