"""`lanecheck bench NAME`: benchmarks that report ratios against baselines measured in the same run."""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from model_checks import registry
from model_checks.commands import CommandError

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
    "harness-ab": (
        "model_checks.bench.harness_ab",
        "patch mode's executions per CPU second (_ours_plain(2)): two trees compared by PYTHONPATH",
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
    owner: dict[str, str] = {name: "lanecheck" for name in (*GENERIC_BENCHES, ALL)}
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


# `lanecheck bench all`: every benchmark in turn (a design's bench may not take the name).
ALL = "all"

# Benches that also run on Ray (``--engine ray``): their ``bench`` takes ``engine=``.
ENGINE_BENCHES = ("explorer",)


def _bench_function(name: str) -> Callable[..., dict[str, Any]]:
    """What bench ``name`` runs: its module's ``bench``; a module without one that gives a trace
    validator's bench (``TRACE_BENCH``) and a goal in events/s (``GOAL``) has that validator
    measured against the goal (``bench.traces.goal_figures``)."""
    module = importlib.import_module(benches()[name][0])
    if hasattr(module, "bench"):
        own: Callable[..., dict[str, Any]] = module.bench
        return own
    from model_checks.bench.traces import goal_figures  # brings the validator: not for listing benches

    return functools.partial(goal_figures, module.TRACE_BENCH, module.GOAL)


def takes_store(name: str) -> bool:
    """Whether bench ``name`` runs on a store the user names (its ``bench`` takes ``store=``)."""
    return "store" in inspect.signature(_bench_function(name)).parameters


def run_bench(name: str, quick: bool, engine: str = "local", store: str | None = None) -> dict[str, Any]:
    extra: dict[str, Any] = {} if engine == "local" else {"engine": engine}
    if store is not None:
        extra["store"] = store
    return _bench_function(name)(quick=quick, **extra)


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
        engine: Annotated[
            str,
            typer.Option(help="local | ray (explorer only: one process vs 2 Ray workers, docs/scale-out.md)"),
        ] = "local",
        store: Annotated[
            str | None,
            typer.Option(
                help="the store a job bench runs on: sqlite:///PATH or postgresql://... "
                "(default: a new SQLite file; only benches of a store take it)"
            ),
        ] = None,
    ) -> None:
        if engine not in ("local", "ray") or (engine == "ray" and name not in ENGINE_BENCHES):
            raise CommandError(
                f"{engine!r}: this bench runs on local (ray: {', '.join(ENGINE_BENCHES)} only)", "--engine"
            )
        if store is not None and not takes_store(name):
            raise CommandError(f"bench {name} runs on no store; --store is for the job benches", "--store")
        if store is not None and not store.strip():
            raise CommandError("an empty store URL names no store", "--store")
        with Console(stderr=True).status(f"bench {name} ..."):
            figures = run_bench(name, quick, engine, store)
        if json_out:
            sys.stdout.write(json.dumps(figures, indent=2) + "\n")
        else:
            _show(name, figures)

    return command


def _names(only: str | None, skip: str | None) -> list[str]:
    known = list(benches())

    def listed(text: str, option: str) -> list[str]:
        names = [n.strip() for n in text.split(",") if n.strip()]
        unknown = [n for n in names if n not in known]
        if unknown or not names:
            raise CommandError(
                f"{', '.join(unknown) or repr(text)}: not a benchmark (known: {', '.join(known)})", option
            )
        return names

    chosen = listed(only, "--only") if only is not None else known
    dropped = set(listed(skip, "--skip")) if skip is not None else set()
    return [n for n in chosen if n not in dropped]


def run_all(
    quick: Annotated[bool, typer.Option(help="each bench's smaller run (not for documents)")] = False,
    write: Annotated[
        Path | None,
        typer.Option(
            help="replace each bench's block (<!-- bench:NAME --> ... <!-- /bench:NAME -->) in this "
            "Markdown file with this run's figures, e.g. docs/performance.md"
        ),
    ] = None,
    only: Annotated[str | None, typer.Option(help="these benches only (comma-separated names)")] = None,
    skip: Annotated[str | None, typer.Option(help="leave these benches out (comma-separated names)")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print every bench's figures as JSON")] = False,
) -> None:
    """Rerun every benchmark one after another (each on an otherwise idle machine is what its figure
    claims: the load is recorded beside it), and with --write keep a document's figures current."""
    from model_checks.bench.docs import DocumentError, Measured, block_names, update

    names = _names(only, skip)
    text: str | None = None
    if write is not None:
        try:
            text = write.read_text(encoding="utf-8")
            # a malformed document, or one with no place for a chosen bench's figures, is refused
            # before an hour of benchmarks
            blocks = block_names(text)
        except OSError as exc:
            raise CommandError(f"{write}: {exc.strerror or exc}", "--write") from exc
        except DocumentError as exc:
            raise CommandError(f"{write}: {exc}", "--write") from exc
        homeless = [n for n in names if n not in blocks]
        if homeless:
            raise CommandError(
                f"{write}: no block for " + ", ".join(f"bench:{n}" for n in homeless) + " (add "
                "`<!-- bench:NAME -->` and `<!-- /bench:NAME -->` lines where its figures belong)",
                "--write",
            )
    measured: dict[str, Measured] = {}
    failed: dict[str, str] = {}
    for name in names:
        done = len(measured) + len(failed)
        with Console(stderr=True).status(f"bench {name} ({done + 1}/{len(names)}) ..."):
            try:
                measured[name] = Measured.now(name, run_bench(name, quick))
            except Exception as exc:  # one bench failing must not lose the others' figures
                failed[name] = f"{type(exc).__name__}: {exc}"
        if name in failed:
            Console(stderr=True).print(f"bench {name} failed: {failed[name]}")
        elif not json_out:
            _show(name, dict(measured[name].figures))
    if json_out:
        out = {n: {"at": m.at, "machine": m.machine, "figures": m.figures} for n, m in measured.items()}
        sys.stdout.write(json.dumps({"benches": out, "failed": failed}, indent=2, default=str) + "\n")
    if write is not None and text is not None and measured:
        try:
            write.write_text(update(text, measured), encoding="utf-8")
        except DocumentError as exc:
            raise CommandError(f"{write}: {exc}", "--write") from exc
        Console(stderr=True).print(f"{write}: {len(measured)} bench block(s) rewritten")
    if failed:
        Console(stderr=True).print(f"{len(failed)} bench(es) failed: {', '.join(failed)}")
        raise typer.Exit(code=1)


def register_bench(bench_app: typer.Typer) -> None:
    for bench_name, (_, help_text) in benches().items():
        bench_app.command(bench_name, help=help_text)(_command(bench_name))
    bench_app.command(ALL, help="every benchmark in turn; --write FILE keeps a document's figures current")(
        run_all
    )
