"""``check_states``: exhaustive search with state-hash pruning (issue 16, "proofs, not bounds").

DFS over scheduling choices that stops an execution at an abstract state it has already
explored (``strategies/stateful.py``; the state is ``rt/fingerprint.py``'s), with sleep sets by
default (steps that commute with one already taken are not run again). Where DPOR must run
every Mazurkiewicz trace of a program, this runs each reachable *state* once: a small program whose
traces are many but whose states are few (a producer/consumer around one lock) gets a proof.

The verdict says its granularity: ``exhaustive over abstract states`` — every reachable state
(the model's objects, each thread's frames with their locals and value stacks, the heap they
reach) at synchronisation-point granularity. With sleep sets (the default) it says so: every
state is visited but transitions that commute with one already taken are not run again, so a
cycle (a livelock) is reported where the search meets one and is not otherwise ruled out; the
proof is then, as DPOR's, for a terminating program. With the race detector on, races are checked in the
executions run, but pruning cuts executions, so this is no proof of data-race freedom.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from model_checks.harness.api import heap_frozen
from model_checks.harness.declared import Installed, install_points, remove_points
from model_checks.harness.execution import TestFn, resolved
from model_checks.harness.options import Options, Result
from model_checks.harness.patch_random import positions
from model_checks.harness.rt.fingerprint import end_search, fingerprint, timeless_fingerprint
from model_checks.harness.rt.scheduler import Execution, UsageError
from model_checks.harness.searching import Search
from model_checks.harness.strategies.stateful import StateCachingChooser

STRATEGY = "dfs+states"
GRANULARITY = (
    "exhaustive over abstract states (every reachable state explored at synchronisation-point "
    "granularity; a state is the controlled objects' model plus each thread's frames, locals, "
    "value stack and the heap they reach)"
)
# with sleep sets, the same states but not every transition: a cycle is not ruled out
SLEEP_GRANULARITY = (
    "exhaustive over abstract states (every reachable state visited at synchronisation-point "
    "granularity, with sleep sets: steps that commute with one already taken are not run again, "
    "so a livelock is found only where the search meets its cycle: a proof for a terminating "
    "program; a state is the controlled objects' model plus each thread's frames, locals, value "
    "stack and the heap they reach)"
)


@dataclass
class StatefulResult(Result):
    """A ``Result`` whose exhaustive verdict names what state pruning proved."""

    states: int = 0  # abstract states stored (every point with a choice of two or more steps)
    states_pruned: int = 0  # executions stopped at a state already explored
    unhashed: int = 0  # scheduling points whose state could not be taken (not pruned there)
    single: int = 0  # new scheduling points with one action to take (not fingerprinted)
    sleep_sets: bool = False  # transitions commuting with one taken were skipped
    sleep_blocked: int = 0  # executions stopped where every enabled action was asleep

    def figures(self) -> str:
        # a verify row shows these, not the verdict's text: they say it was a search over states
        sleeping = " (sleep sets)" if self.sleep_sets else ""
        return f"{super().figures()}, {self.states} abstract states{sleeping}"

    def verdict_text(self) -> str:
        if self.verdict != "exhaustive":
            return self.verdict
        granularity = SLEEP_GRANULARITY if self.sleep_sets else GRANULARITY
        if self.races:
            return (
                granularity[:-1]
                + ("; no data race in the executions run, not a proof of data-race freedom)")
                + self.held_fixed()
            )
        return granularity[:-1] + "; synchronisation points only)" + self.held_fixed()


def _with_draws(
    state_of: Callable[[Execution], Hashable | None],
) -> Callable[[Execution], Hashable | None]:
    """``state_of`` and, once the execution drew random values, where its threads are in their
    draws (``patch_random.positions``): the draws to come decide the future too."""

    def fingerprint_with_draws(ex: Execution) -> Hashable | None:
        state = state_of(ex)
        drawn = positions(ex)
        return state if state is None or not drawn else (state, drawn)

    return fingerprint_with_draws


def check_states(
    test_fn: TestFn,
    options: Options | None = None,
    *,
    fingerprint_fn: Callable[[Execution], Hashable | None] | None = None,
    sleep_sets: bool = True,
    **overrides: Any,
) -> Result:
    """Explore every reachable abstract state of ``test_fn(rt)`` (see the module's docstring).

    Takes the ``check`` options that apply to an exhaustive search (``max_executions``,
    ``time_limit``, ``max_steps``, ``spurious_wakeups``, ``races``, ...). Refused: a
    ``preemption_bound`` (a state's future would depend on the preemptions spent reaching it),
    ``interleave_races`` (it restarts the search with new scheduling points), ``replay``,
    ``keep_going`` and a sampling strategy.

    ``fingerprint_fn`` replaces ``rt/fingerprint.fingerprint`` (called at each new scheduling
    point, from the chooser) for a program that keeps part of its state outside what the generic
    walk sees: the Work Lane link's state search (``designs/work_lane/link/reachable.py``) keeps
    the trace's automaton position there instead of the trace, and pairs it with the generic
    fingerprint. It must keep the contract: equal values, equal futures.

    ``sleep_sets`` (default): skip the transitions that commute with one already taken
    (``strategies/stateful.py``). Every state is still visited, not every transition: a caller
    that needs every transition (the link's coverage of spec steps, an edge each) passes False.

    The result is a ``StatefulResult`` (its figures: ``states``, ``states_pruned``, ``unhashed``,
    ``single``, ``sleep_blocked``)."""
    opts = (options or Options()).with_(**overrides) if overrides else (options or Options())
    if opts.preemption_bound is not None:
        raise UsageError("state pruning needs an unbounded search: not with preemption_bound")
    if opts.interleave_races:
        raise UsageError(
            "state pruning does not restart with new scheduling points: not with interleave_races"
        )
    if opts.replay or opts.keep_going:
        raise UsageError("state pruning explores: not with replay or keep_going (use check)")
    if opts.strategy not in ("dpor", "dpor-ipb", "dfs"):
        raise UsageError(f"state pruning is an exhaustive search: not with strategy {opts.strategy!r}")
    opts = resolved(opts)
    s = Search(test_fn, opts, STRATEGY)
    r = s.result = StatefulResult(
        verdict="exhaustive", strategy=STRATEGY, races=bool(opts.races), sleep_sets=sleep_sets
    )
    # The declared fields' descriptors stay on their classes for the whole search (an execution's
    # ``install_points`` then finds them there), installed before the chooser takes the objects
    # alive: the fingerprint seeds them and the classes' dicts keep their versions, where one
    # pair installed and removed by each execution made every state rewrite the static section.
    fields: Installed = []
    try:
        if opts.races:
            install_points(fields)
        chooser = StateCachingChooser(
            _with_draws(fingerprint_fn or fingerprint),
            sleep_sets=sleep_sets,
            # (a caller's own state function keeps its own idea of time; without virtual
            # timeouts the deadlines decide which wait ends first: they are state)
            timeless_fn=_with_draws(timeless_fingerprint)
            if fingerprint_fn is None and opts.virtual_timeouts
            else None,
        )
        # Frozen once the pre-existing objects are known (the chooser took them), as ``check``
        # freezes them: every execution makes cyclic garbage, and the full collections then no
        # longer walk the rest of the process.
        with heap_frozen():
            _search(s, r, chooser)
    finally:
        end_search()  # lets go of the objects that were alive before the search
        remove_points(fields)
    r.pruned = chooser.pruned
    r.states, r.states_pruned, r.unhashed = len(chooser.visited), chooser.states_pruned, chooser.unhashed
    r.single, r.sleep_blocked = chooser.single, chooser.sleep_blocked
    slept = f", {chooser.sleep_blocked} stopped with every action asleep" if sleep_sets else ""
    r.notes.append(
        f"state pruning: {len(chooser.visited)} abstract states, {chooser.states_pruned} executions "
        f"stopped at an explored state{slept}, {chooser.unhashed} scheduling points not "
        f"fingerprinted ({chooser.single} more with one action to take)"
    )
    _timeout_cuts(r, opts, chooser)
    s.finish()  # fills in ``r``
    return r


def _timeout_cuts(r: StatefulResult, opts: Options, chooser: StateCachingChooser) -> None:
    """A search that ran every timeout ``timeout_limit`` withheld from the same state at another
    arrival is not bounded by it (``strategies/stateful.TimeoutCuts``)."""
    cut = f"timeout_limit={opts.timeout_limit}"
    if cut not in r.bounded_by or not chooser.cuts.resolved():
        return
    r.bounded_by.remove(cut)
    r.notes.append(
        f"{cut}: each timeout the limit withheld was taken from the same state (clock, deadlines "
        "and timeout counts aside: no thread read the clock) at another point of the search, so "
        "every state reachable with any number of timeouts was explored; a loop that times out for "
        "ever while another thread could run is not a fair execution and is not searched"
    )


def _search(s: Search, r: StatefulResult, chooser: StateCachingChooser) -> None:
    while True:
        chooser.start_execution()
        ex = s.run(chooser)
        if s.take_restart():  # (a stream rebound: prints made operations, ``patch_streams``)
            chooser.restart()
            if ex.failure is not None or s.stop_for_budget():
                break
            continue
        chooser.ended(ex)
        confirmed = chooser.cycle_outcome(ex)
        if confirmed is not None:
            r.notes.append(confirmed)
        if chooser.conflation is not None:
            # two different states had one fingerprint: any pruning so far may have cut real
            # executions, so the search proves nothing (a failure it met is still real)
            r.bounded_by.append(f"state fingerprint conflated two states ({chooser.conflation})")
            break
        if ex.failure is not None or not chooser.advance():
            break
        if s.stop_for_budget():
            break
