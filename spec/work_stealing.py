"""MODULE WorkStealing — a Chase-Lev work-stealing pool (seeds.md, design 001).

Each worker owns a **deque**: three shared words ``bottom``, ``top`` and
``buffer`` (which circular array is current) and the arrays' slots. The owner
pushes and takes at the bottom with plain loads and stores; a thief steals at
the top with one CAS on ``top``; the race for the last element is settled by a
CAS on ``top`` in both. A full array grows: the owner copies ``[top, bottom)``
into an array twice the size and publishes it by storing ``buffer``.

The pool: a client submits root tasks to an **injector** (a locked queue);
a worker runs a task, which forks its subtasks (pushed on the worker's deque)
and, in ``join`` mode, waits for them — helping, i.e. running other work,
meanwhile. A worker looks for work in order: its own deque, the injector, a
victim's deque (any other worker: every victim is explored). Finding nothing,
it **parks**: it registers in the sleep word (an atomic read-modify-write),
re-checks every queue, and only then sleeps. Whoever makes work — a push, a
submit, the completion of a joined task's last subtask — wakes one registered
sleeper with an RMW on the same word: either the sleeper's re-check sees the
work, or the waker sees the sleeper.

Every action is one atomic step of the real code: one shared load, store or
CAS (a load of a word only this thread writes is folded into the step that
uses it; a thief's load of ``buffer`` and of the slot it points to are one
step, because a slot at index ``top`` is never rewritten while ``top`` stays
put — see docs/work-stealing.md, "Atomicity").

**Memory.** The deque words and slots live in a ``spec.memory.Memory``:
``Constants.memory = "sc"`` (sequential consistency) or ``"tso"`` (x86-TSO: each
worker's stores go through a FIFO store buffer that the ``Flush`` action drains
at any moment; a CAS and the sleep-word RMW are full fences). The owner's
``take`` fences between its ``bottom`` store and its ``top`` load; without it
the deque is still correct under SC, and broken under TSO (the mutant
``missing-fence``). Configurations: ``small``, ``standard`` and ``large`` are TSO;
``small-sc`` is the same model under SC (model_checks/designs/work_stealing).

**Ghost.** ``deque[w]`` is a sequential deque updated where each operation
commits (push: its ``bottom`` store; take: its ``top`` load or CAS; steal: its
CAS). Every element a take or steal returns must be the one the sequential
deque returns there (``DequeLinearizable``).
"""

# ruff: noqa: F405  (names from the state module this one EXTENDS)
from __future__ import annotations

from typing import Any

from spec.language import WF, EventuallyAlways, Function, SpecBuilder, emit
from spec.memory import MODELS, Memory
from spec.symmetry import least_renaming

# EXTENDS work_stealing_state: its constants, variables, operators and invariants are this module's too.
from spec.work_stealing_state import *  # noqa: F403

# ============================================================================ CONSTANTS


WorkStealing = SpecBuilder("work-stealing", __doc__ or "")


@WorkStealing.assume
def Sizes(c: Constants) -> str | None:
    """Two workers at least (a thief needs a victim); a power-of-two capacity; a known memory model."""
    if c.workers < 2:
        return "workers must be at least 2"
    if c.capacity < 1 or c.capacity & (c.capacity - 1):
        return f"capacity must be a power of two, not {c.capacity}"
    if c.memory not in MODELS:
        return f"memory must be one of {', '.join(MODELS)}, not {c.memory!r}"
    return None


@WorkStealing.assume
def TasksFormAForest(c: Constants) -> str | None:
    """Each task is submitted or forked exactly once: the roots and the subtasks are all the tasks."""
    spawned = list(c.roots) + [kid for _, kids in c.tasks for kid in kids]
    if sorted(spawned) != sorted(c.task_names()):
        return f"roots and subtasks {sorted(spawned)} must list every task {sorted(c.task_names())} once"
    return None


# ============================================================================ INIT


@WorkStealing.init
def Init(c: Constants) -> list[Vars]:
    ws = Workers(c)
    cells: list[tuple[Any, Any]] = []
    for w in ws:
        cells += [(BOTTOM(w), 0), (TOP(w), 0), (BUFFER(w), 0)]
        cells += [(("slot", w, g, i), None) for g in range(c.generations()) for i in range(c.size(g))]
    tasks = c.task_names()
    return [
        Vars(
            mem=Memory.initial(c.memory, ws, cells),
            worker=Function.const(ws, Local(FIND)),
            sleeping=Function.const(ws, False),
            injector=(),
            client=("submit", 0),
            ran=Function.const(tasks, 0),
            done=Function.const(tasks, False),
            deque=Function.const(ws, ()),
            wrong=None,
        )
    ]


# ============================================================================ ACTIONS: the owner's take


@WorkStealing.program_counter(Workers)
def WorkerPc(c: Constants, s: Vars, w: str) -> str:
    return s.worker[w].pc


@WorkStealing.action(Workers, at=FIND)
def TakeBegin(c: Constants, s: Vars, w: str) -> object:
    """take(): b := bottom - 1; bottom := b (a plain store: under TSO it waits in the store buffer)."""
    me = at(s, w, FIND)
    if me is None or Resumable(c, s, w):
        return None
    b = s.mem.load(w, BOTTOM(w)) - 1
    gen = s.mem.load(w, BUFFER(w))
    return goto(s, w, Local(TAKE, b=b, gen=gen, stack=me.stack), mem=s.mem.store(w, BOTTOM(w), b))


# ``fenced``: the store-load fence of take (TakeLoadsTop); the mutant missing-fence leaves it out.
@WorkStealing.action(Workers, event="take", at=TAKE)
def Take(c: Constants, s: Vars, w: str, fenced: bool = True) -> object:
    """fence; t := top; t < b: the bottom element is the owner's without a CAS."""
    taking = TakeLoadsTop(s, w, fenced)
    if taking is None or taking.t >= taking.b:
        return None
    me, mem = taking.me, taking.mem
    x = mem.load(w, SLOT(c, w, taking.gen, taking.b))
    s = goto(s, w, Local(RUN, x, stack=me.stack), mem=mem)
    return emit(Committed(s, w, x, "bottom"), task=x, result="success")


@WorkStealing.action(Workers, event="take", at=TAKE)
def TakeEmpty(c: Constants, s: Vars, w: str, fenced: bool = True) -> object:
    """fence; t := top; t > b: the deque was empty — bottom := t, look elsewhere."""
    taking = TakeLoadsTop(s, w, fenced)
    if taking is None or taking.t <= taking.b:
        return None
    me, mem, t = taking.me, taking.mem, taking.t
    s = goto(s, w, Local(INJECTOR, stack=me.stack), mem=mem.store(w, BOTTOM(w), t))
    return emit(FoundEmpty(s, w), result="empty")


@WorkStealing.action(Workers, at=TAKE)
def TakeContended(c: Constants, s: Vars, w: str, fenced: bool = True) -> object:
    """fence; t := top; t = b: one element left, which a thief may be stealing — settle it by CAS."""
    taking = TakeLoadsTop(s, w, fenced)
    if taking is None or taking.t != taking.b:
        return None
    me, mem = taking.me, taking.mem
    x = mem.load(w, SLOT(c, w, taking.gen, taking.b))
    return goto(s, w, me._replace(pc=TAKE_LAST, task=x, t=me.b), mem=mem)


@WorkStealing.action(Workers, event="take", at=TAKE_LAST)
def TakeLast(c: Constants, s: Vars, w: str) -> object:
    """CAS(top, t, t + 1) then bottom := t + 1: the element is the owner's if the CAS wins."""
    me = at(s, w, TAKE_LAST)
    if me is None:
        return None
    assert me.t is not None
    mem, won = s.mem.cas(w, TOP(w), me.t, me.t + 1)
    mem = mem.store(w, BOTTOM(w), me.t + 1)
    if won:
        s = goto(s, w, Local(RUN, me.task, stack=me.stack), mem=mem)
        return emit(Committed(s, w, me.task, "bottom"), task=me.task, result="success")
    s = goto(s, w, Local(INJECTOR, stack=me.stack), mem=mem)
    return emit(FoundEmpty(s, w), result="empty", lost_race=True)


# ============================================================================ ACTIONS: injector and steal


@WorkStealing.action(Workers, event="pop", at=INJECTOR)
def PopInjector(c: Constants, s: Vars, w: str) -> object:
    """Under the injector's lock, the oldest submitted task (nothing there: go stealing)."""
    me = at(s, w, INJECTOR)
    if me is None:
        return None
    if not s.injector:
        return emit(goto(s, w, me._replace(pc=STEAL)), result="empty")
    x = s.injector[0]
    return emit(goto(s, w, Local(RUN, x, stack=me.stack), injector=s.injector[1:]), task=x, result="success")


@WorkStealing.action(Workers, Workers, at=STEAL)
def StealBegin(c: Constants, s: Vars, w: str, v: str) -> object:
    """steal(v): t := v.top — from any other worker (every victim is explored)."""
    me = at(s, w, STEAL)
    if me is None or v == w:
        return None
    return goto(s, w, me._replace(pc=STEAL_BOTTOM, victim=v, t=s.mem.load(w, TOP(v))))


@WorkStealing.action(Workers, event="steal", at=STEAL_BOTTOM)
def StealEmpty(c: Constants, s: Vars, w: str) -> object:
    """b := v.bottom; t >= b: the victim's deque is empty — go park."""
    st = StealingAt(s, w, STEAL_BOTTOM)
    if st is None or st.t < s.mem.load(w, BOTTOM(st.victim)):
        return None
    return emit(goto(s, w, Local(SLEEPY, stack=st.me.stack)), victim=st.victim, result="empty")


@WorkStealing.action(Workers, at=STEAL_BOTTOM)
def StealSeesWork(c: Constants, s: Vars, w: str) -> object:
    """b := v.bottom; t < b: there is an element at index t."""
    st = StealingAt(s, w, STEAL_BOTTOM)
    if st is None or st.t >= s.mem.load(w, BOTTOM(st.victim)):
        return None
    return goto(s, w, st.me._replace(pc=STEAL_READ))


@WorkStealing.action(Workers, at=STEAL_READ)
def StealRead(c: Constants, s: Vars, w: str) -> object:
    """a := v.buffer; x := a[t mod size(a)] — read *before* the CAS that claims it."""
    st = StealingAt(s, w, STEAL_READ)
    if st is None:
        return None
    x = s.mem.load(w, SLOT(c, st.victim, s.mem.load(w, BUFFER(st.victim)), st.t))
    return goto(s, w, st.me._replace(pc=STEAL_CAS, task=x))


@WorkStealing.action(Workers, event="steal", at=STEAL_CAS)
def Steal(c: Constants, s: Vars, w: str) -> object:
    """CAS(v.top, t, t + 1): won — x is the thief's; lost — abort (someone else took index t)."""
    claim = StealCas(s, w)
    if claim is None:
        return None
    (me, v, _), mem, won = claim
    if not won:
        return StealAborts(s, w, claim)
    s = goto(s, w, Local(RUN, me.task, stack=me.stack), mem=mem)
    return emit(Committed(s, v, me.task, "top"), victim=v, task=me.task, result="success")


# ============================================================================ ACTIONS: run, fork, join


@WorkStealing.action(Workers, event="run", at=RUN)
def Run(c: Constants, s: Vars, w: str) -> object:
    """The task runs: it forks its subtasks (if any), else it is done."""
    me = at(s, w, RUN)
    if me is None or me.task not in s.ran.domain():
        return None  # a slot that held no task: DequeLinearizable already reports it
    x = me.task
    s = s._replace(ran=s.ran.except_(x, s.ran[x] + 1))
    if c.children(x):
        return emit(goto(s, w, Local(FORK, x, stack=me.stack)), task=x)
    return emit(Complete(c, goto(s, w, Local(FIND, stack=me.stack)), x), task=x)


@WorkStealing.action(Workers, at=FORK)
def PushBegin(c: Constants, s: Vars, w: str) -> object:
    """push(x): b := bottom; t := top; a := buffer — a full array must grow first."""
    me = at(s, w, FORK)
    if me is None:
        return None
    b, t, gen = s.mem.load(w, BOTTOM(w)), s.mem.load(w, TOP(w)), s.mem.load(w, BUFFER(w))
    return goto(s, w, me._replace(pc=GROW if b - t >= c.size(gen) else WRITE, b=b, t=t, gen=gen))


@WorkStealing.action(Workers, at=GROW)
def Grow(c: Constants, s: Vars, w: str) -> object:
    """Copy [t, b) into an array twice the size, then buffer := it (the store that publishes it)."""
    me = at(s, w, GROW)
    if me is None:
        return None
    assert me.gen is not None
    new = me.gen + 1
    if new >= c.generations():
        return None
    mem = s.mem.publish(CopyInto(c, s, w, me, new)).store(w, BUFFER(w), new)
    return goto(s, w, me._replace(pc=WRITE, gen=new), mem=mem)


@WorkStealing.action(Workers, at=WRITE)
def PushWrite(c: Constants, s: Vars, w: str) -> object:
    """a[b mod size(a)] := x."""
    pushing = PushingAt(c, s, w, WRITE)
    if pushing is None:
        return None
    me, kid, b, gen = pushing
    return goto(s, w, me._replace(pc=PUBLISH), mem=s.mem.store(w, SLOT(c, w, gen, b), kid))


@WorkStealing.action(Workers, event="push", at=PUBLISH)
def Push(c: Constants, s: Vars, w: str) -> object:
    """bottom := b + 1: the element is in the deque (thieves see it once the store leaves the buffer)."""
    pushing = PushingAt(c, s, w, PUBLISH)
    if pushing is None:
        return None
    me, kid, b, _ = pushing
    s = goto(
        s,
        w,
        me._replace(pc=NOTIFY, b=None, t=None, gen=None),
        mem=s.mem.store(w, BOTTOM(w), b + 1),
        deque=s.deque.except_(w, (*s.deque[w], kid)),
    )
    return emit(s, task=kid)


@WorkStealing.action(Workers, Workers, event="notify", at=NOTIFY)
def NotifyAfterPush(c: Constants, s: Vars, w: str, sleeper: str) -> object:
    """RMW on the sleep word (a full fence): wake one registered sleeper, if there is one."""
    me = at(s, w, NOTIFY)
    if me is None or sleeper not in Sleepers(c, s):
        return None
    return emit(Forked(c, Wake(s._replace(mem=s.mem.fence(w)), sleeper), w, me), woken=sleeper)


@WorkStealing.action(Workers, event="notify", at=NOTIFY)
def NotifyNobody(c: Constants, s: Vars, w: str) -> object:
    """The same RMW finds nobody registered to park."""
    me = at(s, w, NOTIFY)
    if me is None or any(s.sleeping.values()):
        return None
    return emit(Forked(c, s._replace(mem=s.mem.fence(w)), w, me), woken=None)


@WorkStealing.action(Workers, event="join", at=FIND)
def Resume(c: Constants, s: Vars, w: str) -> object:
    """The innermost suspended task's subtasks are all done: it completes."""
    me = at(s, w, FIND)
    if me is None or not Resumable(c, s, w):
        return None
    x = me.stack[-1]
    return emit(Complete(c, goto(s, w, Local(FIND, stack=me.stack[:-1])), x), task=x)


# ============================================================================ ACTIONS: parking


@WorkStealing.action(Workers, at=SLEEPY)
def Register(c: Constants, s: Vars, w: str) -> object:
    """Nothing found: register in the sleep word (an RMW, a full fence) before looking once more."""
    me = at(s, w, SLEEPY)
    if me is None:
        return None
    return goto(s, w, me._replace(pc=RECHECK), mem=s.mem.fence(w), sleeping=s.sleeping.except_(w, True))


@WorkStealing.action(Workers, at=RECHECK)
def RecheckFindsWork(c: Constants, s: Vars, w: str) -> object:
    """The re-check finds work (or a waker already cleared the registration): unregister, look again."""
    me = at(s, w, RECHECK)
    if me is None or not (WorkVisible(c, s, w) or not s.sleeping[w]):
        return None
    return goto(s, w, Local(FIND, stack=me.stack), sleeping=s.sleeping.except_(w, False))


@WorkStealing.action(Workers, event="park", at=RECHECK)
def Park(c: Constants, s: Vars, w: str) -> object:
    """The re-check finds nothing and the registration stands: sleep until a waker clears it."""
    me = at(s, w, RECHECK)
    if me is None or WorkVisible(c, s, w) or not s.sleeping[w]:
        return None
    return emit(goto(s, w, me._replace(pc=ASLEEP)))


@WorkStealing.action(Workers, event="unpark", at=ASLEEP)
def Unpark(c: Constants, s: Vars, w: str) -> object:
    """A waker cleared the registration: the worker wakes and looks for work."""
    me = at(s, w, ASLEEP)
    if me is None or s.sleeping[w]:
        return None
    return emit(goto(s, w, Local(FIND, stack=me.stack)))


@WorkStealing.action(Workers)
def Flush(c: Constants, s: Vars, w: str) -> object:
    """TSO: the oldest store in w's buffer reaches memory (never enabled under SC)."""
    mem = s.mem.flush(w)
    return None if mem is None else s._replace(mem=mem)


# ============================================================================ ACTIONS: the client


@WorkStealing.action(Clients, event="submit")
def Submit(c: Constants, s: Vars, p: str) -> object:
    """The client puts its next root task in the injector (under its lock)."""
    pc, k = s.client
    if pc != "submit" or k >= len(c.roots):
        return None
    return emit(s._replace(injector=(*s.injector, c.roots[k]), client=("notify", k)), task=c.roots[k])


@WorkStealing.action(Clients, Workers, event="notify")
def NotifyAfterSubmit(c: Constants, s: Vars, p: str, sleeper: str) -> object:
    """RMW on the sleep word: wake one registered sleeper (or nobody, if none is registered)."""
    pc, k = s.client
    if pc != "notify" or sleeper not in Sleepers(c, s):
        return None
    return emit(Wake(s._replace(client=("submit", k + 1)), sleeper), woken=sleeper)


@WorkStealing.action(Clients, event="notify")
def NotifyNobodyAfterSubmit(c: Constants, s: Vars, p: str) -> object:
    pc, k = s.client
    if pc != "notify" or any(s.sleeping.values()):
        return None
    return emit(s._replace(client=("submit", k + 1)), woken=None)


# ============================================================================ INVARIANTS
# The state predicates of spec.work_stealing_state, checked in every reachable state.

WorkStealing.invariant(reads="ran")(RunsAtMostOnce)
WorkStealing.invariant(reads="wrong")(DequeLinearizable)
WorkStealing.invariant(reads=("injector", "deque", "worker", "ran"))(HeldOnce)
WorkStealing.invariant(NoLostWakeup)


# ============================================================================ FAIRNESS & LIVENESS

# Workers and the client are threads the OS keeps running: weak fairness for each.
WorkStealing.fairness(WF(Workers), WF(Clients))


def AllDone(c: Constants, s: Vars) -> bool:
    return all(s.done.values())


WorkStealing.property(
    EventuallyAlways("AllTasksDone", AllDone, "the pool terminates: every task runs and completes")
)

# ============================================================================ SYMMETRY & DONE


@WorkStealing.symmetry
def WorkersAreInterchangeable(c: Constants, s: Vars) -> Vars:
    """Workers differ only by name: the least renaming (deques, buffers, registers) represents all."""
    # Ordered by the workers' registers first (cheap, and nearly always decisive), then by everything.
    return least_renaming(Workers(c), lambda to: Renamed(c, s, to), quick=QuickKey)


@WorkStealing.terminal
def Finished(c: Constants, s: Vars) -> bool:
    """Every task done, the client through its roots, every worker parked."""
    return AllDone(c, s) and all(me.pc == ASLEEP for me in s.worker.values())


# How a person reads a state (counterexamples): spec.work_stealing_state.Show.
WorkStealing.describe(Show)


SPEC = WorkStealing.spec
