"""`lanecheck explore`: run a built-in harness scenario under the controlled scheduler.

Exit codes: 0 exhaustive and no failure, 1 failure found, 2 usage error, 3 bounded (incomplete).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from model_checks.harness import Options, ReplayDivergence, Result, check
from model_checks.harness.rt.runtime import ControlledRuntime

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_BOUNDED = 0, 1, 2, 3


def scenarios() -> dict[str, Callable[[], Callable[[ControlledRuntime], object]]]:
    """Every runnable scenario by name: the classic programs, then the Work Lane ones."""
    from model_checks.harness.examples import PROGRAMS

    found: dict[str, Callable[[], Callable[[ControlledRuntime], object]]] = dict(PROGRAMS)
    try:
        from model_checks.harness.scenarios import SCENARIOS  # type: ignore[import-not-found, unused-ignore]
    except ImportError:  # the Work Lane scenarios need reference/scheduler.py
        return found
    found.update(SCENARIOS)
    return found


def _as_json(name: str, result: Result) -> dict[str, Any]:
    failure = result.failure
    return {
        "scenario": name,
        "verdict": result.verdict,
        "strategy": result.strategy,
        "executions": result.executions,
        "steps": result.steps,
        "max_preemptions": result.max_preemptions,
        "pruned": result.pruned,
        "elapsed": round(result.elapsed, 4),
        "bounded_by": result.bounded_by,
        "notes": result.notes,
        "failure": None
        if failure is None
        else {
            "kind": failure.kind,
            "message": failure.message,
            "schedule": failure.schedule,
            "preemptions": failure.preemptions,
            "steps": [vars(s) for s in failure.steps],
            "details": failure.details,
        },
    }


def explore_command(
    scenario: Annotated[str | None, typer.Argument(help="scenario name (see --list)")] = None,
    strategy: Annotated[str, typer.Option(help="dpor | dfs | random | pct")] = "dpor",
    preemption_bound: Annotated[int | None, typer.Option(help="max preemptions per execution")] = None,
    max_executions: Annotated[int | None, typer.Option(help="stop after this many executions")] = None,
    max_steps: Annotated[int, typer.Option(help="steps per execution before calling it a livelock")] = 2000,
    time_limit: Annotated[float | None, typer.Option(help="seconds for the whole search")] = None,
    seed: Annotated[int, typer.Option(help="seed of random / pct")] = 0,
    backend: Annotated[str, typer.Option(help="greenlet | threads")] = "greenlet",
    spurious_wakeups: Annotated[bool, typer.Option(help="Condition.wait may wake spuriously")] = False,
    virtual_timeouts: Annotated[bool, typer.Option(help="timeouts may expire at any point")] = True,
    replay: Annotated[str | None, typer.Option(help="replay exactly this schedule string")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the result as JSON")] = False,
    list_: Annotated[bool, typer.Option("--list", help="list the scenarios and exit")] = False,
) -> None:
    """Explore the interleavings of a built-in scenario under the controlled scheduler."""
    table = scenarios()
    if list_:
        for name in sorted(table):
            typer.echo(name)
        raise typer.Exit(EXIT_OK)
    if scenario is None or scenario not in table:
        typer.echo(f"unknown scenario {scenario!r}; choose one of: {', '.join(sorted(table))}", err=True)
        raise typer.Exit(EXIT_USAGE)
    if strategy not in ("dpor", "dfs", "random", "pct") or backend not in ("greenlet", "threads"):
        typer.echo("--strategy must be dpor|dfs|random|pct and --backend greenlet|threads", err=True)
        raise typer.Exit(EXIT_USAGE)
    options = Options(
        strategy=strategy,  # type: ignore[arg-type]
        preemption_bound=preemption_bound,
        max_executions=max_executions,
        max_steps=max_steps,
        time_limit=time_limit,
        seed=seed,
        backend=backend,  # type: ignore[arg-type]
        spurious_wakeups=spurious_wakeups,
        virtual_timeouts=virtual_timeouts,
        replay=replay,
    )
    program = table[scenario]()
    # name the program after the scenario so that its schedule strings are stable across runs
    program.__qualname__ = f"scenario:{scenario}"
    program.__module__ = "lanecheck"
    try:
        if as_json or not sys.stderr.isatty():
            result = check(program, options)
        else:
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            with Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                TimeElapsedColumn(),
                transient=True,
            ) as progress:
                task = progress.add_task(f"exploring {scenario}", total=max_executions)

                def tick(r: Result) -> None:
                    progress.update(task, completed=r.executions, description=f"{scenario}: {r.figures()}")

                result = check(program, options, on_execution=tick)
    except (ReplayDivergence, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    if result.failure is not None:
        result.replay_hint = f"lanecheck explore {scenario} --replay {result.failure.schedule}"
    if as_json:
        typer.echo(json.dumps(_as_json(scenario, result), indent=2, default=str))
    else:
        typer.echo(result.report())
    if result.failure is not None:
        raise typer.Exit(EXIT_FAILED)
    raise typer.Exit(EXIT_BOUNDED if result.verdict == "bounded" else EXIT_OK)


def register(app: typer.Typer) -> None:
    """Add ``lanecheck explore`` to the CLI."""
    app.command("explore")(explore_command)


if __name__ == "__main__":  # runnable standalone: python -m model_checks.commands.explore
    standalone = typer.Typer(add_completion=False)
    register(standalone)

    @standalone.callback()
    def _root() -> None:
        """lanecheck harness commands."""

    standalone()
