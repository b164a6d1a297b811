"""MODULE WorkStealingOpen — the work-stealing pool with an open task tree: what a trace is judged by.

EXTENDS WorkStealing. The deque (push, grow, take, steal) and parking are WorkStealing's own
steps, unchanged. The pool around them is the reference's (reference/work_stealing_base.py),
whose tasks are code, not a tree fixed in advance:

* **The tree is revealed.** ``OpenConstants.tasks`` and ``roots`` hold the tasks known so
  far; a search bound to a trace adds a root at its ``submit`` and a child at its ``push``
  (the trace names a task's children only as it spawns them), and an array generation at a
  ``resize`` past the known ones (``gens``).
* **A running task's body** (``BODY``) spawns its next child (the deque's push), waits in
  ``Wait`` for one child it spawned (join: suspended as a ``Frame``; the worker helps —
  looks for work — until that child is done, then ``Resume``s), or completes (``Done``, the
  labelled completion, then ``Settle``: the reference logs ``done`` before it stores the task's
  state, so a joiner can still find the task pending in between). Completing a task wakes the
  worker whose innermost join waits for it.
* **Looking for work**: a victim found empty, or a lost CAS, sends the thief to another victim
  (any other worker, any number of times: the reference tries each once a round and retries
  the one that aborted), or it gives up and goes to park (``GiveUp``). In a pool a worker may also
  skip looks or leave failed ones unlogged (``spec/work_stealing_looks.py``: ``PopInjectorFirst``,
  ``PassInjector``, ``QuietRound``): the contract fixes no order of the looks.
* **Stop**, by the client: ``StopBegin(drain)`` closes admission (no ``Submit`` after it);
  ``StopBegin(discard)`` then raises the discarding flag (``RaiseFlag``): the injector's tasks are
  discarded at once (``DiscardInjector``) and a worker that took a task checks the flag before running it
  (``Admit`` / ``SeesDiscarding``) and discards it (``DiscardHeld``); ``StopEnd`` once every
  task is done or discarded, after ``Shutdown`` woke every registered sleeper.
* **Parking** is logged after the re-check, in a step of its own (``RecheckFindsNothing``, then
  ``Park``): the reference re-checks and logs under its park lock, and a push (which takes no
  park lock) can come between; its waker then waits for that lock and wakes the worker after.
* **Deque programs** (``deques``): the harness's deque scenarios call a deque directly, so a
  trace whose first event is a worker's push or steal is judged with each worker a program of
  deque operations (``ProgramPush``, ``StealFirst``, ``SkipInjector``, ``Keep``).
* **What is logged**: a take that comes back empty says it lost no race (``lost_race``), a
  push reports its deque's size, the grow is labelled (``resize``); the notifies and the
  resume from a join are internal.

Memory is sequentially consistent only (the reference runs on the GIL); ``Flush`` is dropped.
WorkStealing's own model, checked by the explorer, is unchanged by this module.
"""

# ruff: noqa: F405  (names from the state module WorkStealing EXTENDS)
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

from spec import work_stealing as ws
from spec.language import Action, Emitted, Spec, emit, variant

# The looks a pool's worker may skip or leave unlogged, and the pc before its logged park.
from spec.work_stealing_looks import PARKING as PARKING
from spec.work_stealing_looks import PassInjector, PopInjectorFirst, QuietRound
from spec.work_stealing_state import *  # noqa: F403

# Worker program counters added here.
BODY, ADMITTED, DISCARDS, SETTLING = "body", "admitted", "discards", "settling"

# The client's program counters after Submit's ("submit" / "notify"): Stop and its ends. Stop(discard)
# goes DISCARD (began), FLAGGED (the discarding flag is up), DISCARDING (the injector is discarded).
DRAIN, DISCARD, FLAGGED, DISCARDING = "drain", "discard", "flagged", "discarding"
DRAINED, DISCARDED = "drained", "discarded"
MODES = (DRAIN, DISCARD)


class Frame(NamedTuple):
    """A task suspended in its join (an entry of ``Local.stack``)."""

    task: Task
    k: int  # the children it had spawned
    awaited: Task  # the child its join waits for


@dataclass(frozen=True)
class OpenConstants(Constants):
    """The constants as far as a trace has revealed them (tasks, roots, array generations)."""

    memory: str = "sc"
    gens: int = 1  # arrays per worker known so far
    deques: bool = False  # the trace is of deque programs, not of a pool (below)

    def generations(self) -> int:
        return self.gens

    def awaits(self, frame: Any) -> tuple[Task, ...]:
        return (frame.awaited,)

    def children(self, task: Task | None) -> tuple[Task, ...]:
        return () if task is None else self._children.get(task, ())  # a trace's task may be 0

    def knows(self, task: Task) -> bool:
        return task in self._children

    @cached_property
    def _children(self) -> dict[Task, tuple[Task, ...]]:
        return dict(self.tasks)


def Fanout(c: Constants) -> range:
    """Which child a join may wait for: an index below the largest number of children."""
    return range(max((len(kids) for _, kids in c.tasks), default=0))


def Modes(c: Constants) -> tuple[str, ...]:
    return MODES


def Discarding(s: Vars) -> bool:
    return s.client[0] in (FLAGGED, DISCARDING, DISCARDED)


def Settled(c: Constants, s: Vars, task: Task) -> Vars:
    """``task`` is done (or discarded): a worker whose innermost join waits for it is woken."""
    s = s._replace(done=s.done.except_(task, True))
    for u, local in s.worker.items():
        if local.stack and local.stack[-1].awaited == task and s.sleeping[u]:
            return s._replace(sleeping=s.sleeping.except_(u, False))
    return s


def Waiting(s: Vars) -> bool:
    """Something waits to run: in the injector or a (sequential) deque."""
    return bool(s.injector) or any(s.deque.values())


# ============================================================================ ACTIONS: run and the body


def Admit(c: Constants, s: Vars, w: str) -> object:
    """The task in hand: the discarding flag is down, it will run."""
    me = at(s, w, RUN)
    if me is None or Discarding(s):
        return None
    return goto(s, w, me._replace(pc=ADMITTED))


def SeesDiscarding(c: Constants, s: Vars, w: str) -> object:
    """The task in hand: Stop(discard) raised the flag, it will be discarded."""
    me = at(s, w, RUN)
    if me is None or not Discarding(s):
        return None
    return goto(s, w, me._replace(pc=DISCARDS))


def Run(c: Constants, s: Vars, w: str) -> object:
    """The task starts: its body runs."""
    me = at(s, w, ADMITTED)
    if me is None or me.task not in s.ran.domain():
        return None  # a slot that held no task
    x = me.task
    s = s._replace(ran=s.ran.except_(x, s.ran[x] + 1))
    return emit(goto(s, w, Local(BODY, x, stack=me.stack)), task=x)


def DiscardHeld(c: Constants, s: Vars, w: str) -> object:
    """The task in hand is discarded, not run."""
    me = at(s, w, DISCARDS)
    if me is None or me.task is None:
        return None
    return emit(Settled(c, goto(s, w, Local(FIND, stack=me.stack)), me.task), tasks=[me.task])


def PushBegin(c: Constants, s: Vars, w: str) -> object:
    """The body spawns: WorkStealing's PushBegin (b := bottom; t := top; a := buffer)."""
    me = at(s, w, BODY)
    if me is None:
        return None
    return ws.PushBegin(c, goto(s, w, me._replace(pc=FORK)), w)


def Grow(c: Constants, s: Vars, w: str) -> object:
    """WorkStealing's Grow, logged: the new array's capacity."""
    nxt = ws.Grow(c, s, w)
    if not isinstance(nxt, Vars):
        return None
    gen = nxt.worker[w].gen
    assert gen is not None
    return emit(nxt, capacity=c.size(gen))


def PushWrite(c: Constants, s: Vars, w: str) -> object:
    """WorkStealing's PushWrite, once the child it writes is known."""
    me = at(s, w, WRITE)
    if me is None or me.k >= len(c.children(me.task)):
        return None
    return ws.PushWrite(c, s, w)


def Push(c: Constants, s: Vars, w: str) -> object:
    """WorkStealing's Push (bottom := b + 1), logged with the deque's length after it."""
    r = ws.Push(c, s, w)
    if not isinstance(r, Emitted):
        return None
    return emit(r.state, **r.fields, size=len(r.state.deque[w]))


def Spawned(s: Vars, w: str, me: Local) -> Vars:
    """After a push: back to the task's body (a deque program: to its next operation)."""
    after = Local(FIND) if me.task == Program(w) else Local(BODY, me.task, k=me.k + 1, stack=me.stack)
    return goto(s._replace(mem=s.mem.fence(w)), w, after)


def NotifyAfterPush(c: Constants, s: Vars, w: str, sleeper: str) -> object:
    """RMW on the sleep word: wake one registered sleeper; back to the body."""
    me = at(s, w, NOTIFY)
    if me is None or sleeper not in Sleepers(c, s):
        return None
    return Spawned(Wake(s, sleeper), w, me)


def NotifyNobody(c: Constants, s: Vars, w: str) -> object:
    """The same RMW finds nobody registered; back to the body."""
    me = at(s, w, NOTIFY)
    if me is None or any(s.sleeping.values()):
        return None
    return Spawned(s, w, me)


def Wait(c: Constants, s: Vars, w: str, i: int) -> object:
    """join(child i) while that child is not done: suspend the task, help until it is."""
    me = at(s, w, BODY)
    if me is None:
        return None
    spawned = c.children(me.task)[: me.k]
    if i >= len(spawned) or s.done[spawned[i]]:
        return None
    assert me.task is not None
    return goto(s, w, Local(FIND, stack=(*me.stack, Frame(me.task, me.k, spawned[i]))))


def Resume(c: Constants, s: Vars, w: str) -> object:
    """The child the innermost join waits for is done: that task's body goes on."""
    me = at(s, w, FIND)
    if me is None or not Resumable(c, s, w):
        return None
    frame: Frame = me.stack[-1]
    return goto(s, w, Local(BODY, frame.task, k=frame.k, stack=me.stack[:-1]))


def Done(c: Constants, s: Vars, w: str) -> object:
    """The body returns and ``done`` is logged; the task's state is stored next (``Settle``): the
    reference logs first, so a joiner may still read the task pending after its ``done``."""
    me = at(s, w, BODY)
    if me is None:
        return None
    assert me.task is not None
    return emit(goto(s, w, Local(SETTLING, task=me.task, stack=me.stack)), task=me.task)


def Settle(c: Constants, s: Vars, w: str) -> object:
    """The task's state is stored: it is done, a worker whose join waits for it is woken, and this
    worker looks for work (or its join goes on)."""
    me = at(s, w, SETTLING)
    if me is None:
        return None
    assert me.task is not None
    return Settled(c, goto(s, w, Local(FIND, stack=me.stack)), me.task)


# ============================================================================ ACTIONS: looking for work


def TakeEmpty(c: Constants, s: Vars, w: str) -> object:
    """WorkStealing's TakeEmpty, logged as an empty take that lost no race."""
    r = ws.TakeEmpty(c, s, w)
    return emit(r.state, **r.fields, lost_race=False) if isinstance(r, Emitted) else None


def StealEmpty(c: Constants, s: Vars, w: str) -> object:
    """b := v.bottom; t >= b: the victim is empty — try another, or give up."""
    st = StealingAt(s, w, STEAL_BOTTOM)
    if st is None or st.t < s.mem.load(w, BOTTOM(st.victim)):
        return None
    return emit(goto(s, w, Local(STEAL, stack=st.me.stack)), victim=st.victim, result="empty")


def Steal(c: Constants, s: Vars, w: str) -> object:
    """WorkStealing's Steal; a lost CAS sends the thief to a victim again (the same or another)."""
    claim = StealCas(s, w)
    if claim is None:
        return None
    (me, v, _), mem, won = claim
    if won:
        return ws.Steal(c, s, w)
    return emit(goto(s, w, Local(STEAL, stack=me.stack), mem=mem), victim=v, result="abort")


def GiveUp(c: Constants, s: Vars, w: str) -> object:
    """No victim (left) to try: go to park."""
    me = at(s, w, STEAL)
    if me is None:
        return None
    return goto(s, w, Local(SLEEPY, stack=me.stack))


def RecheckFindsNothing(c: Constants, s: Vars, w: str) -> object:
    """The re-check finds nothing and the registration stands: the worker will sleep."""
    me = at(s, w, RECHECK)
    if me is None or WorkVisible(c, s, w) or not s.sleeping[w]:
        return None
    return goto(s, w, me._replace(pc=PARKING))


def Park(c: Constants, s: Vars, w: str) -> object:
    """It logs its park and sleeps (a waker may have cleared its registration meanwhile: it wakes)."""
    me = at(s, w, PARKING)
    if me is None:
        return None
    return emit(goto(s, w, me._replace(pc=ASLEEP)))


# ============================================================================ ACTIONS: the client


def Unlabelled(action: Action) -> Action:
    """``action`` as an internal step: its next state without the event."""
    fn = action.fn

    def step(c: Constants, s: Vars, *args: Any) -> object:
        r = fn(c, s, *args)
        return r.state if isinstance(r, Emitted) else r

    step.__name__ = action.name
    return Action(action.name, step, action.domains, None, action.doc, action.at)


def StopBegin(c: Constants, s: Vars, p: str, mode: str) -> object:
    """Stop begins: admission closes; in discard mode the discarding flag goes up."""
    pc, k = s.client
    if pc != "submit":
        return None
    return emit(s._replace(client=(mode, k)), mode=mode)


def RaiseFlag(c: Constants, s: Vars, p: str) -> object:
    """Stop(discard) raises the discarding flag (after logging its begin: a worker may still run
    a task it read the flag down for)."""
    pc, k = s.client
    if pc != DISCARD:
        return None
    return s._replace(client=(FLAGGED, k))


def DiscardInjector(c: Constants, s: Vars, p: str) -> object:
    """Stop(discard) takes every task out of the injector and discards them."""
    pc, k = s.client
    if pc != FLAGGED or not s.injector:
        return None
    out = s._replace(injector=(), client=(DISCARDING, k))
    for x in s.injector:
        out = Settled(c, out, x)
    return emit(out, tasks=list(s.injector))


def NothingQueued(c: Constants, s: Vars, p: str) -> object:
    """Stop(discard) finds the injector empty: nothing to log."""
    pc, k = s.client
    if pc != FLAGGED or s.injector:
        return None
    return s._replace(client=(DISCARDING, k))


def Shutdown(c: Constants, s: Vars, p: str) -> object:
    """Every task settled: Stop wakes every registered sleeper (they exit)."""
    pc, _ = s.client
    if pc not in (DRAIN, DISCARDING) or not AllSettled(s) or not any(s.sleeping.values()):
        return None
    return s._replace(sleeping=s.sleeping.with_values(False for _ in s.sleeping.values()))


def StopEnd(c: Constants, s: Vars, p: str) -> object:
    """Stop returns: every task ran to done or was discarded."""
    pc, k = s.client
    if pc not in (DRAIN, DISCARDING) or not AllSettled(s):
        return None
    mode = DRAIN if pc == DRAIN else DISCARD
    return emit(s._replace(client=(DRAINED if pc == DRAIN else DISCARDED, k)), mode=mode)


def AllSettled(s: Vars) -> bool:
    return all(s.done.values())


# ============================================================================ ACTIONS: deque programs
# With ``deques`` a worker is a program calling its deque, the harness's deque scenarios: the owner
# pushes tasks no task spawned (children of ``Program(w)``) and takes, thieves steal, and what a
# take or steal returns is kept, never run. No injector, no parking, no Stop.


def Program(w: str) -> Task:
    """The pseudo-task whose children are the tasks worker ``w``'s deque program pushes."""
    return f"<{w} program>"


def ProgramPush(c: OpenConstants, s: Vars, w: str) -> object:
    """A deque program pushes its next task: WorkStealing's PushBegin."""
    me = at(s, w, FIND)
    if not c.deques or me is None or me.stack:
        return None
    k = len(c.children(Program(w)))  # the task it pushes is the next one the trace names
    return ws.PushBegin(c, goto(s, w, Local(FORK, Program(w), k=k)), w)


def StealFirst(c: OpenConstants, s: Vars, w: str) -> object:
    """A deque program steals with no look at a deque of its own or the injector."""
    me = at(s, w, FIND)
    if not c.deques or me is None or me.stack:
        return None
    return goto(s, w, Local(STEAL))


def SkipInjector(c: OpenConstants, s: Vars, w: str) -> object:
    """A deque program's take came back empty: its next operation, no injector."""
    if not c.deques or at(s, w, INJECTOR) is None:
        return None
    return goto(s, w, Local(FIND))


def Keep(c: OpenConstants, s: Vars, w: str) -> object:
    """A deque program keeps what its take or steal returned: its next operation."""
    if not c.deques or at(s, w, RUN) is None:
        return None
    return goto(s, w, Local(FIND))


# ============================================================================ THE SPEC


def _action(fn: Any, domains: tuple[Any, ...], event: str | None, *pcs: str) -> Action:
    return Action(fn.__name__, fn, domains, event, fn.__doc__ or "", frozenset(pcs) if pcs else None)


W, C = (Workers,), (Clients,)
_BY_NAME = {a.name: a for a in ws.SPEC.actions}

OPEN: Spec = variant(
    ws.SPEC,
    "open",
    replace_actions={
        "Run": _action(Run, W, "run", ADMITTED),
        "PushBegin": _action(PushBegin, W, None, BODY),
        "Grow": _action(Grow, W, "resize", GROW),
        "PushWrite": _action(PushWrite, W, None, WRITE),
        "Push": _action(Push, W, "push", PUBLISH),
        "NotifyAfterPush": _action(NotifyAfterPush, (Workers, Workers), None, NOTIFY),
        "NotifyNobody": _action(NotifyNobody, W, None, NOTIFY),
        "Resume": _action(Resume, W, None, FIND),
        "TakeEmpty": _action(TakeEmpty, W, "take", TAKE),
        "Park": _action(Park, W, "park", PARKING),
        "StealEmpty": _action(StealEmpty, W, "steal", STEAL_BOTTOM),
        "Steal": _action(Steal, W, "steal", STEAL_CAS),
        "NotifyAfterSubmit": Unlabelled(_BY_NAME["NotifyAfterSubmit"]),
        "NotifyNobodyAfterSubmit": Unlabelled(_BY_NAME["NotifyNobodyAfterSubmit"]),
    },
    add_actions=(
        _action(Admit, W, None, RUN),
        _action(SeesDiscarding, W, None, RUN),
        _action(DiscardHeld, W, "discard", DISCARDS),
        _action(Wait, (Workers, Fanout), None, BODY),
        _action(Done, W, "done", BODY),
        _action(Settle, W, None, SETTLING),
        _action(GiveUp, W, None, STEAL),
        _action(PopInjectorFirst, W, "pop", FIND),
        _action(PassInjector, W, None, INJECTOR),
        _action(QuietRound, W, None, FIND),
        _action(RecheckFindsNothing, W, None, RECHECK),
        _action(ProgramPush, W, None, FIND),
        _action(StealFirst, W, None, FIND),
        _action(SkipInjector, W, None, INJECTOR),
        _action(Keep, W, None, RUN),
        _action(StopBegin, (Clients, Modes), "stop_begin"),
        _action(RaiseFlag, C, None),
        _action(DiscardInjector, C, "discard"),
        _action(NothingQueued, C, None),
        _action(Shutdown, C, None),
        _action(StopEnd, C, "stop_end"),
    ),
    drop_actions=("Flush",),
    drop_assumptions=("Sizes", "TasksFormAForest"),
)


def Init(c: OpenConstants) -> Vars:
    """WorkStealing's initial state under the constants known so far (one, under SC)."""
    if c.memory != "sc":
        raise ValueError(f"the open model is sequentially consistent only, not {c.memory!r}")
    (s,) = ws.Init(c)
    assert isinstance(s, Vars)
    return s
