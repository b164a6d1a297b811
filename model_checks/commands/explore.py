"""`lanecheck explore`: run a built-in harness scenario, or a program of your own written against
plain ``threading`` (``MODULE:FUNCTION``, in patch mode: ``own_program.py``), under the controlled
scheduler.

Exit codes: 0 exhaustive and no failure, 1 failure found, 2 usage error, 3 bounded (incomplete).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import sys
from collections.abc import Callable, Iterator
from functools import partial
from typing import Annotated, Any

import typer
from rich.console import Console

from model_checks import progress, registry
from model_checks.commands import (
    CommandError,
    RayAddressOption,
    at_least_zero,
    check_engine,
    count,
    explore_words,
    own_program,
    seconds,
    seed,
)
from model_checks.commands import hash_seeds as hash_seeds_run
from model_checks.harness import Options, ReplayDivergence, Result, check, patch_random, patched
from model_checks.harness import hash_seed as process_seed
from model_checks.harness.options import STATES
from model_checks.harness.rt.scheduler import UsageError
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.schedule import MAX_REPLAY_STEPS
from model_checks.harness.swarm import SWARM_STRATEGIES

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_BOUNDED = 0, 1, 2, 3
Factory = Callable[[], Callable[[ControlledRuntime], object]]
STRATEGIES = ("dpor-ipb", "dpor", "dfs", "random", "pct", "portfolio", STATES)
BACKENDS = ("greenlet", "threads")
MAX_SWARM = 10_000


def grouped_scenarios(for_states: bool = False) -> dict[str, dict[str, Factory]]:
    """Every runnable scenario, by group: the classic harness programs, then each registered
    design's scenarios (``Design.harness()``: its reference, and each seeded reference bug), named
    ``<design>/<scenario>``; ``for_states``: each as the state search runs it (keeping no
    history where the design says how: ``Scenario.build_for_states``)."""
    from model_checks.harness.examples import PROGRAMS

    groups: dict[str, dict[str, Factory]] = {"harness examples": dict(PROGRAMS)}
    for design in registry.designs().values():
        try:
            table = design.harness()
        except ImportError:  # a design whose reference is not importable here: listed without it
            continue
        if table:
            named = {f"{design.name}/{name}": s for name, s in table.items()}
            groups[design.name] = {n: partial(s.program, for_states=for_states) for n, s in named.items()}
    return groups


def scenarios(for_states: bool = False) -> dict[str, Factory]:
    """Every runnable scenario by name (names are unique across the groups)."""
    groups = grouped_scenarios(for_states)
    return {name: factory for group in groups.values() for name, factory in group.items()}


def build_scenario(name: str, for_states: bool = False) -> Callable[[ControlledRuntime], object]:
    """The program of scenario ``name``, named after it so that its schedule strings are stable
    across runs and processes (module-level: a Ray worker is handed it with the name);
    ``for_states``: as the state search runs it."""
    program = scenarios(for_states)[name]()
    program.__qualname__ = f"scenario:{name}"
    program.__module__ = "lanecheck"
    return program


def scenario_races(name: str) -> bool | None:
    """Whether a design's scenario runs the race detector, as its verify row does (review 16's
    F10); None for the harness examples: the harness's default."""
    design = registry.designs().get(name.partition("/")[0])
    try:
        found = None if design is None else design.harness().get(name.partition("/")[2])
    except ImportError:
        return None
    return None if found is None else bool(found.search_options().get("races"))


def listing(groups: dict[str, dict[str, Factory]]) -> str:
    lines: list[str] = []
    for group, table in groups.items():
        lines.append(f"{group}:")
        lines += [f"  {name}" for name in sorted(table)]
    return "\n".join(lines)


def _as_json(name: str, result: Result) -> dict[str, Any]:
    failure = result.failure
    return {
        "scenario": name,
        "verdict": result.verdict,
        "verdict_text": result.verdict_text(),
        "races": result.races,
        "strategy": result.strategy,
        "executions": result.executions,
        "steps": result.steps,
        "max_preemptions": result.max_preemptions,
        "pruned": result.pruned,
        # the state search's abstract states stored (None for the other strategies)
        "states": getattr(result, "states", None),
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
    scenario: Annotated[
        str | None,
        typer.Argument(
            help="scenario name (see --list), or MODULE:FUNCTION / FILE.py:FUNCTION: a program of your"
            " own written against plain threading, run in patch mode"
        ),
    ] = None,
    strategy: Annotated[
        str,
        typer.Option(
            help="dpor-ipb (DPOR, fewest preemptions first: shallow bugs first, still a proof) | "
            "dpor (depth-first) | dfs | random | pct | portfolio (DPOR and PCT in turn) | "
            "states (DFS pruning prefixes that reach an abstract state already explored)"
        ),
    ] = "dpor-ipb",
    preemption_bound: Annotated[
        int | None, at_least_zero("max preemptions per execution", high=10_000)
    ] = None,
    max_executions: Annotated[int | None, count("stop after this many executions")] = None,
    max_steps: Annotated[
        int, count("steps per execution before calling it a livelock", high=MAX_REPLAY_STEPS)
    ] = 2000,
    time_limit: Annotated[float | None, seconds("seconds for the whole search")] = None,
    seed_value: Annotated[
        int, seed("seed of random / pct, and of the program's random draws (patch mode)", "--seed")
    ] = 0,
    hash_seed: Annotated[
        int | None,
        at_least_zero(
            "run under this str/bytes hash seed (PYTHONHASHSEED: set and dict orders follow it); "
            "default: the environment's PYTHONHASHSEED, else 0",
            "--hash-seed",
            high=4_294_967_295,
        ),
    ] = None,
    hash_seeds: Annotated[
        int | None,
        count(
            "check under this many hash seeds, --hash-seed, --hash-seed+1, ..., each in a child "
            "process, until one fails (fails if any fails)",
            "--hash-seeds",
            high=10_000,
        ),
    ] = None,
    backend: Annotated[str, typer.Option(help="greenlet | threads")] = "greenlet",
    spurious_wakeups: Annotated[bool, typer.Option(help="Condition.wait may wake spuriously")] = False,
    virtual_timeouts: Annotated[
        bool,
        typer.Option(
            help="timeouts may expire (and sleeps end) at any point; --no-virtual-timeouts: only once no"
            " thread can run, earliest deadline first"
        ),
    ] = True,
    timeout_limit: Annotated[
        int, at_least_zero("explored timeouts per thread per execution (beyond: only when idle)", high=1_000)
    ] = 2,
    fair_sleeps: Annotated[
        bool,
        typer.Option(
            "--fair-sleeps/--no-fair-sleeps",
            help="a thread sleeping again before the threads able to run at its last sleep ran "
            "gives way to them (a spin-wait ends); --no-fair-sleeps explores every schedule",
        ),
    ] = True,
    sleep_sets: Annotated[
        bool,
        typer.Option(
            "--sleep-sets/--no-sleep-sets",
            help="with --strategy states: skip steps that commute with one already taken (every "
            "state is still visited); --no-sleep-sets takes every transition, which also rules "
            "out livelocks",
        ),
    ] = True,
    races: Annotated[
        bool | None,
        typer.Option(
            "--races/--no-races",
            help="run the data-race detector in every execution (default: on in patch mode, and for a "
            "design's scenario as its verify row runs it); without it an exhaustive verdict covers "
            "synchronisation points only",
        ),
    ] = None,
    interleave_races: Annotated[
        bool,
        typer.Option(
            "--interleave-races",
            help="(implies --races) make a race's two access sites scheduling points and search "
            "again, to show the race's consequence (e.g. a lost update's wrong value)",
        ),
    ] = False,
    replay: Annotated[
        str | None,
        typer.Option(
            help="replay exactly this schedule string (as a failure report prints it); at most "
            f"{MAX_REPLAY_STEPS:,} steps once its *n runs are expanded, each n from 1 to that"
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the result as JSON")] = False,
    list_: Annotated[bool, typer.Option("--list", help="list the scenarios, by design, and exit")] = False,
    engine: Annotated[
        str, typer.Option(help="local | ray: with ray, run --swarm N searches on Ray (docs/scale-out.md)")
    ] = "local",
    address: RayAddressOption = None,
    workers: Annotated[
        int | None,
        count("with --swarm: searches running at once (default: all, as CPUs allow)", high=MAX_SWARM),
    ] = None,
    swarm_size: Annotated[
        int | None,
        count(
            "with --engine ray: this many independent random/pct searches, seeds --seed, --seed+1, ...;"
            " the first failure wins",
            "--swarm",
            high=MAX_SWARM,
        ),
    ] = None,
) -> None:
    """Explore the interleavings of a built-in scenario under the controlled scheduler."""
    if not list_:
        hash_seeds_run.fix(hash_seed, hash_seeds, as_json)  # its hash seed (a re-run, or children)
    # (a program of the user's own needs none of the built-in scenarios: their designs' import was
    # half a second of the start-up, review 13's C2; no built-in name holds a ":")
    own_named = scenario is not None and not list_ and own_program.is_own(scenario)
    groups = {} if own_named else grouped_scenarios()
    table = {name: factory for group in groups.values() for name, factory in group.items()}
    if list_:
        if as_json:
            typer.echo(json.dumps({group: sorted(names) for group, names in groups.items()}, indent=2))
        else:
            typer.echo(listing(groups))
        raise typer.Exit(EXIT_OK)
    if scenario is None:
        if not as_json:
            typer.echo(listing(groups), err=True)
        raise CommandError(
            "no scenario named: give one listed above, e.g. `lanecheck explore counter-locked`"
        )
    with _program_output_to_stderr() if as_json else contextlib.nullcontext():  # (its import's prints)
        own = (
            own_program.load(scenario, seed_value)
            if scenario not in table and own_program.is_own(scenario)
            else None
        )
    if own is None and scenario not in table:
        near = difflib.get_close_matches(scenario, table, n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise CommandError(f"unknown scenario {scenario!r}{hint} (see lanecheck explore --list)")
    if strategy not in STRATEGIES:
        raise CommandError(f"{strategy!r} is not one of {', '.join(STRATEGIES)}", "--strategy")
    if races is None and own is None:
        races = scenario_races(scenario)
    if backend not in BACKENDS:
        raise CommandError(f"{backend!r} is not one of {', '.join(BACKENDS)}", "--backend")
    if replay is not None and not replay.strip():
        # Not "no replay": an empty string (an unset shell variable) would run a whole search instead.
        raise CommandError("an empty schedule string replays nothing; give one a report printed", "--replay")
    _check_engine(engine, address, workers, swarm_size, strategy, replay)
    if not sleep_sets and strategy != STATES:
        raise CommandError("it is for the state search: it needs --strategy states", "--no-sleep-sets")
    options = Options(
        strategy="dfs" if strategy == STATES else strategy,  # type: ignore[arg-type]
        preemption_bound=preemption_bound,
        max_executions=max_executions,
        max_steps=max_steps,
        time_limit=time_limit,
        seed=seed_value,
        backend=backend,  # type: ignore[arg-type]
        spurious_wakeups=spurious_wakeups,
        virtual_timeouts=virtual_timeouts,
        timeout_limit=timeout_limit,
        fair_sleeps=fair_sleeps,
        races=races,
        interleave_races=interleave_races,
        replay=replay,
    )
    if swarm_size is not None:
        if own is not None:
            raise CommandError(
                "a swarm runs the built-in scenarios (its workers rebuild them by name)", "--swarm"
            )
        _run_swarm(scenario, options, swarm_size, address, workers, interleave_races, as_json)
    program = own[1] if own is not None else build_scenario(scenario, for_states=strategy == STATES)
    err = Console(stderr=True)
    try:
        with (
            _program_output_to_stderr() if as_json else contextlib.nullcontext(),
            patched(own[0], *own_program.siblings(own[0])) if own is not None else contextlib.nullcontext(),
            patch_random.from_import(own.draws) if own is not None else contextlib.nullcontext(),
            progress.executions(
                err,
                f"exploring {scenario}",
                enabled=not as_json and replay is None,
                max_executions=max_executions,
                time_limit=time_limit,
            ) as tick,
        ):
            on_execution = None if tick is None else _on_execution(tick)
            if strategy == STATES:
                from model_checks.harness.stateful import check_states

                result = check_states(program, options, sleep_sets=sleep_sets)
            else:
                result = check(program, options, on_execution=on_execution)
    except UsageError as exc:
        option = "--interleave-races" if interleave_races else "--strategy" if strategy == STATES else None
        raise CommandError(explore_words.not_deterministic(str(exc)), option) from None
    except (ReplayDivergence, ValueError) as exc:
        option = "--replay" if replay is not None else None
        why = str(exc)
        if isinstance(exc, ReplayDivergence):
            why += f"; {explore_words.DIVERGED % process_seed.SEED}"
        raise CommandError(why, option) from None
    if result.failure is not None:
        flag = (" --interleave-races" if interleave_races else "") + hash_seeds_run.replay_flag()
        if own is not None and own.draws.touched and seed_value:
            flag += f" --seed {seed_value}"  # (its import drew from the generator seeded so)
        result.replay_hint = f"lanecheck explore {scenario}{flag} --replay {result.failure.schedule}"
    if as_json:
        facts = _as_json(scenario, result)
        facts.update(hash_seed=process_seed.SEED, replay=result.replay_hint or None)
        typer.echo(json.dumps(facts, indent=2, default=str))
        _rest_of_stdout_to_stderr()
    else:
        typer.echo(result.report())
    if result.failure is not None:
        raise typer.Exit(EXIT_FAILED)
    raise typer.Exit(EXIT_BOUNDED if result.verdict == "bounded" else EXIT_OK)


@contextlib.contextmanager
def _program_output_to_stderr() -> Iterator[None]:
    """With ``--json`` stdout is the JSON only: what the explored program prints (``print``,
    ``sys.stdout``, a write to file descriptor 1) goes to stderr while it runs. Kept in the JSON
    it would be the output of every execution at once (a review's ``print`` of the clocks made
    the JSON unreadable)."""
    sys.stdout.flush()
    saved = _moved_fd(1, 2)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _rest_of_stdout_to_stderr() -> None:
    """With ``--json`` on the command line, once the JSON is out what the process prints until it
    ends (the program's ``atexit`` functions) goes to stderr: stdout stays the JSON only."""
    if not hash_seeds_run.is_command_line():
        return  # (a test calling the command in-process keeps its own streams)
    sys.stdout.flush()
    saved = _moved_fd(1, 2)
    if saved is not None:
        os.close(saved)
        sys.stdout = sys.stderr


def _moved_fd(fd: int, to: int) -> int | None:
    """Point ``fd`` at ``to``'s file; return a copy of what it was (None: not a file here)."""
    try:
        saved = os.dup(fd)
    except OSError:
        return None
    try:
        os.dup2(to, fd)
    except OSError:
        os.close(saved)
        return None
    return saved


def _check_engine(
    engine: str,
    address: str | None,
    workers: int | None,
    swarm_size: int | None,
    strategy: str,
    replay: str | None,
) -> None:
    """Refuse engine options that do not go together, before any work."""
    check_engine(engine, address)
    if engine == "local":
        for given, option in ((swarm_size, "--swarm"), (address, "--address"), (workers, "--workers")):
            if given is not None:
                raise CommandError("runs on Ray: give --engine ray too", option)
        return
    if swarm_size is None:
        raise CommandError("on Ray, explore runs a swarm of searches: give --swarm N", "--engine")
    if strategy not in SWARM_STRATEGIES:
        raise CommandError(
            f"a swarm runs independent {' or '.join(SWARM_STRATEGIES)} searches, not {strategy}", "--strategy"
        )
    if replay is not None:
        raise CommandError("a replay runs one schedule, here: drop --engine ray", "--replay")


def _run_swarm(
    scenario: str,
    options: Options,
    n: int,
    address: str | None,
    workers: int | None,
    interleave_races: bool,
    as_json: bool,
) -> None:
    from model_checks.explorer.ray.session import RayUnavailable, connect
    from model_checks.harness.swarm import swarm

    try:
        ray = connect(address, 1)
        outcome = swarm(ray, partial(build_scenario, scenario), options, n, at_once=workers)
    except RayUnavailable as problem:
        raise CommandError(str(problem), problem.option) from None
    result = outcome.result
    if result.failure is not None:
        flag = " --interleave-races" if interleave_races else ""
        result.replay_hint = f"lanecheck explore {scenario}{flag} --replay {result.failure.schedule}"
    won = (
        "no failure"
        if outcome.winner is None
        else f"search {outcome.winner} (seed {outcome.seeds[outcome.winner]})"
    )
    facts = {
        "searches": n,
        "seeds": [outcome.seeds[0], outcome.seeds[-1]],
        "ran": len(outcome.per_search),
        "stopped": outcome.stopped,
        "winner": outcome.winner,
        "winner_seed": None if outcome.winner is None else outcome.seeds[outcome.winner],
        "executions_per_search": outcome.per_search,
        "distinct_outcomes": len(result.outcomes),
    }
    if as_json:
        typer.echo(json.dumps({**_as_json(scenario, result), "swarm": facts}, indent=2, default=str))
    else:
        typer.echo(
            f"swarm of {n} searches on Ray (seeds {outcome.seeds[0]}..{outcome.seeds[-1]}): {won};"
            f" {outcome.stopped} stopped early, {len(result.outcomes)} distinct final outcomes"
        )
        typer.echo(result.report())
    raise typer.Exit(EXIT_FAILED if result.failure is not None else EXIT_BOUNDED)


def _on_execution(tick: progress.Tick) -> Callable[[Result], None]:
    def on_execution(r: Result) -> None:
        tick(r.executions, r.max_preemptions)

    return on_execution


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
