"""Check 4: model-based testing of the reference ``WorkerScheduler`` with Hypothesis.

A ``RuleBasedStateMachine`` drives the reference under the controlled runtime, one rule at a time:

- ``post(p, lane)``: producer ``p`` gets one more post in its script (lane 0.., or ``None`` = a
  handle of no scheduler); it happens when ``p`` is stepped;
- ``step(thread)``: run that controlled thread (``p0``, ``p1``, ``w0``, ``w1`` or the stopper
  ``s0``) until it logs a trace event and leaves the critical section it logged in, blocks, runs
  out of script or takes ``STEP_CAP`` steps;
- ``step_n(thread, n)``: run that thread exactly ``n`` scheduling points (1..``MAX_FINE_STEPS``),
  or until it blocks or runs out of script: this stops a thread *between* two of its steps that
  log nothing, e.g. a worker between its emptiness check and the lane mutex;
- ``stop(mode)`` (once): ``s0`` calls ``Stop(drain|discard)``, then is stepped as above;
- ``wake(thread)`` (with ``spurious_wakeups``): a thread parked in a condition wait wakes
  without a notify (a spurious wakeup, which real condition variables allow), one step, then
  is stepped by later rules.

The harness cannot pause an execution between rules, so every rule re-runs the program from the
start with a ``PrefixChooser``: it replays the thread order chosen by the earlier rules (by thread
name, step for step), then runs the rule's thread and abandons the execution (``None``). This is
sound because adding a post only extends a producer's script past the point where it stopped (a
producer that ran out of script waits at a yield point with no side effect, and its exit is never
run), and the stopper's mode is fixed before its first step.

After every rule the machine checks the reference's observable results against the spec: the
events so far are a prefix of the previous rule's (determinism), the validator allows them (a
prefix verdict), every result code ``try_post`` returned equals its ``post`` event's ``result``, and
``stop``'s result agrees with ``stop_end``/``stop_rejected``, and when no thread but the parked ones
can run, every accepted item was invoked or discarded and a Stop that began has returned (the
spec's weak fairness: a lost wakeup otherwise). Hypothesis shrinks a failure to a
minimal rule sequence. ``machine_for(build)`` builds the machine for a reference mutant.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from model_checks.conformance.validator import validate_lines
from model_checks.designs.work_lane.link.scenario import (
    Builder,
    Event,
    LinkScenario,
    Program,
    Run,
    post_scripted,
    start_scheduler,
)
from model_checks.harness import Options
from model_checks.harness.api import run_once
from model_checks.harness.rt.objects import NORMAL, SPURIOUS, Action
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.runtime import ControlledRuntime
from reference.results import Result as TkResult
from reference.scheduler import StopMode, WorkerScheduler
from reference.tracing import RecordingTracer

STEP_CAP = 40  # harness steps one ``step`` rule may take
INIT_CAP = 2_000  # steps of ``main`` to start the scheduler and every thread
MAX_POSTS = 3  # per producer
MAX_FINE_STEPS = 4  # scheduling points one ``step_n`` rule may take
RESULT_NAMES = {
    TkResult.SUCCESS: "ok",
    TkResult.CAPACITY_EXCEEDED: "capacity_exceeded",
    TkResult.INVALID_ARGUMENT: "invalid_argument",
    TkResult.INVALID_STATE: "invalid_state",
}


class Divergence(AssertionError):
    """Re-running the program did not follow the recorded thread order (non-determinism)."""


SPURIOUS_MARK = "~"  # a prefix entry "w0~": w0's spurious wakeup

# Called before every execution a rule starts, in order: where a run may be stopped between two
# executions of the reference (a test's CPU budget), never inside one.
BEFORE_EXECUTION: list[Callable[[], None]] = []


@dataclass
class PrefixChooser:
    """Replay ``prefix`` (thread names; "name~" a spurious wakeup), then run ``goal`` until it
    logs, blocks or hits ``cap`` (``spurious``: its first step is a spurious wakeup)."""

    prefix: list[str]
    goal: str | None
    cap: int
    until_event: bool = True  # False: take exactly ``cap`` steps of ``goal`` (unless it blocks)
    spurious: bool = False
    run: list[Run] = field(default_factory=list)  # the execution's Run (``link_program`` on_start)
    taken: int = 0
    base: int | None = None  # trace length when the goal thread started
    logged: bool = False
    divergence: str | None = None
    runnable: list[str] = field(default_factory=list)  # threads that could run when it stopped
    wakeable: list[str] = field(default_factory=list)  # threads that could wake spuriously then

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        i = len(ex.steps)
        self.runnable = [ex.threads[tid].name for tid, alt in enabled if alt == NORMAL]
        self.wakeable = [ex.threads[tid].name for tid, alt in enabled if alt == SPURIOUS]
        past = i >= len(self.prefix)
        want = self.goal if past else self.prefix[i]
        if want is None or (past and self.taken >= self.cap):
            return None
        wanted_alt = NORMAL
        if past and self.spurious and self.taken == 0:
            wanted_alt = SPURIOUS
        elif want.endswith(SPURIOUS_MARK):
            want, wanted_alt = want[: -len(SPURIOUS_MARK)], SPURIOUS
        for tid, alt in enabled:
            if alt == wanted_alt and ex.threads[tid].name == want:
                if past and want.startswith("p") and _exits(ex, tid):
                    return None  # a later ``post`` rule may still extend its script
                if past and self.until_event and self.logged and not _releases(ex, tid):
                    return None
                if past:
                    if self.base is None:
                        self.base = len(self.run[0].tracer) if self.run else 0
                    self.taken += 1
                return (tid, alt)
        if not past:
            self.divergence = f"step {i}: thread {want} is not enabled on re-execution"
        return None  # the goal thread is blocked or finished (or logged and left its lock)

    def after_step(self, ex: Execution) -> None:
        if self.base is not None and self.run:
            new = self.run[0].tracer.events()[self.base :]
            self.logged = any(e["thread"] == self.goal for e in new)


def _releases(ex: Execution, tid: int) -> bool:
    # Events are logged inside critical sections; pausing a thread there only blocks the others,
    # while pausing it right after the release opens the windows between two critical sections
    # (e.g. a producer that published under the lane mutex and still owes the submission).
    pending = ex.threads[tid].pending
    return pending is not None and pending.kind == "release"


def _exits(ex: Execution, tid: int) -> bool:
    pending = ex.threads[tid].pending
    return pending is not None and pending.kind == "exit"


@dataclass
class Observed:
    events: list[Event]
    posts: list[tuple[str, str, TkResult]]
    stops: list[tuple[str, TkResult]]
    steps: list[str]  # thread names of the execution's steps ("name~": a spurious wakeup)
    runnable: list[str]  # threads that could have taken another step
    wakeable: list[str]  # threads parked in a condition wait (a spurious wakeup could move them)


def execute(
    scenario: LinkScenario,
    build: Builder,
    prefix: list[str],
    goal: str | None,
    cap: int,
    *,
    until_event: bool = True,
    spurious: bool = False,
    spurious_wakeups: bool = False,
) -> Observed:
    """One execution from the start: replay ``prefix``, then step ``goal`` (``spurious``: its
    first step a spurious wakeup, which needs ``spurious_wakeups``)."""
    for hook in BEFORE_EXECUTION:
        hook()
    chooser = PrefixChooser(list(prefix), goal, cap, until_event, spurious)
    program = mbt_program(scenario, build, chooser.run.append)
    options = Options(
        max_steps=100_000, virtual_timeouts=False, spurious_wakeups=spurious_wakeups, spurious_limit=100
    )
    ex = run_once(program, options, chooser, sources=False)
    if chooser.divergence is not None:
        raise Divergence(chooser.divergence)
    if ex.failure is not None:
        raise AssertionError(f"harness failure: {ex.failure.kind}: {ex.failure.message}")
    run = chooser.run[0]
    return Observed(
        events=run.tracer.events(),
        posts=list(run.post_results),
        stops=list(run.stop_results),
        steps=[ex.threads[s.tid].name + (SPURIOUS_MARK if s.alt == SPURIOUS else "") for s in ex.steps],
        runnable=list(chooser.runnable),
        wakeable=list(chooser.wakeable),
    )


def mbt_program(sc: LinkScenario, build: Builder, on_start: Callable[[Run], None]) -> Program:
    """``scenario.link_program`` with a scheduling point before every post (so a post added by a
    later rule happens at a step of its own, even one that needs no lock: an invalid handle), one
    stopper ``s0`` of mode ``sc.stops[0]``, and no clean-up (executions are always abandoned)."""

    def program(rt: ControlledRuntime) -> object:
        tracer = RecordingTracer()
        run = Run(tracer)
        on_start(run)
        sched, handles = start_scheduler(sc, build, rt, tracer)

        def producer(p: int) -> Callable[[], None]:
            def body() -> None:
                # Two yield points before every post and one after the last: a producer that ran
                # out of script waits at "next", where a longer script (a later ``post`` rule)
                # goes on to "post" and this one to its exit, which the chooser never runs. Both
                # steps are free of side effects, so the longer script replays this one exactly.
                for k, lane in enumerate(sc.script[p]):
                    rt.yield_point("next")
                    rt.yield_point("post")
                    post_scripted(run, sched, handles, p, k, lane)
                rt.yield_point("next")

            return body

        def stopper() -> None:
            run.stop_results.append(("s0", sched.stop(StopMode(sc.stops[0]))))

        threads = [rt.start_thread(producer(p), f"p{p}") for p in range(len(sc.script))]
        threads.append(rt.start_thread(stopper, "s0"))
        for t in threads:
            t.join()
        return None

    return program


def machine_for(
    build: Builder = WorkerScheduler,
    *,
    lanes: int = 2,
    workers: int = 2,
    capacity: int = 2,
    budget: int = 1,
    producers: int = 2,
    spurious_wakeups: bool = False,
) -> type[RuleBasedStateMachine]:
    """The state machine over ``build`` (``WorkerScheduler`` or a reference mutant's builder).
    ``spurious_wakeups`` adds the ``wake`` rule (off by default, as in the harness: every rule
    more dilutes the search for the others)."""
    threads = [f"p{i}" for i in range(producers)] + [f"w{i}" for i in range(workers)] + ["s0"]
    lane_choices: list[int | None] = [*range(lanes), None]

    class WorkerSchedulerMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.script: list[list[int | None]] = [[] for _ in range(producers)]
            self.stop_mode: str | None = None
            self.prefix: list[str] = []
            self.seen: Observed | None = None

        def scenario(self) -> LinkScenario:
            return LinkScenario(
                lanes=lanes,
                workers=workers,
                capacity=capacity,
                budget=budget,
                script=tuple(tuple(s) for s in self.script),
                stops=(self.stop_mode or "drain",),  # s0 is never stepped before ``stop``
            )

        spurious = False  # does the harness offer spurious wakeups (the ``wake`` rule)

        def advance(self, goal: str, cap: int, *, until_event: bool = True, spurious: bool = False) -> None:
            obs = execute(
                self.scenario(),
                build,
                self.prefix,
                goal,
                cap,
                until_event=until_event,
                spurious=spurious,
                spurious_wakeups=self.spurious,
            )
            self.prefix = obs.steps
            self.check(obs)
            self.seen = obs

        def check(self, obs: Observed) -> None:
            if self.seen is not None:
                old = self.seen.events
                assert obs.events[: len(old)] == old, "re-execution changed the events already seen"
            header = {
                "trace": "lanecheck",
                "version": 1,
                "design": "work-lane",
                "config": self.scenario().constants().header(),
            }
            verdict = validate_lines([json.dumps(header), *(json.dumps(e) for e in obs.events)])
            assert verdict.allowed, f"validator: rule {verdict.rule}: {verdict.message}"
            for p in range(producers):
                name = f"p{p}"
                results = [r for thread, _, r in obs.posts if thread == name]
                posted = [e for e in obs.events if e["thread"] == name and e["event"] == "post"]
                assert len(posted) >= len(results), f"{name}: try_post returned without a post event"
                for k, result in enumerate(results):
                    assert RESULT_NAMES.get(result) == posted[k]["result"], (
                        f"{name} post {k}: try_post returned {result.name}, "
                        f"the trace says {posted[k]['result']}"
                    )
            self.check_progress(obs)
            for thread, result in obs.stops:
                ends = [e for e in obs.events if e["thread"] == thread and e["event"] == "stop_end"]
                rejected = [e for e in obs.events if e["thread"] == thread and e["event"] == "stop_rejected"]
                if result is TkResult.SUCCESS:
                    assert ends and ends[-1]["result"] == "ok", f"{thread}: stop ok without stop_end ok"
                else:
                    assert rejected, f"{thread}: stop returned {result.name} without stop_rejected"

        def check_progress(self, obs: Observed) -> None:
            # The threads the machine parks on purpose (a producer with its script done, the
            # stopper before ``stop``) are not stuck; if nothing else can run, the spec's weak
            # fairness still demands progress for every accepted item and every Stop that began.
            parked = {f"p{p}" for p in range(producers) if self.posts_done(obs, p) >= len(self.script[p])}
            if self.stop_mode is None:
                parked.add("s0")
            if not all(name in parked for name in obs.runnable):
                return
            accepted = sum(1 for e in obs.events if e["event"] == "post" and e["result"] == "ok")
            done = sum(1 for e in obs.events if e["event"] == "invoke")
            done += sum(len(e["items"]) for e in obs.events if e["event"] == "discard")
            assert accepted == done, (
                f"lost wakeup: no thread can run while {accepted - done} accepted item(s) wait"
            )
            if self.stop_mode is not None:
                assert obs.stops, f"Stop({self.stop_mode}) began but can never return: no thread can run"

        def posts_done(self, obs: Observed, p: int) -> int:
            return sum(1 for t, _, _ in obs.posts if t == f"p{p}")

        @initialize()
        def start(self) -> None:
            self.advance("main", INIT_CAP)

        @precondition(lambda self: any(len(s) < MAX_POSTS for s in self.script))
        @rule(p=st.integers(0, producers - 1), lane=st.sampled_from(lane_choices))
        def post(self, p: int, lane: int | None) -> None:
            if len(self.script[p]) < MAX_POSTS:
                self.script[p].append(lane)

        def steppable(self, thread: str) -> bool:
            if thread == "s0" and self.stop_mode is None:
                return False
            if thread.startswith("p") and self.seen is not None:
                p = int(thread[1:])
                if self.posts_done(self.seen, p) >= len(self.script[p]):
                    return False  # nothing left to post: stepping it would let it exit
            return True

        @rule(thread=st.sampled_from(threads))
        def step(self, thread: str) -> None:
            if self.steppable(thread):
                self.advance(thread, STEP_CAP)

        @rule(thread=st.sampled_from(threads), n=st.integers(1, MAX_FINE_STEPS))
        def step_n(self, thread: str, n: int) -> None:
            # A window between two scheduling points of one call (a check and the lock that
            # should cover it) is where the sub-event bugs live; ``step`` always jumps over it.
            if self.steppable(thread):
                self.advance(thread, n, until_event=False)

        @precondition(lambda self: self.stop_mode is None)
        @rule(mode=st.sampled_from(["drain", "discard"]))
        def stop(self, mode: str) -> None:
            self.stop_mode = mode
            self.advance("s0", STEP_CAP)

    if not spurious_wakeups:
        return WorkerSchedulerMachine

    class WithSpuriousWakeups(WorkerSchedulerMachine):
        spurious = True

        @precondition(lambda self: self.seen is not None and bool(self.seen.wakeable))
        @rule(data=st.data())
        def wake(self, data: st.DataObject) -> None:
            # Real condition variables may return from wait without a notify; correct code
            # re-checks its condition in a loop (the ``if-not-while`` mutant does not).
            assert self.seen is not None
            thread = data.draw(st.sampled_from(sorted(set(self.seen.wakeable))), label="thread")
            if self.steppable(thread):
                self.advance(thread, 1, until_event=False, spurious=True)

    return WithSpuriousWakeups
