"""`lanecheck verify`: the main job — every check at its standard configuration, one verdict table."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, ParamSpec

import typer
from rich.console import Console
from rich.table import Table

from model_checks.bench.machine import context
from model_checks.commands import CommandError
from model_checks.commands.verify_costs import COSTS
from model_checks.registry import designs as registered_designs
from model_checks.verify import Unit, VerifyRow, longest_first, makespan, plan, run_units, units

MAX_JOBS = 256

P = ParamSpec("P")


@dataclass(frozen=True)
class UnitTiming:
    key: str
    rows: int
    seconds: float | None  # wall, in its process; None: reused from a certificate
    cpu_seconds: float | None  # the sum of its rows'; None: reused


@dataclass(frozen=True)
class Timing:
    """Where a run's time went: what bounds it on ``jobs`` cores whatever else loads the machine."""

    jobs: int  # worker processes (1: in this process)
    quick: bool
    wall_seconds: float
    units: list[UnitTiming]  # in plan order
    start_order: list[int] | None  # the order the units were started in, when this command chose it
    # load and reference-loop speed before the run (``bench.machine.context``): wall times of two
    # runs compare only on machines of the same speed
    machine: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        ran = [u for u in self.units if u.cpu_seconds is not None]
        cpu = sum(u.cpu_seconds or 0.0 for u in ran)
        longest = max(ran, key=lambda u: u.cpu_seconds or 0.0, default=None)
        longest_cpu = (longest.cpu_seconds or 0.0) if longest else 0.0
        predicted = None
        if self.start_order is not None:
            costs = [self.units[i].cpu_seconds or 0.0 for i in self.start_order]
            predicted = round(makespan(costs, self.jobs), 1)
        return {
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "quick": self.quick,
            "jobs": self.jobs,
            "wall_seconds": round(self.wall_seconds, 1),
            "cpu_seconds": round(cpu, 1),
            "longest_unit": {"key": longest.key, "cpu_seconds": longest_cpu} if longest else None,
            # no schedule on ``jobs`` cores ends sooner than either
            "floor_seconds": round(max(cpu / self.jobs, longest_cpu), 1),
            # the units' CPU seconds scheduled as run_units hands them out, in the order started
            "predicted_wall_seconds": predicted,
            "machine": self.machine,
            "units": [asdict(u) for u in self.units],
        }

    def line(self) -> str:
        t = self.as_json()
        wall = t["predicted_wall_seconds"]
        predicted = f" (predicted {wall:.1f} s)" if wall is not None else ""
        longest = t["longest_unit"]
        slowest = f"; longest unit {longest['key']}: {longest['cpu_seconds']:.1f} s" if longest else ""
        return (
            f"{len(self.units)} units, {t['cpu_seconds']:.1f} CPU seconds{slowest}; on {self.jobs}"
            f" worker(s) at least {t['floor_seconds']:.1f} s{predicted}, took {self.wall_seconds:.1f} s"
            + (f" (reference loop {loop:g} ms)" if (loop := self.machine.get("reference_loop_ms")) else "")
        )


def collect_timed(
    quick: bool,
    areas: list[str] | None,
    console: Console | None,
    designs: list[str] | None = None,
    *,
    jobs: int = 1,
    certificate: Path | None = None,
    fresh: bool = False,
) -> tuple[list[VerifyRow], Timing]:
    """The rows, in plan order, and where the time went; ``jobs`` worker processes; rows reused
    from / written to ``certificate``."""
    todo = units(areas, designs)
    workers = max(1, min(jobs, len(todo)))
    machine = context()
    started = time.perf_counter()
    status = (
        console.status(f"verify: {len(todo)} units, {workers} at a time ...")
        if console is not None
        else contextlib.nullcontext()
    )
    with status:
        if certificate is None:
            rows, timing = _run(todo, quick, workers, console)
        else:
            rows, timing = _run_certified(todo, quick, workers, certificate, fresh, areas, designs, console)
    return rows, dataclasses.replace(timing, wall_seconds=time.perf_counter() - started, machine=machine)


def _rows_only(timed: Callable[P, tuple[list[VerifyRow], Timing]]) -> Callable[P, list[VerifyRow]]:
    def rows(*args: P.args, **kwargs: P.kwargs) -> list[VerifyRow]:
        return timed(*args, **kwargs)[0]

    return rows


collect = _rows_only(collect_timed)
"""The rows, in plan order; ``jobs`` worker processes; reused from / written to ``certificate``."""


def _run(todo: list[Unit], quick: bool, jobs: int, console: Console | None) -> tuple[list[VerifyRow], Timing]:
    """Every unit run, started longest first by the cost table (``verify_costs``)."""
    order = longest_first(todo, COSTS)
    seconds = [0.0] * len(todo)

    def done(i: int, rows: list[VerifyRow], took: float) -> None:
        seconds[i] = took
        if console is not None:
            cpu = sum(r.cpu_seconds or 0.0 for r in rows)
            console.log(f"{todo[i].label}: done in {took:.1f} s, {cpu:.1f} s CPU")

    results = run_units(todo, quick, jobs, done, order)
    timings = [
        UnitTiming(u.key, len(rows), round(took, 3), round(sum(r.cpu_seconds or 0.0 for r in rows), 3))
        for u, rows, took in zip(todo, results, seconds, strict=True)
    ]
    return [row for rows in results for row in rows], Timing(jobs, quick, 0.0, timings, order)


def _run_certified(
    todo: list[Unit],
    quick: bool,
    jobs: int,
    certificate: Path,
    fresh: bool,
    areas: list[str] | None,
    designs: list[str] | None,
    console: Console | None,
) -> tuple[list[VerifyRow], Timing]:
    """The units reused from or run and written to ``certificate`` (``certificate.run``, which
    chooses the start order: by the previous certificate's times)."""
    from model_checks.certificate import document
    from model_checks.certificate.run import verify

    command: dict[str, Any] = {"quick": quick, "areas": areas, "designs": designs}
    rows = verify(todo, quick, jobs, certificate, fresh, command, console.log if console else None, COSTS)
    # the certificate holds each unit's rows in plan order, as ``rows`` does
    timings: list[UnitTiming] = []
    at = 0
    for entry in document.read(certificate)["units"]:
        mine = rows[at : at + len(entry["rows"])]
        at += len(mine)
        reused = any(r.reused_from for r in mine)
        cpu = None if reused else round(sum(r.cpu_seconds or 0.0 for r in mine), 3)
        timings.append(UnitTiming(entry["key"], len(mine), None if reused else entry["seconds"], cpu))
    return rows, Timing(jobs, quick, 0.0, timings, None)


def table(rows: list[VerifyRow]) -> Table:
    t = Table(title="lanecheck verify")
    for column in ("area", "subject", "expected", "actual", "ok", "figures", "s"):
        t.add_column(column)
    for r in rows:
        reused = f" [dim](reused from certificate {r.reused_from})[/dim]" if r.reused_from else ""
        t.add_row(
            r.area,
            r.subject,
            r.expected,
            r.actual,
            "[green]yes[/green]" if r.ok else "[red]NO[/red]",
            r.figures + reused,
            f"{r.seconds:.1f}",
        )
    return t


def write_report(out: Path, design_names: list[str] | None, rows: list[VerifyRow]) -> None:
    from model_checks.report import write_site  # another command's package: only when asked for

    write_site(out=out, design_names=design_names, rows=rows)


def register(app: typer.Typer) -> None:
    @app.command("verify")
    def verify_command(
        quick: Annotated[bool, typer.Option(help="small configurations only (seconds, not minutes)")] = False,
        area: Annotated[list[str] | None, typer.Option(help="only these areas (repeatable)")] = None,
        design: Annotated[
            list[str] | None,
            typer.Option(
                "--design",
                help="only this design's rows (repeatable); the harness's own programs are left out",
            ),
        ] = None,
        json_out: Annotated[bool, typer.Option("--json", help="print the rows as JSON")] = False,
        jobs: Annotated[
            int | None,
            typer.Option(
                min=1,
                max=MAX_JOBS,
                help="worker processes running independent rows (1..256; default: every core); "
                "1 runs them one after another in this process",
            ),
        ] = None,
        certificate: Annotated[
            Path | None,
            typer.Option(
                dir_okay=False,
                help="write a certificate of the run here (code hashes, configuration, counts, verdicts, "
                "tool versions); when it exists, rows whose code is unchanged are reused from it",
            ),
        ] = None,
        fresh: Annotated[bool, typer.Option(help="with --certificate: run every row, reuse nothing")] = False,
        report: Annotated[
            Path | None,
            typer.Option(file_okay=False, help="also write the design-review site of these rows to DIR"),
        ] = None,
    ) -> None:
        """Check every spec at its standard configuration, every mutant, the harness and conformance."""
        err = Console(stderr=True)
        names = list(registered_designs())
        unknown = [d for d in design or [] if d not in names]
        if unknown:
            shown = ", ".join(repr(d[:40]) for d in unknown[:5])
            raise CommandError(f"no design {shown}; the designs are: {', '.join(names)}", "--design")
        known = list(dict.fromkeys(step.area for step in plan()))
        unknown = [a for a in area or [] if a not in known]
        if unknown:
            shown = ", ".join(repr(a[:40]) for a in unknown[:5])
            raise CommandError(f"no area {shown}; the areas are: {', '.join(known)}", "--area")
        if fresh and certificate is None:
            raise CommandError(
                "--fresh re-runs the rows a certificate would give: it needs --certificate", "--fresh"
            )
        if certificate is not None and certificate.exists() and not fresh:
            from model_checks.certificate.document import read

            try:
                read(certificate)
            except ValueError as problem:
                raise CommandError(f"{problem}; --fresh writes a new one over it", "--certificate") from None
        rows, timing = collect_timed(
            quick,
            area,
            None if json_out else err,
            design,
            jobs=jobs if jobs is not None else os.cpu_count() or 1,
            certificate=certificate,
            fresh=fresh,
        )
        if report is not None:
            write_report(report, design, rows)
        failed = [r for r in rows if not r.ok]
        if json_out:
            sys.stdout.write(
                json.dumps(
                    {"ok": not failed, "rows": [r.as_json() for r in rows], "timing": timing.as_json()},
                    indent=2,
                )
                + "\n"
            )
        else:
            Console().print(table(rows))
            reused = sum(1 for r in rows if r.reused_from)
            if reused:
                Console().print(
                    f"{reused} of {len(rows)} rows reused from {certificate} (their code unchanged)"
                )
            err.print(timing.line())
            if failed:
                missed = f"{len(failed)} of {len(rows)} checks did not get their expected verdict"
                Console().print(f"[bold red]{missed}[/bold red]")
            else:
                Console().print(f"[bold green]all {len(rows)} checks got their expected verdict[/bold green]")
        if not rows:
            raise typer.Exit(2)
        incomplete = [r for r in failed if r.actual in ("incomplete", "bounded")]
        raise typer.Exit(0 if not failed else (3 if len(incomplete) == len(failed) else 1))
