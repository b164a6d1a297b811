"""The sequential model a work-stealing trace is linearizable against (log order = linearization order).

One FIFO injector, one sequential deque per worker (owner at the bottom, thieves at the
top), where every task is, each worker's stack of running tasks, who is parked, and the
stop. ``Model.step(ev)`` applies one well-formed event or raises ``Rejected`` with the
rule it breaks (docs/work-stealing-trace.md); ``finish`` judges the end of a complete trace.

Allowed without effect (Chase-Lev's failures, whose linearization point can lie in
another thread's future): take ``lost``, steal ``abort``, and ``empty`` on a deque of at
most one task — the last element may already belong to a thief whose steal is logged
next. A ``take`` that came back empty beside one task leaves it in the model (the thief's
``steal`` ok removes it); it is not counted against the buffer's capacity meanwhile.
Parking is lenient too: an ``unpark`` of a worker that is not parked is a wake that came
before the sleep (a no-op), and a parked worker that logs an event of its own woke by
itself (a timeout or a spurious wakeup).

A ``pool: "global-lock"`` trace (``reference.global_queue_pool``) has one queue and no
deques: the injector *is* that queue and it is LIFO (a stack). ``submit`` ok and a worker's
``push`` (a spawned task; ``size`` = the queue's length after) add at its newest end, a
``steal`` from ``"injector"`` returns the newest task (rule 2), and ``take``, ``resize`` and
a steal from a worker are refused (rule 3: there is no deque to take from).

A ``push`` is a fork: its worker runs a task (rule 3, as the spec engine numbers it), except in
deque programs (``rules.deque_programs``), which call a deque directly.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from model_checks.conformance.fast_format import Owed
from model_checks.conformance.reader import clip
from model_checks.conformance.verdict import Rejected
from model_checks.conformance.wording import some_of
from model_checks.designs.work_stealing.trace.places import Places
from model_checks.designs.work_stealing.trace.rules import Admission, deque_programs, owner_rule
from model_checks.designs.work_stealing.trace.shown import SHOWN, first, show, show_tasks
from model_checks.designs.work_stealing.trace.stop import (
    DISCARDED,
    DONE,
    HELD,
    INJECTOR,
    RUNNING,
    Event,
    StopEvents,
    Task,
)


class Model(StopEvents):
    """The state of the sequential model after the events so far (updated in place)."""

    def __init__(self, workers: int, capacity: int, pool: str = "stealing") -> None:
        self.workers = workers
        self.global_lock = pool == "global-lock"  # one LIFO queue, no deques
        self.first_capacity = capacity
        # Per-worker state exists only for the workers the trace names (a header may declare 65,536).
        self.deques: dict[int, deque[Task]] = {}
        self.capacity: dict[int, int] = {}
        self.injector: deque[Task] = deque()
        self.loc = Places(finished=(DONE, DISCARDED))  # finished tasks as runs of numbers: flat memory
        self.holder: dict[Task, int] = {}  # taken or stolen, not yet run: by whom
        self.stacks: dict[int, list[Task]] = {}  # running tasks per worker, innermost last
        self.parked: dict[int, tuple[int, int]] = {}  # worker -> (seq of its park, tasks queued then)
        self.phantom: dict[int, Task] = {}  # a deque's last task that an empty take conceded to a thief
        # victim -> seq of the last steal ok from its deque since the victim's own last event: a take
        # lost on a deque the model shows empty needs a thief that won its last task in that window
        self.stolen: dict[int, int] = {}
        self.queued = 0  # tasks in the injector and the deques
        self.open = 0  # tasks introduced and neither done nor discarded
        self.stop_mode: str | None = None
        self.stop_seq = 0
        self.stopper = ""  # the thread that logged stop_begin: its stop_end is that call's return
        self.stopped = False  # a stop_end ok: the run is over
        self.stop_returned = 0  # the seq of the stop_end, ok or failed: the one Stop call returned
        self.programs = False  # deque programs: pushes no task spawned (see the module's words)
        self.admission = Admission()
        self.handlers = {
            "submit": self.submit,
            "push": self.push,
            "resize": self.resize,
            "take": self.take,
            "steal": self.steal,
            "park": self.park,
            "unpark": self.unpark,
            "run": self.run,
            "done": self.done,
            "join": self.join,
            "stop_begin": self.stop_begin,
            "discard": self.discard,
            "stop_end": self.stop_end,
        }
        if self.global_lock:
            self.handlers.update(push=self.push_global, take=self.no_deque, resize=self.no_deque)
        # ``_first`` until the first step tells a deque program (readers hold this dict: no cost after).
        self.steps = dict(self.handlers)
        self.handlers.update(dict.fromkeys(self.steps, self._first))

    def step(self, ev: Event) -> None:
        self.handlers[ev["event"]](ev)

    def _first(self, ev: Event) -> None:
        programs = deque_programs(ev)
        if programs is not None:
            self.programs = programs and not self.global_lock
            self.handlers.update(self.steps)
        self.steps[ev["event"]](ev)

    def _unforked(self, ev: Event, w: int) -> None:  # a pool's push forks its worker's running task
        raise Rejected(
            3,
            f"push of {show(ev['task'])} by w{w}, which runs no task: a worker pushes only what its "
            "running task spawns (a task cannot appear in a deque from nowhere)",
        )

    # ------------------------------------------------------------------ words

    def _deque(self, w: int) -> deque[Task]:
        dq = self.deques.get(w)
        if dq is None:
            dq = self.deques[w] = deque()
            self.capacity[w] = self.first_capacity
        return dq

    def _owner(self, ev: Event, w: int) -> None:
        """The event is its worker's own: logged on that worker's thread (a parked one woke by itself)."""
        if ev["thread"] != f"w{w}":
            kind = ev["event"]
            raise Rejected(
                owner_rule(kind),
                f"{kind} names worker {w} but is logged by thread {clip(repr(ev['thread']), 80)}: "
                f"only w{w} itself logs its {kind}",
            )
        if self.parked:
            self.parked.pop(w, None)
        if self.stolen:
            self.stolen.pop(w, None)

    def _introduce(self, task: Task, how: str) -> None:
        if task in self.loc:
            raise Rejected(
                1,
                f"{how} introduces task {show(task)}, but that id was introduced before: "
                f"it {self._where(task)}",
            )
        self.queued += 1
        self.open += 1

    # ------------------------------------------------------------------ events

    def submit(self, ev: Event) -> None:
        if self.admission.refused(ev):
            return  # the task stays with the caller
        task = ev["task"]
        if self.stop_mode is not None:
            raise Rejected(
                8,
                f"submit of {show(task)} is ok after stop_begin (seq {self.stop_seq}): "
                "once stop has begun every submit is refused",
            )
        self._introduce(task, "submit ok")
        self.loc[task] = INJECTOR
        self.injector.append(task)

    def _pushing(self, ev: Event) -> tuple[int, Task]:
        """The checks either pool's push makes before the task goes onto a queue: its worker and task."""
        w, task = ev["worker"], ev["task"]
        self._owner(ev, w)
        if not self.stacks.get(w) and not self.programs:
            self._unforked(ev, w)
        self._introduce(task, f"push by w{w}")
        return w, task

    def push(self, ev: Event) -> None:
        w, task = self._pushing(ev)
        dq = self._deque(w)
        dq.append(task)
        self.loc[task] = w
        self._sized(ev, dq, f"on w{w}", "its deque")
        held = len(dq) - (w in self.phantom)
        if held > self.capacity[w]:
            raise Rejected(
                6,
                f"push of {show(task)} puts a task number {held} in w{w}'s buffer of capacity "
                f"{self.capacity[w]} with no resize: the circular buffer wraps over its oldest task",
            )

    def _sized(self, ev: Event, queue: deque[Task], who: str, what: str) -> None:
        """A push reports the length of the queue it pushed onto."""
        if ev["size"] != len(queue):
            raise Rejected(
                6,
                f"push of {show(ev['task'])} {who} reports size {ev['size']}, but {what} then holds "
                f"{len(queue)} tasks {show_tasks(queue, len(queue))}",
            )

    def push_global(self, ev: Event) -> None:
        """A spawned task onto the global-lock pool's one queue (its newest end)."""
        w, task = self._pushing(ev)
        inj = self.injector
        inj.append(task)
        self.loc[task] = INJECTOR
        self._sized(ev, inj, f"by w{w}", "the global queue")

    def no_deque(self, ev: Event) -> None:
        raise Rejected(
            3,
            f"{ev['event']} by w{ev['worker']} in a global-lock trace: that pool has no per-worker deques "
            '(its workers take from the one queue with steal from "injector")',
        )

    def resize(self, ev: Event) -> None:
        w, new = ev["worker"], ev["capacity"]
        self._owner(ev, w)
        self._deque(w)
        old = self.capacity[w]
        if new <= old or new & (new - 1):
            raise Rejected(
                6, f"resize of w{w}'s buffer from {old} to {new}: a resize grows it to a larger power of two"
            )
        self.capacity[w] = new

    def take(self, ev: Event) -> None:
        w, result = ev["worker"], ev["result"]
        stolen = self.stolen.get(w) if self.stolen else None  # before ``_owner`` forgets it
        self._owner(ev, w)
        dq = self._deque(w)
        if result == "ok":
            task = ev["task"]
            if not dq:
                raise Rejected(
                    3, f"take by w{w} returns {show(task)} from an empty deque; that task {self._where(task)}"
                )
            if dq[-1] != task:
                raise Rejected(
                    3,
                    f"take by w{w} returns {show(task)}, but the bottom (newest) task of its deque "
                    f"{show_tasks(dq, len(dq))} is {show(dq[-1])}; {show(task)} {self._where(task)}",
                )
            if self.phantom.get(w) == task:
                raise Rejected(
                    3,
                    f"take by w{w} returns {show(task)}, but its earlier take came back without it on the "
                    "last element: a thief won that task (its steal ok is still to be logged)",
                )
            dq.pop()
            self._taken(task, w, w)
        elif len(dq) >= 2:
            raise Rejected(
                3,
                f"take by w{w} returns {result}, but its deque holds {len(dq)} tasks "
                f"{show_tasks(dq, len(dq))}: Chase-Lev comes back "
                + ("empty" if result == "empty" else "lost (a thief won the CAS)")
                + " only on the last element",
            )
        elif dq:
            self.phantom[w] = dq[0]
        elif result == "lost" and stolen is None:
            raise Rejected(
                3,
                f"take by w{w} returns lost on its empty deque, and no steal from it was logged since "
                f"w{w}'s last event: lost means a thief's CAS won the last task the take saw, and an "
                "empty deque with no such steal comes back empty",
            )

    def steal(self, ev: Event) -> None:
        w, victim, result = ev["worker"], ev["victim"], ev["result"]
        self._owner(ev, w)
        if victim == w:
            raise Rejected(5, f"w{w} steals from its own deque: a worker never steals from itself")
        if victim == "injector":
            self._pop_injector(w, result, ev["task"])
            return
        if self.global_lock:
            self.no_deque(ev)
        dq = self._deque(victim)
        if result == "ok":
            task = ev["task"]
            if not dq:
                raise Rejected(
                    3,
                    f"steal by w{w} returns {show(task)} from w{victim}'s empty deque; "
                    f"that task {self._where(task)}",
                )
            if dq[0] != task:
                raise Rejected(
                    3,
                    f"steal by w{w} returns {show(task)} from w{victim}, but the top (oldest) task of that "
                    f"deque {show_tasks(dq, len(dq))} is {show(dq[0])}; {show(task)} {self._where(task)}",
                )
            dq.popleft()
            self._taken(task, w, victim)
            self.stolen[victim] = ev["seq"]
        elif result == "empty" and len(dq) >= 2:
            raise Rejected(
                3,
                f"steal by w{w} from w{victim} returns empty, but that deque holds {len(dq)} tasks "
                f"{show_tasks(dq, len(dq))}: Chase-Lev comes back empty only on the last element",
            )

    def _taken(self, task: Task, w: int, owner: int | None = None) -> None:
        """``task`` left a queue (``owner``'s deque, or the injector) for ``w``'s hands."""
        self.queued -= 1
        self.loc[task] = HELD
        self.holder[task] = w
        if owner is not None and self.phantom.get(owner) == task:
            del self.phantom[owner]

    def _pop_injector(self, w: int, result: str, task: Task) -> None:
        inj = self.injector
        if result == "ok":
            if not inj:
                raise Rejected(
                    2,
                    f"steal by w{w} returns {show(task)} from the empty injector; "
                    f"that task {self._where(task)}",
                )
            if self.global_lock:
                if inj[-1] != task:
                    raise Rejected(
                        2,
                        f"steal by w{w} returns {show(task)} from the global queue, but its newest task is "
                        f"{show(inj[-1])} (LIFO in a global-lock pool: {show_tasks(inj, len(inj))}); "
                        f"{show(task)} {self._where(task)}",
                    )
                inj.pop()
            elif inj[0] != task:
                raise Rejected(
                    2,
                    f"steal by w{w} returns {show(task)} from the injector, but its oldest task is "
                    f"{show(inj[0])} (FIFO: {show_tasks(inj, len(inj))}); {show(task)} {self._where(task)}",
                )
            else:
                inj.popleft()
            self._taken(task, w)
        elif result == "abort":
            raise Rejected(
                3,
                f"steal by w{w} from the injector returns abort: the injector is a locked queue, with no "
                "CAS to lose (its pop returns a task or empty)",
            )
        elif inj:
            raise Rejected(
                3,
                f"steal by w{w} from the injector returns empty, but it holds {len(inj)} tasks "
                f"{show_tasks(inj, len(inj))} (a locked queue is never spuriously empty)",
            )

    def park(self, ev: Event) -> None:
        w = ev["worker"]
        self._owner(ev, w)
        self.parked[w] = (ev["seq"], self.queued)

    def unpark(self, ev: Event) -> None:
        if self.parked:
            self.parked.pop(ev["worker"], None)

    def run(self, ev: Event) -> None:
        w, task = ev["worker"], ev["task"]
        self._owner(ev, w)
        if self.holder.get(task) != w:
            raise Rejected(
                4,
                f"run of {show(task)} on w{w}, which did not take or steal it: that task {self._where(task)}",
            )
        del self.holder[task]
        self.loc[task] = RUNNING
        stack = self.stacks.get(w)
        if stack is None:
            stack = self.stacks[w] = []
        stack.append(task)

    def done(self, ev: Event) -> None:
        w, task = ev["worker"], ev["task"]
        self._owner(ev, w)
        stack = self.stacks.get(w)
        if not stack or stack[-1] != task:
            running = f"its innermost running task is {show(stack[-1])}" if stack else "it runs no task"
            raise Rejected(
                4, f"done of {show(task)} on w{w}, but {running}; {show(task)} {self._where(task)}"
            )
        stack.pop()
        self.loc[task] = DONE
        self.open -= 1

    def join(self, ev: Event) -> None:
        task = ev["task"]
        at = self.loc.get(task)
        if at != DONE and at != DISCARDED:
            raise Rejected(
                4,
                f"join of {show(task)} returns on {clip(repr(ev['thread']), 80)}, "
                "but that task has not finished: it "
                + ("is running (its done is not logged yet)" if at == RUNNING else self._where(task)),
            )

    # ------------------------------------------------------------------ the end

    def finish(self, complete: bool) -> None:
        """The trace ended; with ``complete`` (or after its stop_end ok) the run is over: every task
        ran or was discarded."""
        if not (complete or self.stopped):
            return
        if self.queued:
            for w, (seq, then) in sorted(self.parked.items()):
                visible = f", {then} tasks visible when it parked" if then else ""
                raise Rejected(
                    7,
                    f"w{w} parked at seq {seq}{visible} and nobody woke it, yet {self.queued} tasks still "
                    f"wait: {self._waiting()} (lost wakeup)",
                )
        self._all_accounted("the run ends")

    def _waiting(self) -> str:
        parts = []
        if self.injector:
            parts.append(f"injector {show_tasks(self.injector, len(self.injector))}")
        parts += [f"w{w}'s deque {show_tasks(dq, len(dq))}" for w, dq in sorted(self.deques.items()) if dq]
        return "; ".join(parts[:4])

    # ------------------------------------------------------------------ for people

    def pending(self) -> tuple[dict[str, Any], list[str]]:
        """What a prefix leaves owed: as data and as phrases."""
        owed = Owed()
        if self.queued:
            owed.add("queued", self.queued, f"{self.queued} tasks wait to be taken: {self._waiting()}")
        held = {f"w{w}": show(x) for x, w in first(self.holder.items())}
        if held:
            owed.add("taken, not run", held, f"taken and not yet run: {held}")
        running = {f"w{w}": [show(x) for x in s[-SHOWN:]] for w, s in sorted(self.stacks.items()) if s}
        if running:
            owed.add("running", running, f"running: {running}")
        if self.parked:
            parked = [f"w{w}" for w in sorted(self.parked)][:SHOWN]
            owed.add("parked", parked, f"parked: {some_of(parked, len(self.parked))}")
        owed.stop(self.stop_mode, self.stopped, self.stop_seq)
        return owed.pending()

    def describe(self) -> list[dict[str, Any]]:
        """The model's one state, for people (queues cut to their first tasks)."""
        deques = {f"w{w}": [show(x) for x in first(dq)] for w, dq in sorted(self.deques.items()) if dq}
        return [
            {
                "injector": [show(x) for x in first(self.injector)],
                "deques (top first)": dict(first(deques.items())),
                "capacity": {f"w{w}": c for w, c in first(sorted(self.capacity.items()))},
                "taken, not run": {show(x): f"w{w}" for x, w in first(self.holder.items())},
                "running": {
                    f"w{w}": [show(x) for x in s[-SHOWN:]] for w, s in first(sorted(self.stacks.items())) if s
                },
                "parked": [f"w{w}" for w in first(sorted(self.parked))],
                "stop": self.stop_mode
                if self.stop_mode is None or not self.stopped
                else f"{self.stop_mode}, ended",
            }
        ]
