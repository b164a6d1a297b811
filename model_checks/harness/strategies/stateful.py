"""Exhaustive depth-first search with state caching: plain DFS (no DPOR) over abstract states.

Each execution re-runs the test from the start, replaying the choices on ``stack``, then takes
new ones. At every new scheduling point the execution's abstract state is fingerprinted
(``rt/fingerprint.py``); a state met before is not explored again: the execution is abandoned
there (counted in ``states_pruned``).

Why this is sound (the classic graph-DFS argument): a state is marked on its first arrival, and
a frame's backtrack set is *every* enabled action, so every action enabled at a marked state is
run from it before the search ends; a later arrival at the same state (equal fingerprint, same
future: ``fingerprint``'s contract) either lies in that state's own subtree (a cycle: the
subtree is being explored) or comes after it was finished. So every reachable abstract state is
reached and every transition out of one is taken: every deadlock (a state with nothing enabled),
invariant failure (checked after each step into a state), failure raised by a step, and final
outcome (a function of the final state) is found. A state that cannot be fingerprinted (None) is
never marked nor pruned: the search is then plain DFS there.

Why not DPOR: DPOR decides what to explore at a state from the races of the *continuations* it
ran; pruning a continuation at a visited state drops the races it would have revealed, and a
sleep set with which a state was first explored may exclude what a later arrival needs
(Yang, Chen, Gopalakrishnan, Kirby 2008). Plain DFS needs neither, and state caching is what
makes it finite in practice on small programs.

A state met again *on the current path* is a cycle: some schedule repeats it forever, which the
plain search reports as a ``livelock`` when it runs past ``max_steps``. The fingerprint is not
trusted with that claim: the execution goes on repeating the cycle's choices (``pumping``) until
it runs past ``max_steps`` — the plain search's own evidence, a real execution whose schedule
replays it. If a repeated choice is not enabled, or the execution ends or fails first, the two
states were not the same: the fingerprint conflated them (``conflation`` says where), so no
pruning of this search can be trusted and ``check_states`` says so instead of a verdict (a
failure met while pumping is real and is reported).

Not with a preemption bound: the bound makes a state's future depend on the preemptions spent
on the way there (refused by ``harness.stateful``).

With ``sleep_sets`` (``check_states``' default), transitions that commute with one already taken
are skipped, as in Godefroid, Holzmann and Pirottin's "State-space caching revisited" (CAV 1992;
Godefroid 1996, ch. 5): a node's sleep set holds actions explored from an ancestor and
independent of every step since (``rt.objects.dependent``, DPOR's relation), which lead to states
reached that way; a state is stored with the sleep set it was explored with, and met again with a
sleep set that does not cover the stored one, the actions asleep then but awake now are run from
it and the stored set shrinks to the intersection. Every reachable state is still visited, so
deadlocks, invariant failures, failing steps and final outcomes are all found; not every
transition is taken, so a cycle is found where the search meets it on its path (pumped as
above), and the search, like DPOR, is a proof for terminating programs. The saving is in the
executions that plain DFS stops at a state reached by another order of the same steps.

While no execution has read the clock, states are keyed without the clock, the deadlines and
the timeout counters (``rt/fingerprint.timeless_fingerprint``), and a timeout that
``timeout_limit`` withholds is a bound only if no other arrival at its state took it
(``TimeoutCuts``: session 48, polling loops).

A scheduling point where one action is awake is not fingerprinted (``single``): with nothing to
choose, the state after it is met again at the next point that has a choice, so storing it saves
no execution, and a point stored or not is sound for state caching (the cited paper stores only
some states). A cycle through such points only runs on to ``max_steps``: the plain search's
livelock, found the plain way.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from model_checks.harness.rt.enabled import can_run
from model_checks.harness.rt.fingerprint import begin_search, fingerprint
from model_checks.harness.rt.objects import TIMEOUT, Action, Op, dependent
from model_checks.harness.rt.records import Replay, check_replayed
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.strategies.dependency import (
    NO_THREADS,
    ClockReaders,
    as_global,
    clock_conflict,
    ident_op,
)
from model_checks.harness.strategies.observed import IDENTS_STATE, Observed


class _Frame:
    __slots__ = ("chosen", "enabled", "exact", "key", "ops", "sleep", "todo", "wrote")

    def __init__(
        self,
        enabled: list[Action],
        key: Hashable | None,
        awake: list[Action],
        sleep: set[Action],
        ops: dict[int, Op],
        exact: Hashable | None = None,
    ) -> None:
        self.enabled = enabled
        self.key = key
        self.exact = exact  # ``key`` with the clock, deadlines and timeout counters (cycles)
        self.chosen = awake[0]
        self.todo = awake[1:]
        self.sleep = sleep  # asleep here: on arrival, then every action explored from here
        self.ops = ops  # each live thread's pending operation (empty without sleep sets)
        # the actions explored here whose step changed the process's state (``process_watch``):
        # dependent with every step, so never asleep after another thread's
        self.wrote: set[Action] = set()


NONE: frozenset[Action] = frozenset()
Used = tuple[tuple[int, int], ...]  # a thread's timeouts taken, thread by thread


def _offers_timeout(enabled: list[Action]) -> bool:
    # (a state where a timeout is offered, taken or asleep, may be where one withheld elsewhere
    # is taken: stored though it has one action awake, ``TimeoutCuts``)
    return any(action[1] == TIMEOUT for action in enabled)


class TimeoutCuts:
    """Where ``timeout_limit`` withheld a timeout, and whether the search ran it from the same
    state anyway (session 48).

    A thread that has timed out ``timeout_limit`` times may time out again only when no other
    thread can run (``rt/enabled.py``): each such withheld timeout is a choice the model without
    the limit offers and the search did not take, so it made the verdict "bounded". With
    ``timeless_fingerprint`` the state leaves out the clock and the counters, and a poll that
    timed out and changed nothing is back in a state the search knows — one where the same
    timeout was offered below the limit and taken. The cut is then harmless: every state the
    unbounded model reaches is reached. The argument, graph search over the unbounded model's
    states: from a state, every action that model offers is run at some explored arrival, or is
    asleep there (the sleep set's argument), or was withheld at every explored arrival — the
    last is what ``open`` keeps; a state stored is stored with its sleep set *and* its withheld
    timeouts, so a later arrival that is offered one runs it (``_revisit``). The search is
    "bounded by timeout_limit" only if some state keeps one open at the end, or one was
    withheld at a point whose state could not be taken.

    An arrival stops at an explored state only if that state was explored with no more timeouts
    taken, thread by thread (``covered``): with more left it can do what the later one can, so a
    search that stays bounded still covers what the search with the counters in the state
    covered (up to which wait is earliest when nothing else can run, decided by deadlines the
    state leaves out: the unbounded model's argument above does not need them). And a state met
    again on the current path with other counters or another clock is not pruned: it is no cycle
    of the search's model (the counters go up), and cutting there would stop the path before the
    limit makes the timeouts wait for an idle moment, where timeouts that fire for ever while
    nothing else can run — a livelock — are met. A loop that only times out while another thread
    could run is not fair to that thread and is no livelock here, as before (the limit ended it)."""

    def __init__(self) -> None:
        self.open: dict[Hashable, frozenset[Action]] = {}  # withheld at every explored arrival
        # the timeouts each thread had taken at each explored arrival (``covered``)
        self.budgets: dict[Hashable, list[Used]] = {}
        self.on_path: dict[Hashable, int] = {}  # states of the current path (by ``key``)
        self.unhashed = False  # one was withheld where the state could not be taken
        self.seen = False  # any was withheld

    def withheld(self, ex: Execution, enabled: list[Action]) -> frozenset[Action]:
        """The timeouts the limit (or the earliest-deadline rule when nothing else can run)
        keeps out of ``enabled``: blocked timed waits whose timeout is not offered."""
        used = ex.timeouts_used
        if not ex.virtual_timeouts or not used or max(used.values()) < ex.timeout_limit:
            return NONE
        out = []
        for t in ex.live:
            op = t.pending
            if op is None or op.timeout is None or not op.timeout >= 0:
                continue
            action = (t.tid, TIMEOUT)
            if action not in enabled and not can_run(ex, op, t.tid):
                out.append(action)
        if out:
            self.seen = True
        return frozenset(out)

    def covered(self, key: Hashable, used: Used | None) -> bool:
        """May an arrival at ``key`` with ``used`` timeouts taken stop there (an explored one had
        taken no more, thread by thread)? Not one on the current path."""
        if key in self.on_path:
            return False
        if used is None:
            return True
        mine = dict(used)
        return any(all(n <= mine.get(tid, 0) for tid, n in other) for other in self.budgets.get(key, ()))

    def arrived(
        self,
        key: Hashable,
        stored: frozenset[Action] | None,
        sleep: set[Action],
        cut: frozenset[Action],
        used: Used | None = None,
    ) -> frozenset[Action]:
        """An explored arrival at ``key``: what the state is stored with from now on."""
        if used is not None:
            self.budgets.setdefault(key, []).append(used)
        withheld = cut - sleep
        if stored is None:
            if withheld:
                self.open[key] = withheld
            return frozenset(sleep | cut)
        still = self.open.get(key)
        if still is not None:
            if still & withheld:
                self.open[key] = still & withheld
            else:
                del self.open[key]
        return stored & (sleep | cut)

    def enter(self, key: Hashable) -> None:
        self.on_path[key] = self.on_path.get(key, 0) + 1

    def leave(self, key: Hashable) -> None:
        n = self.on_path.pop(key)
        if n > 1:
            self.on_path[key] = n - 1

    def resolved(self) -> bool:
        """Every withheld timeout was run from its state at another arrival."""
        return not self.unhashed and not self.open


class StateCachingChooser:
    """One instance drives a whole search (many executions)."""

    trusted = True

    def __init__(
        self,
        fingerprint_fn: Callable[[Execution], Hashable | None] = fingerprint,
        sleep_sets: bool = False,
        timeless_fn: Callable[[Execution], Hashable | None] | None = None,
    ) -> None:
        self.fingerprint = fingerprint_fn
        self.sleep_sets = sleep_sets
        # the state without the clock, deadlines and timeout counters (``timeless_fingerprint``),
        # used while no execution has read the clock (``clock_read``): then a timed-out poll
        # that changed nothing meets a state explored before (``TimeoutCuts``)
        self.timeless_fn = timeless_fn
        self.timeless = timeless_fn is not None
        self.clock_read = False  # an execution read the clock: start again with ``fingerprint``
        self.cuts = TimeoutCuts()
        self.needs_after_step = sleep_sets
        # the objects alive before the first execution: the fingerprint writes them by reference
        # (rt/seeds.py)
        begin_search()
        self.stack: list[_Frame] = []
        self.replay_len = 0
        # explored states -> the sleep set they were explored with (empty without sleep sets)
        self.visited: dict[Hashable, frozenset[Action]] = {}
        self.on_path: dict[Hashable, int] = {}  # states of the current path -> their step
        self.states_pruned = 0  # executions stopped at a state already explored
        self.unhashed = 0  # scheduling points whose state could not be fingerprinted
        self.single = 0  # new scheduling points with one action awake (not fingerprinted)
        self.sleep_blocked = 0  # executions stopped where every enabled action was asleep
        self.pruned = 0
        self.next_sleep: set[Action] = set()
        self.clock_readers = ClockReaders()
        # a cycle being confirmed: its first step, the step that came back, its choices
        self.cycle: tuple[int, int, list[Action]] | None = None
        self.conflation: str | None = None  # why a cycle did not repeat: the fingerprint's hole
        self.observed = Observed()  # idents read: spawns and exits ordered, the pool in a state

    def start_execution(self) -> None:
        self.cycle = None
        self.next_sleep = set()

    def restart(self) -> None:
        """The program's scheduling points changed (a rebinding of ``sys.stdout`` made every
        ``print`` one: ``patch_streams``): the states explored so far were explored with fewer,
        so none may cut an execution now; the search starts again from the empty path."""
        self.stack.clear()
        self.replay_len = 0
        self.visited.clear()
        self.on_path.clear()
        self.cuts = TimeoutCuts()
        self.start_execution()

    def replay_prefix(self) -> Replay:
        """The steps an execution re-runs on its way to the branch ``advance`` chose: run by the
        execution itself (``Replay``), with no call here but ``after_step`` of the branch's step
        (whose child's sleep set it works out). The replayed steps are most of the steps of the
        search: two Python calls each cost about a tenth of an execution (session 20)."""
        frames = self.stack[: self.replay_len]
        return Replay([f.enabled for f in frames], [f.chosen for f in frames], max(0, self.replay_len - 1))

    def after_step(self, ex: Execution) -> None:
        d = len(ex.steps) - 1
        if d != len(self.stack) - 1 or self.cycle is not None:
            return  # a replayed step (its child's sleep set is on the stack), or pumping
        step = ex.steps[d]
        f = self.stack[d]
        ops = f.ops
        op = ident_op(step.op) if self.observed.idents else step.op
        # (a full collection: ``Execution``; lifetimes observed: ``observed``)
        if ex.process_written is not None or ex.collected or self.observed.lifetimes:
            op = as_global(op)
            f.wrote.add(f.chosen)
        read, moved = self.clock_readers.saw(ex, step.tid), ex.clock_moved
        readers = self.clock_readers.threads() if moved else NO_THREADS
        self.next_sleep = {
            b
            for b in f.sleep
            if b[0] != step.tid
            and b[0] in ops
            and b not in f.wrote
            and not dependent(ident_op(ops[b[0]]) if self.observed.idents else ops[b[0]], op)
            and not clock_conflict(read, moved, b[0], ops[b[0]], readers)
        }

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        d = len(ex.steps)
        if self.cycle is not None:
            return self._pump(ex, enabled)
        if d < self.replay_len:
            # (an execution runs the prefix itself, ``replay_prefix``: this is the way of one that
            # does not, tests/harness/test_replay_prefix.py's reference)
            f = self.stack[d]
            check_replayed(d, f.enabled, enabled)
            return f.chosen
        sleep = self.next_sleep
        self.next_sleep = set()
        awake = [a for a in enabled if a not in sleep] if sleep else list(enabled)
        if self.timeless and (ex.seen or ex.clock_read):
            self.clock_read = True  # (``advance`` starts again with the exact state)
        # the timeouts the limit withholds here (the unbounded model would offer them)
        cut = self.cuts.withheld(ex, enabled)
        if not awake:
            self.sleep_blocked += 1
            self.pruned += len(enabled)
            if cut or (self.timeless and _offers_timeout(enabled)):
                # an arrival that runs nothing, every action offered asleep (``TimeoutCuts``)
                self._asleep(ex, sleep, cut)
            return None
        key: Hashable | None = None
        exact: Hashable | None = None
        if len(awake) == 1 and not cut and not (self.timeless and _offers_timeout(enabled)):
            self.single += 1
        else:
            key = self._key(ex)
            if key is None:
                self.unhashed += 1
                self.cuts.unhashed = self.cuts.unhashed or bool(cut)
            else:
                exact = self._exact(ex, key)
            if exact is not None and exact in self.on_path:
                # a cycle: the plain search would go round it until max_steps (a livelock); go
                # round it here too, so that the livelock reported is one execution really run
                first = self.on_path[exact]
                self.cycle = (first, d, [(st.tid, st.alt) for st in ex.steps[first:d]])
                return self._pump(ex, enabled)
            if key is not None:
                stored = self.visited.get(key)
                used = tuple(sorted(ex.timeouts_used.items())) if self.timeless else None
                if stored is not None and self.cuts.covered(key, used):
                    again = self._revisit(stored, sleep, enabled, cut)
                    if again is None:
                        self.states_pruned += 1
                        self.pruned += len(enabled)
                        return None
                    awake, sleep = again
                self.visited[key] = self.cuts.arrived(key, stored, sleep, cut, used)
        self.pruned += len(enabled) - len(awake)
        ops: dict[int, Op] = {}
        if self.sleep_sets:
            ops = {t.tid: t.pending for t in ex.threads if t.pending is not None and not t.finished}
        f = _Frame(list(enabled), key, awake, sleep, ops, exact)
        if exact is not None:
            self.on_path[exact] = d
            self.cuts.enter(key)
        self.stack.append(f)
        self.replay_len = len(self.stack)
        return f.chosen

    def _asleep(self, ex: Execution, sleep: set[Action], cut: frozenset[Action]) -> None:
        key = self._key(ex)
        if key is None:
            self.cuts.unhashed = self.cuts.unhashed or bool(cut)
            return
        used = tuple(sorted(ex.timeouts_used.items())) if self.timeless else None
        self.visited[key] = self.cuts.arrived(key, self.visited.get(key), sleep, cut, used)

    def _key(self, ex: Execution) -> Hashable | None:
        # (a state after a step that changed the process's state is not fingerprinted: the
        # fingerprint reads no C state, such as the locale; ``process_watch``)
        if ex.process_dirty:
            return None
        timeless = self.timeless_fn
        key = timeless(ex) if timeless is not None and self.timeless else self.fingerprint(ex)
        if key is not None and self.observed.idents:
            key = (key, IDENTS_STATE[0]())
        return key

    def _exact(self, ex: Execution, key: Hashable) -> Hashable:
        """``key`` with what ``timeless_fingerprint`` leaves out: what ``fingerprint`` holds."""
        if not self.timeless:
            return key
        deadlines = tuple((t.tid, t.pending.deadline) for t in ex.threads if t.pending is not None)
        return (key, float.hex(ex.clock), tuple(sorted(ex.timeouts_used.items())), deadlines)

    @staticmethod
    def _revisit(
        stored: frozenset[Action],
        sleep: set[Action],
        enabled: list[Action],
        cut: frozenset[Action] = frozenset(),
    ) -> tuple[list[Action], set[Action]] | None:
        """A state explored before, met again with ``sleep``: None if nothing is left to run
        from it, else the actions to run (asleep when it was explored, awake now) and the sleep
        set to run them with (the intersection, which the state is stored with from now on).
        ``stored`` also holds the timeouts withheld when it was explored (``TimeoutCuts``): one
        offered now runs now; one withheld now too is still not run."""
        if stored <= sleep or stored <= sleep | cut:
            return None
        awake = [a for a in enabled if a in stored and a not in sleep]
        return (awake, set(stored & sleep)) if awake else None

    def _pump(self, ex: Execution, enabled: list[Action]) -> Action | None:
        assert self.cycle is not None
        first, back, choices = self.cycle
        d = len(ex.steps)
        action = choices[(d - back) % len(choices)]
        if action not in enabled:
            self.conflation = (
                f"the state at step {back} had the fingerprint of step {first}, but repeating "
                f"steps {first}..{back - 1} failed at step {d}: {action} is not enabled there"
            )
            return None
        return action

    def ended(self, ex: Execution) -> None:
        """After an execution: did it read the clock (last, after its last choice)?"""
        if self.timeless and (ex.seen or ex.clock_read):
            self.clock_read = True

    def cycle_outcome(self, ex: Execution) -> str | None:
        """After an execution: a note if it confirmed a cycle; records a conflation if a cycle
        it met did not repeat (the execution ended, or failed otherwise, first)."""
        if self.cycle is None:
            return None
        first, back, _ = self.cycle
        if ex.failure is not None and ex.failure.kind == "livelock" and self.conflation is None:
            return (
                f"livelock confirmed: the state of step {first} came back at step {back}, and "
                f"repeating steps {first}..{back - 1} ran the execution past max_steps"
            )
        if self.conflation is None:
            how = "it ended" if ex.failure is None else f"it failed ({ex.failure.kind})"
            self.conflation = (
                f"the state at step {back} had the fingerprint of step {first}, but repeating "
                f"steps {first}..{back - 1} did not run on forever: {how} at step {len(ex.steps)}"
            )
        return None

    def advance(self) -> bool:
        """Move to the next unexplored branch; False when the search is complete."""
        if self.observed.switched():  # a larger relation and finer states: start again
            self.restart()
            return True
        if self.clock_read and self.timeless:
            # a read shows the clock: states that differ only in it may no longer be merged
            self.timeless = False
            self.restart()
            return True
        while self.stack:
            f = self.stack[-1]
            if f.todo:
                if self.sleep_sets:
                    f.sleep.add(f.chosen)  # explored from here: asleep in the next branches
                f.chosen = f.todo.pop(0)
                self.replay_len = len(self.stack)
                return True
            if f.exact is not None:
                del self.on_path[f.exact]
                self.cuts.leave(f.key)
            self.stack.pop()
        return False
