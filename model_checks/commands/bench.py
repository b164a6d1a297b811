"""`lanecheck bench NAME`: benchmarks that report ratios against baselines measured in the same run."""

from __future__ import annotations

import importlib
import json
import sys
import warnings
from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from model_checks import registry

# name -> (module, one line of what it measures); each design adds its own (``Design.benches``).
GENERIC_BENCHES: dict[str, tuple[str, str]] = {
    "explorer": (
        "model_checks.bench.explorer",
        "our explorer vs TLC on the same configuration: distinct states/s, time to verdict, memory",
    ),
    "harness": (
        "model_checks.bench.harness",
        "harness executions/s per back end, DPOR vs plain DFS, and frontrun on a plain-threading program",
    ),
    "validate": ("model_checks.bench.validate", "trace validator events/s and memory on long traces"),
    "designs": (
        "model_checks.bench.designs",
        "every design's reference on one shared workload (items/s), as ratios to the first design's",
    ),
}


def benches() -> dict[str, tuple[str, str]]:
    """Every benchmark by name: each design's own, then the generic ones.

    A name is one command: a design's bench named like a generic one or an earlier design's is
    left out with a warning naming both (as a plug-in that fails to load: the other commands
    still work), never silently shadowed.
    """
    found: dict[str, tuple[str, str]] = {}
    owner: dict[str, str] = {name: "lanecheck" for name in GENERIC_BENCHES}
    for design in registry.designs().values():
        for name, entry in design.benches.items():
            if name in owner:
                warnings.warn(
                    f"bench {name!r} of design {design.name} not registered: the name is "
                    f"{owner[name]}'s bench",
                    stacklevel=2,
                )
                continue
            owner[name] = f"design {design.name}"
            found[name] = entry
    return {**found, **GENERIC_BENCHES}


def run_bench(name: str, quick: bool) -> dict[str, Any]:
    module = importlib.import_module(benches()[name][0])
    result: dict[str, Any] = module.bench(quick=quick)
    return result


def _show(name: str, figures: dict[str, Any]) -> None:
    table = Table(title=f"lanecheck bench {name}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in figures.items():
        table.add_row(key, json.dumps(value) if isinstance(value, dict | list) else str(value))
    Console().print(table)


def _command(name: str) -> Callable[..., None]:
    """The command of one benchmark (its name bound here, not taken from the command line)."""

    def command(
        quick: Annotated[bool, typer.Option(help="a smaller run, for a quick look")] = False,
        json_out: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
    ) -> None:
        with Console(stderr=True).status(f"bench {name} ..."):
            figures = run_bench(name, quick)
        if json_out:
            sys.stdout.write(json.dumps(figures, indent=2) + "\n")
        else:
            _show(name, figures)

    return command


def register_bench(bench_app: typer.Typer) -> None:
    for bench_name, (_, help_text) in benches().items():
        bench_app.command(bench_name, help=help_text)(_command(bench_name))
