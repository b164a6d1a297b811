"""`lanecheck link`: the Work Lane's spec <-> reference checks (docs/conformance.md), bounds your own.

* ``lanecheck link compare NAME..`` (or ``--ci``, ``--all``, ``--custom``): check 2, the spec's
  observable traces against the reference's under exhaustive DPOR, with the spec-only traces by
  class. ``--docs`` prints the generated table of docs/conformance.md.
* ``lanecheck link mbt``: check 4, the Hypothesis state machine, on the reference or a mutant,
  with as many examples as you like.

Exit codes: 0 all as required, 1 a failure (an implementation-only trace, an unexplained
spec-only trace, a harness failure, an MBT failure), 2 usage error, 3 bounded (incomplete).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from model_checks.commands import CommandError, at_least_zero, count, seconds, seed

if TYPE_CHECKING:  # at run time imported where it is used: `lanecheck --help` lists this command
    from model_checks import progress

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_BOUNDED = 0, 1, 2, 3
COVERAGE_PCT_DEPTH = (
    12  # conformance.link.spec_to_impl.COVERAGE_PCT_DEPTH (not imported: the CLI loads lazily)
)

STRATEGIES = ("dpor", "pct", "random", "coverage", "states")  # of ``compare --automaton``
MBT_LIMIT = 8  # lanes, workers, producers of `link mbt`: threads of one test, not a load test
link_app = typer.Typer(
    help="Work Lane: spec <-> reference on the same traces (docs/conformance.md).", no_args_is_help=True
)


# Limits of ``--custom`` (each field's largest value): the harness explores every interleaving,
# so each one multiplies the run; these already allow far more than the built-in cases use.
CUSTOM_LIMITS = {"lanes": 4, "workers": 4, "capacity": 4, "budget": 4, "producers": 4, "posts": 4, "stops": 3}
CUSTOM_HELP = (
    "a scenario of your own: lanes=1,workers=2,capacity=1,budget=1,script=00+0,stops=drain "
    "(script: one group of lane digits or x per producer, joined by +; stops: drain/discard "
    "joined by /). Limits: lanes, workers, capacity, budget 1..4; at most 4 producers of at most "
    "4 posts each; at most 3 stops"
)


def parse_custom(text: str) -> Any:
    """``lanes=1,workers=2,capacity=1,budget=1,script=00+0x,stops=drain`` -> a ``LinkScenario``;
    ``script``: one group per producer, separated by ``+``, each character a lane or ``x`` (an
    invalid handle); ``stops``: modes separated by ``/``. Every field within ``CUSTOM_LIMITS``;
    ``ValueError`` naming the field otherwise."""
    from model_checks.designs.work_lane.link.scenario import LinkScenario

    fields: dict[str, Any] = {}
    if not text.replace(",", "").strip():
        # Not "the default scenario": an empty value is a slip, and the default is not small.
        raise ValueError("name at least the script, e.g. lanes=1,workers=1,capacity=1,budget=1,script=0")
    for part in filter(None, text.split(",")):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"{part!r} is not key=value")
        key = key.strip()
        value = value.strip()
        if key in fields:
            raise ValueError(f"{key} given twice")
        if key in ("lanes", "workers", "capacity", "budget"):
            limit = CUSTOM_LIMITS[key]
            if not (value.isascii() and value.isdigit() and len(value) <= 6) or not 1 <= int(value) <= limit:
                raise ValueError(f"{key} must be a positive integer from 1 to {limit}, not {value[:20]!r}")
            fields[key] = int(value)
        elif key == "script":
            script = []
            groups = value.split("+")
            if len(groups) > CUSTOM_LIMITS["producers"]:
                raise ValueError(
                    f"script: {len(groups)} producers, the limit is {CUSTOM_LIMITS['producers']}"
                )
            for group in groups:
                if not group or any(ch != "x" and ch not in "0123456789" for ch in group):
                    raise ValueError(f"script group {group[:20]!r}: use lane digits and x, e.g. 00+0x")
                if len(group) > CUSTOM_LIMITS["posts"]:
                    most = CUSTOM_LIMITS["posts"]
                    raise ValueError(f"script group {group[:20]!r}: {len(group)} posts, the limit is {most}")
                script.append(tuple(None if ch == "x" else int(ch) for ch in group))
            fields["script"] = tuple(script)
        elif key == "stops":
            modes = tuple(filter(None, value.split("/")))
            if any(m not in ("drain", "discard") for m in modes):
                raise ValueError(f"stops must be drain/discard modes separated by '/', not {value[:40]!r}")
            if len(modes) > CUSTOM_LIMITS["stops"]:
                raise ValueError(f"stops: {len(modes)} stops, the limit is {CUSTOM_LIMITS['stops']}")
            fields["stops"] = modes
        else:
            raise ValueError(f"unknown key {key[:20]!r}: use lanes, workers, capacity, budget, script, stops")
    sc = LinkScenario(**fields)
    for posts in sc.script:
        for lane in posts:
            if lane is not None and lane >= sc.lanes:
                raise ValueError(f"the script posts to lane {lane} but there are only {sc.lanes} lanes")
    return sc


def parse_observe(text: str) -> frozenset[str]:
    """``--observe post,invoke`` -> the events compared; ``ValueError`` for a name the spec never logs."""
    from spec.work_lane import SPEC

    known = sorted({a.event for a in SPEC.actions if a.event})
    chosen = frozenset(e.strip() for e in text.split(",") if e.strip())
    if not chosen:
        raise ValueError(f"name at least one event: {', '.join(known)}")
    unknown = sorted(chosen - set(known))
    if unknown:
        shown = ", ".join(repr(u[:30]) for u in unknown[:5])
        raise ValueError(f"no such event {shown}; the events are: {', '.join(known)}")
    return chosen


def _counting_build(tick: progress.Tick | None) -> Any:
    """The reference scheduler, counting the executions that build it (one per execution) for
    the progress display: the link searches take no progress callback of their own."""
    from reference.scheduler import WorkerScheduler

    if tick is None:
        return WorkerScheduler
    built = [0]

    def build(*args: Any, **kwargs: Any) -> Any:
        built[0] += 1
        tick(built[0], None)
        return WorkerScheduler(*args, **kwargs)

    return build


@link_app.command("compare")
def compare_command(
    names: Annotated[list[str] | None, typer.Argument(help="comparison cases (see --list)")] = None,
    ci: Annotated[bool, typer.Option("--ci", help="every case CI runs exhaustively")] = False,
    all_: Annotated[bool, typer.Option("--all", help="every case")] = False,
    custom: Annotated[str | None, typer.Option(help=CUSTOM_HELP)] = None,
    observe: Annotated[
        str | None, typer.Option(help="compare only these events, comma-separated (default: all)")
    ] = None,
    time_limit: Annotated[
        float | None, seconds("seconds per case for each side, harness and spec (then: bounded)")
    ] = None,
    max_executions: Annotated[int | None, count("executions per case (then: bounded)")] = None,
    show: Annotated[
        int, at_least_zero("print up to this many traces of each differing kind", high=1_000)
    ] = 3,
    docs: Annotated[bool, typer.Option("--docs", help="print the table of docs/conformance.md")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the results as JSON")] = False,
    list_: Annotated[bool, typer.Option("--list", help="list the cases and exit")] = False,
    automaton: Annotated[
        bool,
        typer.Option(
            "--automaton",
            help="count the spec's traces with its observable automaton instead of listing them "
            "(for scenarios with too many to list, e.g. small)",
        ),
    ] = False,
    strategy: Annotated[
        str,
        typer.Option(
            help="with --automaton: how the harness explores: dpor, pct, random, coverage (steered "
            "toward automaton edges not covered yet) or states (every program state once: the "
            "reachable steps, when it ends); several, comma-separated, run one after another"
        ),
    ] = "dpor",
    chart: Annotated[
        Path | None,
        typer.Option(help="with --automaton: draw the coverage growth over time as a PNG (matplotlib)"),
    ] = None,
    seed_value: Annotated[int, seed("with --automaton and pct/random: the seed", "--seed")] = 0,
    pct_depth: Annotated[
        int | None,
        count("with --automaton and pct: PCT's bug depth (default: the comparison's, 12)", high=1_000),
    ] = None,
) -> None:
    """Check 2: every observable trace of the spec against those of the reference (exhaustive DPOR)."""
    from dataclasses import replace

    from model_checks.designs.work_lane.link.classify import UNEXPLAINED, class_counts
    from model_checks.designs.work_lane.link.comparisons import CASES, Case, docs_table
    from model_checks.designs.work_lane.link.spec_to_impl import compare
    from model_checks.designs.work_lane.link.spec_traces import TooManyTraces

    if list_:
        for case in CASES.values():
            typer.echo(f"{case.name:22} {'ci ' if case.ci else 'cli'} {case.scenario.label()}: {case.why}")
        raise typer.Exit(EXIT_OK)
    chosen: list[Case] = []
    try:
        if custom is not None:
            chosen.append(Case("custom", parse_custom(custom), "given on the command line", ci=False))
    except (ValueError, TypeError) as exc:
        raise CommandError(str(exc), "--custom") from None
    unknown = [n for n in names or [] if n not in CASES]
    if unknown:
        shown = ", ".join(repr(n[:40]) for n in unknown[:5])
        raise CommandError(f"unknown case(s) {shown}; choose from: {', '.join(CASES)}")
    chosen += [CASES[n] for n in names or []]
    chosen += [c for c in CASES.values() if all_ or (ci and c.ci)]
    if not chosen:
        raise CommandError("name a case, or give --ci, --all or --custom (see --list)")
    if observe is not None:
        try:
            observed = parse_observe(observe)
        except ValueError as exc:
            raise CommandError(str(exc), "--observe") from None
        chosen = [replace(c, observed=observed) for c in chosen]
    strategies = [s.strip() for s in strategy.split(",")]
    bad = [s for s in strategies if s not in STRATEGIES]
    if bad or not strategies:
        shown = repr(bad[0][:40]) if bad else repr(strategy[:40])
        raise CommandError(
            f"{shown}: use dpor, pct, random, coverage (guided by the automaton) or states; "
            "several comma-separated",
            "--strategy",
        )
    if len(strategies) > 1 and not automaton:
        raise CommandError("several strategies only with --automaton", "--strategy")
    if chart is not None:
        _check_chart(chart, automaton)
    if automaton:
        code = _compare_by_automaton(
            chosen, strategies, time_limit, max_executions, seed_value, pct_depth, show, as_json, chart
        )
        raise typer.Exit(code)
    results = []
    code = EXIT_OK
    out: list[dict[str, Any]] = []
    for case in chosen:
        if not case.listable:
            typer.echo(
                f"{case.name}: not compared as lists: its spec traces are too many to list; "
                f"use `lanecheck link compare {case.name} --automaton`",
                err=True,
            )
            code = EXIT_FAILED if code == EXIT_FAILED else EXIT_BOUNDED
            continue
        try:
            with _progress(case.name, as_json, max_executions, time_limit) as tick:
                c = compare(
                    case.scenario,
                    observed=case.observed,
                    time_limit=time_limit,
                    max_executions=max_executions,
                    build=_counting_build(tick),
                )
        except TooManyTraces as exc:
            # Without the spec's whole trace set there is no comparison to report: say so.
            typer.echo(f"{case.name}: not compared: {exc}", err=True)
            code = EXIT_FAILED if code == EXIT_FAILED else EXIT_BOUNDED
            continue
        results.append((case, c))
        counts = class_counts(c.spec_only)
        if c.failure or c.impl_only or (c.harness == "exhaustive" and UNEXPLAINED in counts):
            code = EXIT_FAILED
        elif c.harness != "exhaustive" and code == EXIT_OK:
            code = EXIT_BOUNDED
        if as_json:
            out.append(
                _json_row(case, c, counts)
                | {"spec_transitions": c.spec_transitions, "realised_transitions": c.realised_transitions}
            )
            continue
        _echo_result(case, c, counts, show)
    if as_json:
        typer.echo(json.dumps(out, indent=2))
    if docs:
        typer.echo(docs_table(results))
    raise typer.Exit(code)


def _check_chart(chart: Path, automaton: bool) -> None:
    """Refuse ``--chart`` before anything runs: without --automaton, without matplotlib, or with
    a path that cannot be written."""
    from model_checks.designs.work_lane.link.coverage_chart import PLOT_HINT, have_matplotlib

    if not automaton:
        raise CommandError("--chart draws the coverage of --automaton runs: add --automaton", "--chart")
    if chart.suffix.lower() != ".png":
        raise CommandError(f"{str(chart)[:60]!r}: the chart is a PNG, name it *.png", "--chart")
    if not chart.parent.is_dir():
        raise CommandError(f"{str(chart.parent)[:60]!r} is not a directory", "--chart")
    if not have_matplotlib():
        raise CommandError(f"drawing the chart needs matplotlib: {PLOT_HINT}", "--chart")


def _compare_by_automaton(
    chosen: list[Any],
    strategies: list[str],
    time_limit: float | None,
    max_executions: int | None,
    seed: int,
    pct_depth: int | None,
    show: int,
    as_json: bool,
    chart: Path | None = None,
) -> int:
    from model_checks.designs.work_lane.link.classify import UNEXPLAINED, class_counts
    from model_checks.designs.work_lane.link.spec_to_impl import COVERAGE_PCT_DEPTH, compare_by_automaton

    code = EXIT_OK
    out: list[dict[str, Any]] = []
    drawn: list[tuple[str, Any]] = []
    for case, strategy in ((c, s) for c in chosen for s in strategies):
        with _progress(case.name, as_json, max_executions, time_limit) as tick:
            c = compare_by_automaton(
                case.scenario,
                strategy=strategy,
                observed=case.observed,
                time_limit=time_limit,
                max_executions=max_executions,
                seed=seed,
                pct_depth=COVERAGE_PCT_DEPTH if pct_depth is None else pct_depth,
                build=_counting_build(tick),
            )
        drawn.append((f"{case.name} {strategy}", c))
        counts = class_counts(c.spec_only)
        if c.verdict in ("harness-failure", "impl-only-traces") or UNEXPLAINED in counts:
            code = EXIT_FAILED
        elif c.verdict == "incomplete" and code == EXIT_OK:
            code = EXIT_BOUNDED
        if as_json:
            out.append(
                _json_row(case, c, counts)
                | {
                    "strategy": c.strategy,
                    "spec_steps": c.spec_steps,
                    "realised_steps": c.realised_steps,
                    "reachable_steps": c.reachable_steps,
                    "automaton_states": c.automaton_states,
                    "timeline": [[round(t, 3), n] for t, n in c.timeline],
                }
            )
            continue
        _echo_result(case, c, counts, show)
    if as_json:
        typer.echo(json.dumps(out, indent=2))
    if chart is not None:
        from model_checks.designs.work_lane.link.coverage_chart import plot_coverage

        limit = "" if time_limit is None else f", {time_limit:g} s each"
        plot_coverage(drawn, chart, f"observable spec steps realised over time{limit}")
        typer.echo(f"chart: {chart}", err=True)
    return code


def _progress(name: str, as_json: bool, max_executions: int | None, time_limit: float | None) -> Any:
    """The live figures of one case's harness side, on a terminal and without ``--json``."""
    from rich.console import Console

    from model_checks import progress

    return progress.executions(
        Console(stderr=True),
        f"{name}: harness",
        enabled=not as_json,
        max_executions=max_executions,
        time_limit=time_limit,
    )


def _json_row(case: Any, c: Any, counts: dict[str, int]) -> dict[str, Any]:
    """What both kinds of comparison report, as JSON."""
    from model_checks.designs.work_lane.link.scenario import show as show_trace

    return {
        "case": case.name,
        "scenario": case.scenario.label(),
        "verdict": c.verdict,
        "harness": c.harness,
        "bounded_by": c.bounded_by,
        "executions": c.executions,
        "seconds": round(c.seconds, 3),
        "spec_traces": c.spec_traces,
        "impl_traces": c.impl_traces,
        "common": c.common,
        "impl_only": [show_trace(t) for t in c.impl_only],
        "spec_only_by_class": counts,
        "failure": c.failure,
    }


def _echo_result(case: Any, c: Any, counts: dict[str, int], show: int) -> None:
    from model_checks.designs.work_lane.link.classify import classify
    from model_checks.designs.work_lane.link.scenario import show as show_trace

    typer.echo(f"{case.name}: {c.verdict}: {c.figures()}, {c.seconds:.1f}s")
    if c.harness != "exhaustive":
        typer.echo("  bounded: spec-only traces may be schedules the search did not reach")
    for name, n in counts.items():
        typer.echo(f"  spec-only {name}: {n}")
    for t in c.impl_only[:show]:
        typer.echo(f"  IMPL-ONLY {show_trace(t)}")
    for t in c.spec_only[:show]:
        typer.echo(f"  spec-only [{classify(t)}] {show_trace(t)}")


@link_app.command("mbt")
def mbt_command(
    mutant: Annotated[str | None, typer.Option(help="a reference mutant (default: the reference)")] = None,
    examples: Annotated[int, count("Hypothesis max_examples", high=1_000_000)] = 300,
    steps: Annotated[int, count("rules per example (stateful_step_count)", high=1_000)] = 25,
    lanes: Annotated[int, count("lanes of the scheduler", high=MBT_LIMIT)] = 2,
    workers: Annotated[int, count("worker threads", high=MBT_LIMIT)] = 2,
    producers: Annotated[int, count("producer threads", high=MBT_LIMIT)] = 2,
    capacity: Annotated[int, count("lane capacity", high=64)] = 2,
    budget: Annotated[int, count("max_per_drain", high=64)] = 1,
) -> None:
    """Check 4: the Hypothesis state machine against the reference or one of its mutants."""
    from hypothesis import HealthCheck, settings
    from hypothesis.stateful import run_state_machine_as_test

    from model_checks.designs.work_lane.link.model_based import machine_for
    from model_checks.designs.work_lane.reference_mutants import REFERENCE_MUTANTS
    from reference.scheduler import WorkerScheduler

    if mutant is not None and mutant not in REFERENCE_MUTANTS:
        raise CommandError(
            f"unknown mutant {mutant[:40]!r}; choose from: {', '.join(REFERENCE_MUTANTS)}", "--mutant"
        )
    build = WorkerScheduler if mutant is None else REFERENCE_MUTANTS[mutant].build
    machine = machine_for(
        build, lanes=lanes, workers=workers, capacity=capacity, budget=budget, producers=producers
    )
    chosen = settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        database=None,
        derandomize=True,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )
    try:
        run_state_machine_as_test(machine, settings=chosen)
    except AssertionError as exc:
        typer.echo(f"failure (shrunk): {exc}")
        raise typer.Exit(EXIT_FAILED) from None
    typer.echo(
        f"no failure in {examples} examples x {steps} rules "
        "(a sample, not a proof: random testing is never exhaustive)"
    )
    raise typer.Exit(EXIT_BOUNDED)


def register(app: typer.Typer) -> None:
    """Add ``lanecheck link`` to the CLI."""
    app.add_typer(link_app, name="link")
