"""The one options object (like loom's ``model::Builder``) and the result of a check."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from model_checks.harness import hash_seed

if TYPE_CHECKING:
    from model_checks.harness.strategies.frontier import Feedback

Strategy = Literal["dpor-ipb", "dpor", "dfs", "random", "pct", "portfolio", "coverage"]
# Not a ``Strategy`` of ``check``: the name under which `lanecheck explore --strategy` and a verify
# row's options ask for ``stateful.check_states`` (DFS pruning prefixes that reach an abstract
# state already explored; its exhaustive verdict says it is over abstract states).
STATES = "states"
Backend = Literal["greenlet", "threads"]
Verdict = Literal["exhaustive", "bounded", "failed"]


@dataclass(frozen=True)
class Options:
    """Every knob of an exploration. Defaults give a sound, exhaustive DPOR search, shallow bugs first.

    ``strategy``            "dpor-ipb" (default: exhaustive with partial-order reduction, its pending
                            points taken fewest preemptions first: few-preemption bugs early, the
                            same proof), "dpor" (the same DPOR, depth-first), "dfs" (plain
                            exhaustive depth-first), "random" (uniform),
                            "pct" (Burckhardt et al. 2010),
                            "portfolio" (DPOR and PCT executions in turn: shallow bugs early, still
                            "exhaustive" when the DPOR part completes), "coverage" (coverage-guided
                            sampling toward goals ``feedback`` reports open; strategies/frontier.py).
    ``preemption_bound``    at most this many preemptive context switches per execution; when it cuts
                            anything the verdict is "bounded". With a bound, "dpor" and "dpor-ipb" run
                            plain bounded DFS (DPOR + sleep sets is unsound under a preemption bound).
    ``max_executions``      stop after this many executions (verdict "bounded" if the space was not covered).
    ``max_steps``           steps per execution; exceeding it is a "livelock" failure.
    ``time_limit``          seconds for the whole search (verdict "bounded" when it cuts the search).
    ``seed``                seed of "random"/"pct"; the same seed gives the same executions. In patch
                            mode also of the program's random draws (``patch_random``).
    ``pct_depth``           PCT bug depth d (d-1 priority change points).
    ``backend``             "greenlet" (fast) or "threads" (real OS threads passed a baton).
    ``spurious_wakeups``    ``Condition.wait`` may return without a notify, as an explored choice.
    ``virtual_timeouts``    True: a blocked wait with a timeout may time out at any point, as an explored
                            choice (and a sleep may end at any point). False: timeouts expire, and
                            sleeps end, only when no thread can run otherwise (earliest deadline first).
    ``spurious_limit``      at most this many spurious wakeups per thread per execution (keeps the space
                            finite; a cut makes the verdict "bounded").
    ``timeout_limit``       at most this many explored timeouts per thread per execution; beyond it a
                            thread times out only when nothing else can run.
    ``minimize``            after a failure, look for a schedule with fewer preemptions (bounded DFS).
    ``minimize_executions`` budget of that search.
    ``replay``              a schedule string: run exactly that one execution.
    ``keep_going``          exhaustive strategies: do not stop at the first failure; collect every
                            failure kind in ``Result.failure_kinds`` (the first failure is reported).
    ``races``               run the data-race detector in every execution (a race is a ``data_race``
                            failure; docs/harness.md, "Data races"). None (default): on in patch mode,
                            off otherwise. Off, an exhaustive verdict says "synchronisation points only"
                            (a proof only for a data-race-free program).
    ``interleave_races``    (implies ``races``) a race's two access sites become scheduling points and the
                            search starts again, so it also runs the racy accesses in both orders and
                            reports their consequence (a lost update's wrong final value); with none,
                            the first race is the failure. docs/harness.md, "Interleaving the races".
    ``feedback``            for "coverage" (required there, refused elsewhere): the program's coverage
                            feedback (``strategies.frontier.Feedback``).
    ``fair_sleeps``         True (default): a thread that sleeps again while a thread able to run at its
                            last sleep has not run since (a spin) gives way to the threads able to run
                            until each has run once (CHESS's fairness for threads that yield), so a
                            correct spin-wait with a sleep ends instead of being a ``livelock``; a
                            verdict then covers those fair schedules (it says so). False: a sleeping
                            thread may run on, as any step.
    """

    strategy: Strategy = "dpor-ipb"
    preemption_bound: int | None = None
    max_executions: int | None = None
    max_steps: int = 2_000
    time_limit: float | None = None
    seed: int = 0
    pct_depth: int = 3
    backend: Backend = "greenlet"
    spurious_wakeups: bool = False
    virtual_timeouts: bool = True
    spurious_limit: int = 1
    timeout_limit: int = 2
    minimize: bool = True
    minimize_executions: int = 2_000
    replay: str | None = None
    keep_going: bool = False
    races: bool | None = None
    interleave_races: bool = False
    feedback: Feedback | None = None
    fair_sleeps: bool = True

    def with_(self, **changes: object) -> Options:
        """A copy with some fields changed."""
        return replace(self, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True)
class StepRecord:
    """One row of a failure table: one scheduling step."""

    index: int
    thread: str
    tid: int
    operation: str
    obj: str
    source: str
    preemption: bool


@dataclass
class Failure:
    """What went wrong in the failing execution, and how to get it back."""

    kind: (
        str  # "exception" | "assertion" | "invariant" | "deadlock" | "lost_wakeup" | "livelock" | "data_race"
    )
    message: str
    schedule: str
    steps: list[StepRecord] = field(default_factory=list)
    preemptions: int = 0
    details: str = ""  # traceback, blocked threads with stacks
    trace_events: list[object] = field(default_factory=list)
    table: str = ""

    def report(self, replay_hint: str = "") -> str:
        lines = [f"{self.kind}: {self.message}", "", self.table]
        if self.details:
            lines += ["", self.details]
        if self.trace_events:
            lines += ["", "trace events emitted during the failing execution:"]
            lines += [f"  {event}" for event in self.trace_events]
        lines += ["", f"schedule ({len(self.steps)} steps, {self.preemptions} preemptions): {self.schedule}"]
        if replay_hint:
            lines.append(f"replay: {replay_hint}")
        return "\n".join(lines)


@dataclass
class Result:
    """Outcome of ``check``: a verdict, the figures, and the failure if any."""

    verdict: Verdict
    strategy: str
    executions: int = 0
    steps: int = 0
    max_preemptions: int = 0
    elapsed: float = 0.0
    pruned: int = 0  # actions DPOR / sleep sets proved redundant (not executed)
    failure: Failure | None = None
    bounded_by: list[str] = field(default_factory=list)  # why the verdict is "bounded"
    notes: list[str] = field(default_factory=list)
    outcomes: set[object] = field(default_factory=set)  # values returned by the test's final check
    failure_kinds: set[str] = field(default_factory=set)
    replay_hint: str = ""
    races: bool = False  # the data-race detector ran in every execution
    # a sleeping thread was held back for fairness in some execution (``Options.fair_sleeps``)
    fair: bool = False
    # what the program's random draws were held to, if it drew (``patch_random.held``)
    draws: str = ""

    @property
    def ok(self) -> bool:
        """No failure found (the verdict may still be "bounded")."""
        return self.failure is None

    def figures(self) -> str:
        return (
            f"{self.executions} executions, {self.steps} steps, max {self.max_preemptions} preemptions, "
            f"{self.pruned} pruned, {self.elapsed:.2f}s"
        )

    def verdict_text(self) -> str:
        """The verdict with what it covers: "exhaustive" is a proof for a data-race-free program
        when the race detector ran, and only at synchronisation points when it did not."""
        if self.verdict != "exhaustive":
            return self.verdict
        # the schedules a fair scheduler excludes were not run: the claim covers the fair ones
        fair = (
            "; fair at sleeps: a thread sleeping again before the threads able to run at its last "
            "sleep had run gave way to them"
            if self.fair
            else ""
        )
        if self.races:
            return (
                "exhaustive (for a data-race-free program: every execution explored at "
                f"synchronisation-point granularity, no data race{fair})"
            ) + self.held_fixed()
        return f"exhaustive (synchronisation points only{fair})" + self.held_fixed()

    def held_fixed(self) -> str:
        """What an exhaustive verdict holds for besides the schedules: the str/bytes hash seed
        (set and dict orders), and the random draws if the program drew (session 40's review: a
        verdict followed the process's hash seed, or the OS's seed of ``random``, unnamed)."""
        held = [hash_seed.describe(), *([self.draws] if self.draws else [])]
        return f" [held fixed: {'; '.join(held)}]"

    def summary(self) -> str:
        head = f"{self.verdict_text()} ({self.strategy}): {self.figures()}"
        if self.bounded_by:
            # A failure is definite whatever bounded the search that found it: "bounded" beside
            # "failed" read as a doubt about the failure (review 8).
            how = "bounded by" if self.failure is None else "found under"
            head += f"; {how} {', '.join(self.bounded_by)}"
        return head

    def report(self) -> str:
        text = self.summary()
        if self.notes:
            text += "\n" + "\n".join(f"note: {n}" for n in self.notes)
        if self.failure is not None:
            text += "\n\n" + self.failure.report(self.replay_hint)
        return text
