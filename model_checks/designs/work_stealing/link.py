"""Spec and reference on the same traces, for the work-stealing pool's smallest scenario.

``spec_traces(constants)``: every complete behaviour of ``spec/work_stealing.py`` (with the
one-worker step below) projected to trace events (``trace_export.project``);
``reference_traces(scenario)``: the distinct traces of every execution of the reference pool
under exhaustive DPOR (each also validated as a complete trace). Both are sets of tuples of
``thread event k=v ...`` words after one normalisation (``normalised``), which says what
each side has that the other does not model:

* **task ids**: the reference names root ``r<i>`` and its ``j``-th child ``r<i>.c<j>``; they
  are renamed to the spec's ``roots[i]`` and ``children(roots[i])[j]`` (``a``, ``b``, ``c``);
* **the client**: the reference's ``main`` is the spec's ``client``; its external ``join``
  and everything from ``stop_begin`` on are dropped (the spec's client submits and is done;
  it has no Stop);
* **unpark**: logged by the waker in the reference, by the woken worker in the spec; both
  become thread ``w<worker>``;
* **the idle tail**: the events after the last ``done`` (empty takes and steals, a ``park``)
  are dropped on both sides: the spec ends with every worker parked, while the reference's
  Stop may wake a worker before it parks.

**One worker.** The spec asks for two workers (a thief needs a victim); the reference with
two workers is beyond an exhaustive CI budget (docs/work-stealing.md). ``ONE_WORKER`` is the
spec with that assumption dropped and one step added: a worker with no victim at all goes to
park, as the reference's empty victim round does. Everything else is the spec's.

Every reference trace must be a spec trace; the spec has more (orders the reference's
coarser steps never produce). This is the event pool's link (``event_pool/trace/link.py``)
for this design; tests/work_stealing/test_link.py pins the counts and a failing mutant.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from model_checks.conformance.judged_once import JudgedOnce as GenericJudgedOnce
from model_checks.designs.work_stealing.scenarios import PoolScenario, pool_program
from model_checks.designs.work_stealing.trace import judge
from model_checks.designs.work_stealing.trace_export import project
from model_checks.harness import Options, check
from model_checks.harness.logged_steps import logged_as_steps
from model_checks.harness.options import Result
from model_checks.harness.runtime import ControlledRuntime
from reference.tracing import RecordingTracer
from reference.work_stealing import PoolBase, WorkStealingPool, header
from spec import work_stealing as ws
from spec.language import Action, Instance, Spec, Transition, variant

Trace = tuple[str, ...]
Event = dict[str, Any]
CLIENT = "client"
IDLE = {"take", "steal", "park", "unpark"}  # what a worker logs while it finds nothing


def NoVictim(c: ws.Constants, s: ws.Vars, w: str) -> object:
    """The only worker, after its deque and the injector: no victim to try, go park."""
    me = ws.at(s, w, ws.STEAL)
    if me is None or c.workers > 1:
        return None
    return ws.goto(s, w, ws.Local(ws.SLEEPY, stack=me.stack))


def one_worker(spec: Spec) -> Spec:
    """``spec`` (the work-stealing spec or one of its mutants) runnable with one worker."""
    return variant(
        spec,
        spec.variant or "one-worker",
        add_actions=(Action("NoVictim", NoVictim, (ws.Workers,), None, NoVictim.__doc__ or ""),),
        drop_assumptions=("Sizes",),
    )


ONE_WORKER: Spec = one_worker(ws.SPEC)


# -- the spec side ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Before:
    """A stand-in step whose state is the one a transition leaves from (see ``_step_events``)."""

    state: Any
    action: str = "Before"
    process: str = "-"
    fields: None = None
    event: None = None


def _step_events(c: ws.Constants, before: Any, t: Transition) -> list[Event]:
    # ``project`` reports a task's ``done`` at the first step whose state has it done; led by a
    # stand-in carrying ``before``, it reports only what ``t`` itself completes.
    already = project(c, [_Before(before)])  # type: ignore[list-item]
    return project(c, [_Before(before), t])[len(already) :]  # type: ignore[list-item]


def spec_traces(constants: ws.Constants, spec: Spec = ONE_WORKER) -> set[Trace]:
    """The normalised projected traces of every complete behaviour of ``spec`` (depth-first,
    memoised per state)."""
    inst = Instance(spec, constants)
    Frozen = tuple[tuple[str, Any], ...]  # an event as hashable items

    @functools.cache
    def suffixes(state: Hashable) -> frozenset[tuple[Frozen, ...]]:
        """The projected events of every complete behaviour from ``state`` on."""
        steps = list(inst.successors(state))
        ends: set[tuple[Frozen, ...]] = {()} if not steps and inst.is_terminal(state) else set()
        for t in steps:
            head = tuple(tuple(e.items()) for e in _step_events(constants, state, t))
            ends.update(head + rest for rest in suffixes(t.state))
        return frozenset(ends)

    found: set[Trace] = set()
    for s in inst.initial_states():
        found |= {normalised([dict(e) for e in events], {}) for events in suffixes(s)}
    return found


# -- the reference side ------------------------------------------------------------------------


def trace_lines(tracer: RecordingTracer) -> list[str]:
    """The JSON Lines of a work-stealing trace recorded by ``tracer`` (header first)."""
    assert tracer.config is not None, "the tracer was never attached to a pool"
    return [json.dumps(header(tracer.config))] + [json.dumps(e) for e in tracer.events()]


class JudgedOnce(GenericJudgedOnce[bool]):
    """Judges the traces of one search with the fast validator, each distinct trace once
    (``conformance.judged_once``: a trace known by a digest of its lines, remembered only once
    allowed; a refused one fails the search). ``judged``/``seen`` count the work."""

    def __init__(self, *, complete: bool) -> None:
        super().__init__(self._allowed, keep=bool)
        self.complete = complete

    def _allowed(self, lines: Sequence[str]) -> bool:
        verdict = judge(json.loads(lines[0]), iter(lines[1:]), complete=self.complete)
        assert verdict.code == 0, f"trace not allowed: {verdict.message}"
        return True


def traced_program(
    sc: PoolScenario,
    *,
    build: Callable[..., PoolBase] = WorkStealingPool,
    validate: bool = True,
    collect: bool = False,
    judged_once: JudgedOnce | None = None,
    logged_steps: bool = False,
) -> Callable[[ControlledRuntime], object]:
    """``pool_program(sc)`` with the pool traced: each execution's trace is reported in a failure,
    validated as a complete trace at its end (``validate``: a refused trace fails the search
    with the verdict; each distinct trace of the search judged once, ``JudgedOnce``), and returned
    as the execution's outcome (``collect``: its event lines). A test may pass ``judged_once``
    (judging complete traces) to read its counts. ``logged_steps``: each event is a step of its
    own (``harness.logged_steps``), so the search also stops a thread between a change and its
    event."""
    judge_once = JudgedOnce(complete=True) if judged_once is None else judged_once

    def program(rt: ControlledRuntime) -> object:
        tracers: list[RecordingTracer] = []

        def make(**options: Any) -> PoolBase:
            tracer = RecordingTracer()
            tracers.append(tracer)
            rt.trace(lambda: list(tracer.events()))
            return build(**{**options, "tracer": logged_as_steps(rt, tracer) if logged_steps else tracer})

        final = pool_program(sc, build=make)(rt)
        assert callable(final) and len(tracers) == 1

        def judged() -> tuple[str, ...] | None:
            lines = trace_lines(tracers[0])
            if validate:
                judge_once(lines)
            return tuple(lines[1:]) if collect else None

        return [final, judged]

    return program


def task_names(sc: PoolScenario, c: ws.Constants) -> dict[object, object]:
    """The reference's task ids -> the spec's: ``r<i>`` -> ``roots[i]``, ``r<i>.c<j>`` -> its j-th child."""
    names: dict[object, object] = {}
    for i, root in enumerate(c.roots[: sc.roots]):
        names[f"r{i}"] = root
        for j, kid in enumerate(c.children(root)[: sc.children]):
            names[f"r{i}.c{j}"] = kid
    return names


def reference_traces(
    sc: PoolScenario, c: ws.Constants, build: Callable[..., PoolBase] = WorkStealingPool
) -> tuple[set[Trace], Result]:
    """The normalised distinct traces of the reference under exhaustive DPOR, and the result
    (``validate`` off: a mutant's traces are compared, not judged)."""
    program = traced_program(sc, build=build, validate=build is WorkStealingPool, collect=True)
    result = check(program, Options(strategy="dpor", time_limit=120))
    names = task_names(sc, c)
    traces: set[Trace] = set()
    for outcome in result.outcomes:
        assert isinstance(outcome, tuple) and len(outcome) == 2, outcome  # (final's value, the lines)
        traces.add(normalised([json.loads(line) for line in outcome[1]], names, client="main"))
    return traces, result


# -- the comparison ------------------------------------------------------------------------------


def normalised(events: Iterable[Event], names: dict[object, object], client: str = CLIENT) -> Trace:
    """The trace as both sides are compared (see the module docstring): words, renamed, cut."""
    kept: list[Event] = []
    for e in events:
        if e["event"] == "stop_begin":
            break
        if e["thread"] == client and e["event"] == "join":
            continue  # the reference's external join: the spec's client does not join
        e = {k: (names.get(v, v) if k == "task" else v) for k, v in e.items() if k != "seq"}
        if e["thread"] == client:
            e["thread"] = CLIENT
        if e["event"] == "unpark":
            e["thread"] = f"w{e['worker']}"
        kept.append(e)
    while kept and kept[-1]["event"] in IDLE:
        kept.pop()
    return tuple(_words(e) for e in kept)


def _words(e: Event) -> str:
    rest = " ".join(f"{k}={e[k]}" for k in sorted(e) if k not in ("thread", "event"))
    return f"{e['thread']} {e['event']} {rest}".rstrip()


@dataclass(frozen=True)
class Link:
    """One comparison: every reference trace must be a spec trace."""

    spec: set[Trace]
    reference: set[Trace]
    result: Result

    @property
    def reference_only(self) -> set[Trace]:
        return self.reference - self.spec

    @property
    def ok(self) -> bool:
        return self.result.verdict == "exhaustive" and self.result.failure is None and not self.reference_only


# The smallest pool scenario: one worker, one root forking two children and joining them.
SCENARIO = PoolScenario(workers=1, children=2)
CONSTANTS = ws.Constants(
    workers=1,
    capacity=2,
    tasks=(("a", ("b", "c")), ("b", ()), ("c", ())),
    roots=("a",),
    join=True,
    memory="sc",
)


def compare(
    sc: PoolScenario = SCENARIO,
    c: ws.Constants = CONSTANTS,
    *,
    build: Callable[..., PoolBase] = WorkStealingPool,
    spec: Spec = ONE_WORKER,
) -> Link:
    """Spec traces of ``c`` against the reference's traces of ``sc`` (``build``: a reference mutant)."""
    ref, result = reference_traces(sc, c, build)
    return Link(spec_traces(c, spec), ref, result)
