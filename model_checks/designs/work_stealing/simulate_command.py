"""`lanecheck simulate work-stealing`: the seed's step simulator on the command line.

One run prints the figures of the seed's page (steps, completed tasks, throughput, steals,
summed idle steps) and its bar chart of completed tasks per worker; ``--sweep workers=1..16``
runs every worker count with stealing on and off and shows how throughput and idle steps grow.
``--plot FILE`` draws the chart as a PNG (matplotlib: ``pip install 'lanecheck[plot]'``);
``--json`` prints the figures instead. Exit codes: 0 done, 2 bad arguments.
"""

from __future__ import annotations

import json
import re
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from model_checks.commands import CommandError, count, output_file, seed
from model_checks.commands.simulate import add_simulator
from model_checks.designs.work_stealing.simulator import (
    DEFAULT_DEPTH,
    MAX_DEPTH,
    MAX_TASKS,
    MAX_WORKERS,
    ParameterError,
    Params,
    Result,
    simulate,
    sweep,
)

if TYPE_CHECKING:  # imported where used: `lanecheck --help` loads this module to list `simulate`
    from rich.console import Console

DESIGN = "work-stealing"
MAX_SWEEP_POINTS = 256
BAR_WIDTH = 40
MAX_BAR_ROWS = 64  # more workers than this are shown in groups of consecutive workers
PLOT_HINT = "pip install 'lanecheck[plot]'"


def parse_sweep(text: str) -> list[int]:
    """``workers=1..16`` or ``workers=1,2,4,8`` -> the worker counts; ``ValueError`` otherwise."""
    key, sep, value = text.partition("=")
    if not sep or key.strip() != "workers":
        raise ValueError(f"{text[:40]!r}: use workers=A..B or workers=A,B,C (only workers can be swept)")
    value = value.strip()
    span = re.fullmatch(r"(\d{1,5})\.\.(\d{1,5})", value)
    if span:
        low, high = int(span[1]), int(span[2])
        if low > high:
            raise ValueError(f"{value!r}: the range runs backwards ({low} > {high})")
        counts = list(range(low, high + 1))
    elif re.fullmatch(r"\d{1,5}(,\d{1,5})*", value):
        counts = [int(v) for v in value.split(",")]
        if len(set(counts)) != len(counts):
            raise ValueError(f"{value!r}: a worker count is given twice")
    else:
        raise ValueError(f"{value[:40]!r}: use A..B (e.g. 1..16) or a list A,B,C (e.g. 1,2,4,8)")
    bad = [c for c in counts if not 1 <= c <= MAX_WORKERS]
    if bad:
        raise ValueError(f"worker counts must be 1..{MAX_WORKERS}, not {bad[0]}")
    if len(counts) > MAX_SWEEP_POINTS:
        raise ValueError(f"{len(counts)} worker counts, the limit is {MAX_SWEEP_POINTS}")
    return counts


def simulate_command(
    workers: Annotated[int, count("worker threads", high=MAX_WORKERS)] = 4,
    split: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="probability that a task forks subtasks [0, 1)")
    ] = 0.55,
    steal: Annotated[
        str | None,
        typer.Option(
            help="on: a deque per worker and stealing; off: one global queue behind a lock "
            "[default: on; with --sweep both]"
        ),
    ] = None,
    tasks: Annotated[int, count("initial tasks, all on W0", high=MAX_TASKS)] = 1000,
    depth: Annotated[
        int, count("the depth below which a task may fork (roots are depth 0)", low=0, high=MAX_DEPTH)
    ] = DEFAULT_DEPTH,
    seed_value: Annotated[int, seed("the seed of the run's own random.Random", "--seed")] = 0,
    sweep_text: Annotated[
        str | None,
        typer.Option(
            "--sweep", help="workers=A..B or workers=A,B,..: one run per count, stealing on and off"
        ),
    ] = None,
    plot: Annotated[Path | None, typer.Option(help="write the chart as a PNG (needs matplotlib)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
) -> None:
    """The seed's step simulator: every initial task on W0, one step = every worker acts once."""
    if steal is not None and steal not in ("on", "off"):
        raise CommandError(f"{steal[:20]!r}: use on or off", "--steal")
    counts = None
    if sweep_text is not None:
        try:
            counts = parse_sweep(sweep_text)
        except ValueError as exc:
            raise CommandError(str(exc), "--sweep") from None
    try:
        params = Params(
            workers=workers if counts is None else counts[0],
            split=split,
            steal=steal != "off",
            tasks=tasks,
            seed=seed_value,
            depth=depth,
        )
    except ParameterError as exc:
        raise CommandError(exc.reason, f"--{exc.name}") from None
    output_file(plot, "--plot")
    if plot is not None:
        _require_matplotlib()
    from rich.console import Console

    console = Console()
    if counts is None:
        result = simulate(params)
        if as_json:
            typer.echo(json.dumps({"design": DESIGN, "kind": "run"} | result.as_json(), indent=2))
        else:
            _show_run(console, result)
        if plot is not None:
            plot_run(result, plot)
    else:
        modes = (True, False) if steal is None else (steal == "on",)
        status = Console(stderr=True).status("sweeping ...") if not as_json else nullcontext()
        with status:
            results = sweep(params, counts, modes)
        if as_json:
            typer.echo(json.dumps(sweep_json(params, results), indent=2))
        else:
            _show_sweep(console, results)
        if plot is not None:
            plot_sweep(results, plot)
    if plot is not None and not as_json:
        console.print(f"chart written to {plot}")


def sweep_json(params: Params, results: list[Result]) -> dict[str, Any]:
    common = params.as_json()
    del common["workers"], common["steal"]
    rows = [
        {
            "workers": r.params.workers,
            "steal": "on" if r.params.steal else "off",
            "steps": r.steps,
            "completed": r.completed,
            "throughput": round(r.throughput, 6),
            "steals": r.steals,
            "idle_steps": r.idle_steps,
            "imbalance": round(r.imbalance, 6),
        }
        for r in results
    ]
    return {"design": DESIGN, "kind": "sweep", "params": common, "rows": rows}


# ----------------------------------------------------------------------------- terminal


def _show_run(console: Console, r: Result) -> None:
    from rich.table import Table

    p = r.params
    title = (
        f"work stealing {'on' if p.steal else 'off (one global queue + lock)'}: {p.workers} workers, "
        f"{p.tasks:,} tasks on W0, split {p.split:g}, depth {p.depth}, seed {p.seed}"
    )
    figures = Table(title=title, show_header=False)
    figures.add_column("figure")
    figures.add_column("value", justify="right")
    figures.add_row("steps", f"{r.steps:,}")
    figures.add_row("completed tasks", f"{r.completed:,}")
    figures.add_row("throughput (tasks/step)", f"{r.throughput:.2f}")
    figures.add_row("steals", f"{r.steals:,}")
    figures.add_row("idle steps (summed)", f"{r.idle_steps:,}")
    figures.add_row("busiest / mean worker", f"{r.imbalance:.2f}")
    console.print(figures)
    bars = Table(title="completed tasks per worker: is the load spread evenly?", show_header=False, box=None)
    bars.add_column("worker")
    bars.add_column("bar")
    bars.add_column("tasks", justify="right")
    rows = _bar_rows(r.completed_per_worker)
    top = max(value for _, value in rows) or 1
    for label, value in rows:
        bars.add_row(label, "[green]" + "█" * round(BAR_WIDTH * value / top) + "[/green]", f"{value:,.0f}")
    console.print(bars)


def _bar_rows(values: tuple[int, ...]) -> list[tuple[str, float]]:
    """One row per worker, or per group of consecutive workers (their mean) when they are many."""
    if len(values) <= MAX_BAR_ROWS:
        return [(f"W{i}", float(v)) for i, v in enumerate(values)]
    size = -(-len(values) // MAX_BAR_ROWS)
    return [
        (
            f"W{i}-W{min(i + size, len(values)) - 1} (mean)",
            sum(values[i : i + size]) / len(values[i : i + size]),
        )
        for i in range(0, len(values), size)
    ]


def _show_sweep(console: Console, results: list[Result]) -> None:
    from rich.table import Table

    first = results[0].params
    table = Table(
        title=f"sweep: {first.tasks:,} tasks on W0, split {first.split:g}, depth {first.depth}, "
        f"seed {first.seed}"
    )
    table.add_column("workers", justify="right")
    for r in results[: 2 if len(results) > 1 and results[1].params.workers == first.workers else 1]:
        mode = "on" if r.params.steal else "off"
        table.add_column(f"{mode}: tasks/step", justify="right")
        table.add_column(f"{mode}: idle", justify="right")
        table.add_column(f"{mode}: steps", justify="right")
    by_workers: dict[int, list[Result]] = {}
    for r in results:
        by_workers.setdefault(r.params.workers, []).append(r)
    for workers, group in by_workers.items():
        cells = [str(workers)]
        for r in group:
            cells += [f"{r.throughput:.2f}", f"{r.idle_steps:,}", f"{r.steps:,}"]
        table.add_row(*cells)
    console.print(table)


# ----------------------------------------------------------------------------- PNG


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CommandError(f"drawing a chart needs matplotlib: {PLOT_HINT}", "--plot") from None


def _figure(width: float, height: float) -> Any:
    # The object API with the Agg canvas: no pyplot, no global backend switch, no display needed.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def plot_run(r: Result, path: Path) -> None:
    """Completed tasks and idle steps per worker, side by side."""
    p = r.params
    fig = _figure(8.0, 3.2)
    done, idle = fig.subplots(1, 2)
    names = list(range(p.workers))
    done.bar(names, r.completed_per_worker, color="tab:green")
    done.set_title("completed tasks per worker")
    idle.bar(names, r.idle_per_worker, color="tab:gray")
    idle.set_title("idle steps per worker")
    for ax in (done, idle):
        ax.set_xlabel("worker")
    fig.suptitle(
        f"stealing {'on' if p.steal else 'off'}: {r.steps:,} steps, {r.throughput:.2f} tasks/step, "
        f"{r.steals:,} steals (W={p.workers}, {p.tasks:,} tasks, split {p.split:g}, seed {p.seed})",
        fontsize=9,
    )
    fig.savefig(path, format="png")


def plot_sweep(results: list[Result], path: Path) -> None:
    """Throughput and summed idle steps against the worker count, stealing on and off."""
    first = results[0].params
    fig = _figure(8.0, 3.2)
    rate, idle = fig.subplots(1, 2)
    for mode, style in ((True, "o-"), (False, "s--")):
        rows = [r for r in results if r.params.steal == mode]
        if not rows:
            continue
        label = "stealing on" if mode else "stealing off (global queue)"
        xs = [r.params.workers for r in rows]
        rate.plot(xs, [r.throughput for r in rows], style, label=label, markersize=3)
        idle.plot(xs, [r.idle_steps for r in rows], style, label=label, markersize=3)
    rate.set_title("throughput (tasks/step)")
    idle.set_title("idle steps (summed over workers)")
    from matplotlib.ticker import MaxNLocator

    for ax in (rate, idle):
        ax.set_xlabel("workers")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    rate.legend(fontsize=8)
    fig.suptitle(
        f"{first.tasks:,} tasks on W0, split {first.split:g}, depth {first.depth}, seed {first.seed}",
        fontsize=9,
    )
    fig.savefig(path, format="png")


def register(app: typer.Typer) -> None:
    """Add ``lanecheck simulate work-stealing``."""
    add_simulator(
        app, DESIGN, simulate_command, help="the seed's step simulator: stealing on vs one global queue"
    )
