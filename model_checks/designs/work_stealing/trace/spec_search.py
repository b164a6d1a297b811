"""Work-stealing traces judged by the streaming search of the spec's own actions: the cross-check of
the hand-written ``FORMAT`` (``Design.spec_trace_format``).

The same lines as ``FORMAT`` reads (its header limits and schema, its check of each event's fields),
judged by ``conformance.search.TraceSearch`` over ``spec/work_stealing_open.py``: WorkStealing's
deque and parking steps, unchanged, in a pool whose task tree the trace reveals. The search holds
the set of spec states some behaviour could be in, closed under the steps the trace does not log
(a take's ``bottom`` store, a steal's loads, a push's write, registering to park, the notifies, a
join's wait and resume). The binding (docs/work-stealing-trace.md, "The spec engine"):

* each worker event is the labelled step of that worker (``steal`` from ``"injector"`` is its
  ``PopInjector``); ``unpark`` is the woken worker's ``Unpark`` whatever thread logs it;
  ``submit`` ok, ``stop_begin``, ``stop_end`` and the stopper's ``discard`` are the client's (a
  refused submit is no step: the task stays with the caller); a worker's ``discard`` is its
  ``DiscardHeld``;
* a task is added to the constants where the trace introduces it: a root at its ``submit`` ok, a
  child of the worker's innermost running task at its ``push``; an array generation at a
  ``resize`` past the known ones;
* ``join`` is no step: it says the task is done, and keeps the states where it is;
* a ``pool: "global-lock"`` header is refused by name: the spec is the stealing pool's.

Its checker is observable (``search``), so the review site's state coverage reads it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from model_checks.conformance.search import NoMatch, TraceSearch
from model_checks.conformance.streamed import DesignFormat, Event
from model_checks.conformance.verdict import Malformed, Rejected, plain
from model_checks.designs.work_stealing.trace.fields import EventFields
from model_checks.designs.work_stealing.trace.grow import SEARCHED
from model_checks.designs.work_stealing.trace.rules import RULES, Admission, deque_programs, owner_rule
from model_checks.designs.work_stealing.trace.spec_binding import (
    CLIENT,
    DEFERRED,
    FIELDS,
    MOVES_TO,
    WORKER_EVENTS,
    DiscardContext,
    enabled_at,
    local_pc,
    process,
    show,
    spec_event,
    why_no_step,
    why_not_discarded,
    with_generation,
    with_task,
)
from model_checks.designs.work_stealing.trace.stop import same_stopper
from model_checks.designs.work_stealing.trace.validate import DESIGN, HEADER_LIMITS
from spec import work_stealing_open as wo
from spec.work_stealing_state import ASLEEP, Show

# The search holds every slot of every array of every worker in each state: the sizes it takes.
MAX_WORKERS, MAX_CAPACITY = 8, 64


class CannotJudge(ValueError):
    """A well-formed trace this engine does not judge (``--engine fast`` does): not a verdict, so
    ``lanecheck validate`` says it as a usage error (exit 2 with ``error: ...``; in a batch the file
    is NOT VALIDATED), never as a malformed trace."""


def header_refusal(config: dict[str, Any]) -> str | None:
    """Why the spec engine does not judge traces under this (schema-valid) header, or None: the
    header is malformed (for the fast engine too), or (``CannotJudge``) beyond this engine."""
    capacity = config["capacity"]
    if capacity & (capacity - 1):
        return f"config.capacity must be a power of two, not {capacity}"
    if config["pool"] != "stealing":
        raise CannotJudge(
            f"the spec engine cannot judge a global-lock trace (config.pool is {config['pool']!r}); use "
            "--engine fast. The trace is not malformed: the spec engine judges the stealing pool only "
            "(spec/work_stealing_open.py has per-worker deques, the global-lock pool one LIFO queue)"
        )
    if config["workers"] > MAX_WORKERS or capacity > MAX_CAPACITY:
        raise CannotJudge(
            f"the spec engine cannot judge this trace: it holds every deque slot in each state, so at "
            f"most {MAX_WORKERS} workers and capacity {MAX_CAPACITY} (this trace: {config['workers']}, "
            f"{capacity}); use --engine fast"
        )
    return None


class StealingSearch:
    """The streaming judge of one work-stealing trace (a ``streamed.Checker``)."""

    def __init__(self, config: dict[str, Any], *, deferred: Mapping[str, frozenset[str]] = DEFERRED) -> None:
        """``deferred``: the internal steps the search defers (``{}``: every one taken at once, the
        cross-check of tests/work_stealing/test_spec_deferred.py)."""
        self.deferred = deferred
        self.refused = header_refusal(config)
        workers = int(config["workers"])
        self.fields = EventFields(workers)
        self.names = frozenset(f"w{i}" for i in range(workers))
        # A refused header is refused at its first event (or the end): no search of its size is
        # built, which for 5,000 workers would not fit in memory (its actions' instances alone).
        sized = (workers, int(config["capacity"])) if self.refused is None else (1, 1)
        self.c = wo.OpenConstants(workers=sized[0], capacity=sized[1], tasks=(), roots=())
        start = [] if self.refused is not None else [wo.Init(self.c)]
        self.search = self._search(start)
        self.running: dict[str, list[Any]] = {}  # worker -> its running tasks, innermost last
        self.known: set[Any] = set()  # tasks introduced so far
        self.stop_mode: str | None = None
        self.stopper = ("", 0)  # the thread and seq of stop_begin: its stop_end is that call's return
        self.complete = False
        self.started = False  # an event was taken: the mode is chosen
        self.admission = Admission()
        self.holder: dict[Any, str] = {}  # task -> the worker whose take or steal returned it
        self.discarded: set[Any] = set()

    def _search(self, start: list[Any]) -> TraceSearch:
        """The search, for a pool's trace or (``c.deques``) one of deque programs: every internal
        step deferred, each taken only when an event needs it (``spec_binding.DEFERRED``)."""
        return TraceSearch(
            SEARCHED,
            self.c,
            start,
            check_invariants=False,
            local=local_pc,
            enabled_at=enabled_at(self.c.deques),
            deferred=self.deferred,
            moves_to=MOVES_TO,
        )

    # -- the Checker protocol -------------------------------------------------------------------

    def step(self, ev: Event) -> None:
        if self.refused is not None:
            raise Malformed(1, f"line 1: {self.refused}")
        kind = ev["event"]
        if not self.fields.checks[kind](ev):
            line = ev["seq"] + 1  # seq continuity is checked first: line N holds seq N - 1
            raise Malformed(line, f"line {line}: {self.fields.problem(ev)}")
        if kind in WORKER_EVENTS and ev["thread"] != f"w{ev['worker']}":
            raise Rejected(
                owner_rule(kind),
                f"{show(ev)} — {kind} names worker {ev['worker']}: only thread w{ev['worker']} logs it",
            )
        if kind == "join":
            self._join(ev)
            return
        if kind == "submit" and self.admission.refused(ev):
            self._observed()  # refused: no step of the spec, the task stays with the caller
            return
        if kind == "stop_end" and ev["result"] != "ok":
            raise Rejected(8, f"{show(ev)} — the pool failed: no behaviour of the spec fails")
        if kind == "stop_end" and self.stop_mode is not None and not self.complete:
            same_stopper(ev, *self.stopper)
        if not self.started:
            self._choose_mode(ev)
        if kind == "submit":
            self._introduce(ev, ev["task"], None)
        elif kind == "push":
            self._introduce(ev, ev["task"], self._parent(ev))
        elif kind == "resize":
            self._reveal_array(ev["capacity"])
        if kind == "unpark" and not self._wakes(ev["worker"]):
            self._observed()  # a wake before the sleep: no step (as the fast model, on purpose)
            return
        if kind == "discard":
            self._discard(ev)
            return
        self._take(ev)
        self._after(ev)

    def _wakes(self, worker: int) -> bool:
        """Whether the unpark of ``worker`` wakes it: it parked in some state (its ``Park`` logged and no
        unpark since). An unpark of a worker that is not parked is a wake that came before the sleep,
        no step, as the fast model takes it (docs/work-stealing-trace.md, "Lenient on purpose": the
        contract allows it, and the spec's ``Unpark`` only wakes a worker asleep)."""
        name = f"w{worker}"
        return any(s.worker[name].pc == ASLEEP for s in self.search.states)

    def finish(self, complete: bool) -> None:
        if self.refused is not None:
            raise Malformed(1, f"line 1: {self.refused}")
        if not (complete or self.complete):
            return
        if any(wo.AllSettled(s) for s in self.search.states):
            return
        _, phrases = self.pending()
        parked = any(
            wo.Waiting(s) and any(me.pc == ASLEEP for me in s.worker.values()) for s in self.search.states
        )
        if parked:
            raise Rejected(
                7,
                "the run ends with a worker parked while tasks wait, and nobody will wake it (lost wakeup): "
                + "; ".join(phrases),
            )
        raise Rejected(
            8, "the run ends, but no behaviour of the spec ends here (a task is lost): " + "; ".join(phrases)
        )

    def pending(self) -> tuple[dict[str, Any], list[str]]:
        if not self.search.states:
            return {}, []
        s = min(self.search.states, key=repr)
        data: dict[str, Any] = {}
        if s.injector:
            data["injector"] = list(s.injector)
        deques = {w: list(q) for w, q in s.deque.items() if q}
        if deques:
            data["deques"] = deques
        running = {w: tasks for w, tasks in self.running.items() if tasks}
        if running:
            data["running"] = running
        open_ = [x for x, done in s.done.items() if not done]
        if open_:
            data["not done"] = open_[:8]
        if self.stop_mode is not None and not self.complete:
            data["stop"] = self.stop_mode
        return data, [f"{k}: {v}" for k, v in data.items()]

    def describe(self) -> list[dict[str, Any]]:
        return [plain(Show(self.c, s)) for s in sorted(self.search.states, key=repr)[:4]]

    # -- the steps -------------------------------------------------------------------------------

    def _take(self, ev: Event) -> None:
        try:
            self.search.step(spec_event(ev), [process(ev, self.names)])
        except NoMatch as none:
            raise Rejected(*why_no_step(ev, none, self.stop_mode is not None)) from None

    def _discard(self, ev: Event) -> None:
        """Each task a ``discard`` lists is a step of its own: the stopper's ``DiscardQueued`` of a
        task in the injector, or the ``DiscardHeld`` of the worker that took it. Rule 8 fixes no
        split, order or thread (the third outside review, T3); a task listed twice, run, or held
        by nobody is no step. An empty list drops nothing: it is allowed in stop(discard) only."""
        tasks = ev["tasks"]
        if not tasks and (self.stop_mode != "discard" or self.complete):
            raise Rejected(8, why_not_discarded(ev, None, self._discard_context()))
        for x in tasks:
            procs = [CLIENT, self.holder[x]] if x in self.holder else [CLIENT]
            try:
                self.search.step({"event": "discard", "tasks": [x]}, procs)
            except NoMatch:
                raise Rejected(8, why_not_discarded(ev, x, self._discard_context())) from None
            self.discarded.add(x)
        if not tasks:
            self._observed()

    def _discard_context(self) -> DiscardContext:
        ran = {x for s in self.search.states for x, n in s.ran.items() if n}
        stop = None if self.stop_mode is None else ("ended" if self.complete else self.stop_mode)
        return DiscardContext(frozenset(self.known), frozenset(self.discarded), frozenset(ran), stop)

    def _after(self, ev: Event) -> None:
        kind = ev["event"]
        if kind in ("take", "steal") and ev["result"] == "ok":
            self.holder[ev["task"]] = f"w{ev['worker']}"
        if kind == "run":
            self.running.setdefault(ev["thread"], []).append(ev["task"])
        elif kind == "done":
            self.running[ev["thread"]].pop()  # the spec's Done took the innermost running task
        elif kind == "stop_begin":
            self.stop_mode = ev["mode"]
            self.stopper = ev["thread"], ev["seq"]
        elif kind == "stop_end":
            self.complete = True

    def _choose_mode(self, ev: Event) -> None:
        """A trace that starts with a worker's push or steal from a worker is of deque programs."""
        self.started = True
        if deque_programs(ev):
            # The deque programs' steps are enabled: a search of their own, watched as this one was.
            observer = self.search.observer
            self.c = dataclasses.replace(self.c, deques=True)
            self.search = self._search([wo.Init(self.c)])
            self.search.observer = observer

    def _parent(self, ev: Event) -> Any:
        running = self.running.get(ev["thread"])
        if not running and self.c.deques:
            return wo.Program(ev["thread"])
        if not running:
            raise Rejected(
                3, f"{show(ev)} — w{ev['worker']} runs no task: a worker pushes only what its task spawns"
            )
        return running[-1]

    def _introduce(self, ev: Event, task: Any, parent: Any) -> None:
        """Add ``task`` (a root, or ``parent``'s next child) to the constants and every state."""
        if task in self.known:
            raise Rejected(
                1, f"{show(ev)} — task {task!r} was introduced before: a task id is introduced once"
            )
        self.known.add(task)
        if self.c.deques and parent is not None:
            # A deque program's push numbers its task by the tasks known when it begins
            # (``ProgramPush``): the steps that may lead to it are taken before the task is known.
            procs = [process(ev, self.names)]
            states, taken = self.search.before(spec_event(ev), procs)
            self.search.after(states, taken, procs)
        c = self.c
        if parent is None:
            tasks, roots = (*c.tasks, (task, ())), (*c.roots, task)
        else:
            if not c.knows(parent):
                c = dataclasses.replace(c, tasks=(*c.tasks, (parent, ())))  # a deque program
            grown = tuple((x, (*kids, task) if x == parent else kids) for x, kids in c.tasks)
            tasks = (*grown, (task, ()))
            roots = c.roots
        self._rebind(dataclasses.replace(c, tasks=tasks, roots=roots), with_task(task))

    def _reveal_array(self, capacity: int) -> None:
        """A resize to ``capacity``: the array generation it needs exists in every state."""
        c = self.c
        if capacity <= c.size(c.gens - 1) or capacity % c.capacity or capacity > MAX_CAPACITY << 4:
            return  # a known array, or none the spec's grow can make: its step refuses it
        gen = (capacity // c.capacity).bit_length() - 1
        for g in range(c.gens, gen + 1):
            self._rebind(dataclasses.replace(self.c, gens=g + 1), with_generation(self.c, g))

    def _rebind(self, c: wo.OpenConstants, extend: Any) -> None:
        self.c = c
        self.search.rebind(c, extend)

    def _join(self, ev: Event) -> None:
        task = ev["task"]
        if task not in self.known:
            raise Rejected(4, f"{show(ev)} — task {task!r} was never introduced")
        done = {s for s in self.search.states if s.done[task]}
        if not done:
            raise Rejected(4, f"{show(ev)} — join returns only once the task is done; {task!r} is not")
        self.search.narrow(done)  # no step makes a task not done
        self._observed()

    def _observed(self) -> None:
        """Report the states after an event the search did not step (a join, a refused submit)."""
        if self.search.observer is not None:
            self.search.observer(self.search)


SPEC_FORMAT = DesignFormat(
    design=DESIGN,
    schema_file="trace-schema.json",
    fields=FIELDS,
    index="worker",
    bound="workers",
    make=StealingSearch,
    rules=RULES,
    completion="stop_end ok (pass --complete when the run is over)",
    schema_package="model_checks.designs.work_stealing",
    header_limits=HEADER_LIMITS,
)

__all__ = ["CLIENT", "SPEC_FORMAT", "CannotJudge", "StealingSearch", "header_refusal"]
