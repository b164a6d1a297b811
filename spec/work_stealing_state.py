"""MODULE WorkStealingState — the constants, variables and state operators of ``spec.work_stealing``.

``spec.work_stealing`` EXTENDS this module with the initial state, the actions and
fairness, and checks the invariants defined here; everything here is a pure function
of the constants and one state.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from spec.language import Emitted, Function, emit
from spec.memory import Memory

# ============================================================================ CONSTANTS


Task = str


@dataclass(frozen=True)
class Constants:
    workers: int
    capacity: int  # slots of each worker's first array (a power of two; an array grows by doubling)
    tasks: tuple[tuple[Task, tuple[Task, ...]], ...]  # every task and the subtasks it forks, in order
    roots: tuple[Task, ...]  # submitted by the client to the injector, in order
    join: bool = False  # a task with subtasks waits for them before it completes
    memory: str = "tso"  # "sc" | "tso"

    def worker_names(self) -> tuple[str, ...]:
        return tuple(f"w{i}" for i in range(self.workers))

    def task_names(self) -> tuple[Task, ...]:
        return tuple(name for name, _ in self.tasks)

    def children(self, task: Task | None) -> tuple[Task, ...]:
        return dict(self.tasks).get(task or "", ())

    def awaits(self, frame: Any) -> tuple[Task, ...]:
        """What a task suspended in join (an entry of ``Local.stack``) waits for: all its subtasks."""
        return self.children(frame)

    def parent(self, task: Task) -> Task | None:
        return next((p for p, kids in self.tasks if task in kids), None)

    def size(self, gen: int) -> int:
        return self.capacity << gen

    def generations(self) -> int:
        """Arrays per worker: enough to hold every task at once."""
        gen = 0
        while self.size(gen) < len(self.tasks):
            gen += 1
        return gen + 1


def Workers(c: Constants) -> tuple[str, ...]:
    return c.worker_names()


def Clients(c: Constants) -> tuple[str, ...]:
    return ("client",)


# Shared locations of worker w's deque.
def BOTTOM(w: str) -> tuple[str, str]:
    return ("bottom", w)


def TOP(w: str) -> tuple[str, str]:
    return ("top", w)


def BUFFER(w: str) -> tuple[str, str]:
    return ("buffer", w)


def SLOT(c: Constants, w: str, gen: int, index: int) -> tuple[str, str, int, int]:
    """The slot of logical index ``index`` in array ``gen``: the index masked by that array's size."""
    return ("slot", w, gen, index % c.size(gen))


# ============================================================================ VARIABLES


class Local(NamedTuple):
    """A worker's program counter and registers (``None`` when unused, so states stay few)."""

    pc: str
    task: Task | None = None  # the task in hand, or the one forking
    b: int | None = None  # bottom / the index being taken
    t: int | None = None  # top as loaded
    gen: int | None = None  # the array as loaded
    victim: str | None = None
    k: int = 0  # the subtask being pushed
    stack: tuple[Any, ...] = ()  # suspended in join, innermost last: tasks (the open model's frames)


class Vars(NamedTuple):
    mem: Memory  # bottom, top, buffer and slots of every deque
    worker: Function[str, Local]
    sleeping: Function[str, bool]  # the sleep word: registered to park
    injector: tuple[Task, ...]  # a locked FIFO queue
    client: tuple[str, int]  # (pc, roots submitted)
    ran: Function[Task, int]  # ghost: times each task started
    done: Function[Task, bool]  # ghost: completed (subtasks joined, in join mode)
    deque: Function[str, tuple[Task, ...]]  # ghost: the sequential deque of each worker
    # ghost: the first take/steal the sequential deque disagrees with: (deque, end, returned, deque then)
    wrong: tuple[str, str, Task | None, tuple[Task, ...]] | None


# Worker program counters.
FIND, TAKE, TAKE_LAST, INJECTOR, STEAL = "find", "take", "take-last", "injector", "steal"


STEAL_BOTTOM, STEAL_READ, STEAL_CAS = "steal-bottom", "steal-read", "steal-cas"


RUN, FORK, GROW, WRITE, PUBLISH, NOTIFY = "run", "fork", "grow", "write", "publish", "notify"


SLEEPY, RECHECK, ASLEEP, JOINING = "sleepy", "recheck", "asleep", "joining"


# ============================================================================ helpers


def at(s: Vars, w: str, pc: str) -> Local | None:
    me = s.worker[w]
    return me if me.pc == pc else None


def goto(s: Vars, w: str, local: Local, **changes: Any) -> Vars:
    return s._replace(worker=s.worker.except_(w, local), **changes)


class Taking(NamedTuple):
    """What the owner's take holds after its top load: its registers, memory, b, t and the array."""

    me: Local
    mem: Memory
    b: int
    t: int
    gen: int


def TakeLoadsTop(s: Vars, w: str, fenced: bool = True) -> Taking | None:
    """Owner w at ``take``: the store-load fence, then t := top (None elsewhere).

    ``fenced=False`` loads top with the ``bottom`` store maybe still in the store buffer.
    """
    me = at(s, w, TAKE)
    if me is None:
        return None
    assert me.b is not None and me.gen is not None
    mem = s.mem.fence(w) if fenced else s.mem
    return Taking(me, mem, me.b, mem.load(w, TOP(w)), me.gen)


class Stealing(NamedTuple):
    me: Local
    victim: str
    t: int  # the victim's top as loaded


def StealingAt(s: Vars, w: str, pc: str) -> Stealing | None:
    """Thief w at ``pc``, with its victim and the top index it read; None elsewhere."""
    me = at(s, w, pc)
    if me is None:
        return None
    assert me.victim is not None and me.t is not None
    return Stealing(me, me.victim, me.t)


def StealCas(s: Vars, w: str) -> tuple[Stealing, Memory, bool] | None:
    """Thief w at ``steal-cas``: CAS(v.top, t, t + 1) — what it held, the memory after, whether it won."""
    st = StealingAt(s, w, STEAL_CAS)
    if st is None:
        return None
    mem, won = s.mem.cas(w, TOP(st.victim), st.t, st.t + 1)
    return st, mem, won


def StealAborts(s: Vars, w: str, claim: tuple[Stealing, Memory, bool]) -> Emitted[Vars]:
    """The CAS lost (someone else took index t): the steal aborts, the thief looks for work again."""
    st, mem, _ = claim
    return emit(goto(s, w, Local(FIND, stack=st.me.stack), mem=mem), victim=st.victim, result="abort")


class Pushing(NamedTuple):
    me: Local
    kid: Task  # the subtask being pushed
    b: int  # bottom as loaded
    gen: int  # the array as loaded


def PushingAt(c: Constants, s: Vars, w: str, pc: str) -> Pushing | None:
    """Owner w at ``pc`` of a push, with the subtask it pushes, bottom and the array; None elsewhere."""
    me = at(s, w, pc)
    if me is None:
        return None
    assert me.b is not None and me.gen is not None
    return Pushing(me, c.children(me.task)[me.k], me.b, me.gen)


def CopyInto(c: Constants, s: Vars, w: str, me: Local, new: int) -> list[tuple[Any, Any]]:
    """The slots of the new array: elements [t, b) of the old one, each at its index masked anew."""
    assert me.t is not None and me.b is not None and me.gen is not None
    return [(SLOT(c, w, new, i), s.mem.load(w, SLOT(c, w, me.gen, i))) for i in range(me.t, me.b)]


def WorkVisible(c: Constants, s: Vars, w: str) -> bool:
    """What the re-check sees: a submitted task, a non-empty deque, or its own join ready to resume."""
    if s.injector or Resumable(c, s, w):
        return True
    return any(s.mem.load(w, TOP(v)) < s.mem.load(w, BOTTOM(v)) for v in Workers(c))


def Committed(s: Vars, owner: str, x: Any, end: str) -> Vars:
    """The sequential deque of ``owner`` gives up its ``end`` element where a take/steal returns ``x``."""
    seq = s.deque[owner]
    expected = (seq[-1] if end == "bottom" else seq[0]) if seq else None
    rest = (seq[:-1] if end == "bottom" else seq[1:]) if seq else seq
    wrong = s.wrong
    if wrong is None and x != expected:
        wrong = (owner, end, "an unwritten slot" if x is None else x, seq)
    return s._replace(deque=s.deque.except_(owner, rest), wrong=wrong)


def FoundEmpty(s: Vars, owner: str) -> Vars:
    """A take that returns empty: the sequential deque must be empty too."""
    seq = s.deque[owner]
    if s.wrong is None and seq:
        return s._replace(wrong=(owner, "bottom", None, seq))
    return s


def Resumable(c: Constants, s: Vars, w: str) -> bool:
    """w's innermost suspended join can resume: what it waits for is done."""
    stack = s.worker[w].stack
    return bool(stack) and all(s.done[kid] for kid in c.awaits(stack[-1]))


def Complete(c: Constants, s: Vars, task: Task) -> Vars:
    """``task`` is done; if it was the last subtask a suspended join waits for, wake that worker."""
    s = s._replace(done=s.done.except_(task, True))
    parent = c.parent(task)
    if parent is None or not all(s.done[kid] for kid in c.children(parent)):
        return s
    for u, local in s.worker.items():
        if local.stack and local.stack[-1] == parent and s.sleeping[u]:
            return s._replace(sleeping=s.sleeping.except_(u, False))
    return s


def Forked(c: Constants, s: Vars, w: str, me: Local) -> Vars:
    """After pushing subtask ``k``: the next one, or the task is over (or suspended, in join mode)."""
    assert me.task is not None
    if me.k + 1 < len(c.children(me.task)):
        return goto(s, w, Local(FORK, me.task, k=me.k + 1, stack=me.stack))
    if c.join:
        return goto(s, w, Local(FIND, stack=(*me.stack, me.task)))
    return Complete(c, goto(s, w, Local(FIND, stack=me.stack)), me.task)


def Wake(s: Vars, sleeper: str | None) -> Vars:
    return s if sleeper is None else s._replace(sleeping=s.sleeping.except_(sleeper, False))


def Sleepers(c: Constants, s: Vars) -> Iterator[str | None]:
    """Whom a waker's RMW on the sleep word wakes: any registered sleeper, or nobody if none."""
    registered: list[str | None] = [w for w in Workers(c) if s.sleeping[w]]
    yield from registered or [None]


# ============================================================================ symmetry


def QuickKey(s: Vars) -> tuple[str, ...]:
    return tuple(repr(me) for me in s.worker.values()) + tuple(repr(q) for q in s.deque.values())


def Renamed(c: Constants, s: Vars, to: dict[str, str]) -> Vars:
    back = {new: old for old, new in to.items()}

    def loc(where: Any) -> Any:
        return (where[0], to[where[1]], *where[2:])

    def local(me: Local) -> Local:
        return me if me.victim is None else me._replace(victim=to[me.victim])

    ws = Workers(c)
    return s._replace(
        mem=s.mem.renamed(lambda t: to[str(t)], loc),
        worker=s.worker.with_values(local(s.worker[back[w]]) for w in ws),
        sleeping=s.sleeping.with_values(s.sleeping[back[w]] for w in ws),
        deque=s.deque.with_values(s.deque[back[w]] for w in ws),
        wrong=None if s.wrong is None else (to[s.wrong[0]], *s.wrong[1:]),
    )


# ===================================================== INVARIANTS (registered by spec.work_stealing)


def RunsAtMostOnce(c: Constants, s: Vars) -> str | None:
    """No task runs twice (the last-element race, a resize that duplicates)."""
    twice = [x for x, n in s.ran.items() if n > 1]
    return f"task {twice[0]} ran {s.ran[twice[0]]} times" if twice else None


def DequeLinearizable(c: Constants, s: Vars) -> str | None:
    """Every take and steal returns what the sequential deque returns at its commit step."""
    if s.wrong is None:
        return None
    owner, end, x, seq = s.wrong
    expected = (seq[-1] if end == "bottom" else seq[0]) if seq else "nothing"
    got = "empty" if x is None else x
    return f"{owner}'s deque returned {got} from its {end}; the sequential deque {list(seq)} gives {expected}"


def Holders(c: Constants, s: Vars) -> list[Task]:
    """Where tasks wait to run: the injector, the (sequential) deques, workers' hands."""
    held = list(s.injector) + [x for seq in s.deque.values() for x in seq]
    tasks = s.ran.domain()
    return held + [me.task for me in s.worker.values() if me.pc == RUN and me.task in tasks]


def HeldOnce(c: Constants, s: Vars) -> str | None:
    """A task waiting to run is in one place only (injector, a deque, a hand) and has not run yet."""
    held = Holders(c, s)
    for x in held:
        if held.count(x) > 1:
            return f"task {x} is held {held.count(x)} times ({held})"
        if s.ran[x]:
            return f"task {x} waits to run again after running"
    return None


def NoLostWakeup(c: Constants, s: Vars) -> str | None:
    """Never every worker asleep while a task waits (or a join can resume) and no waker is on its way."""
    if s.client[0] == "notify" or any(me.pc != ASLEEP or not s.sleeping[w] for w, me in s.worker.items()):
        return None  # someone is awake, woken, or about to wake a worker
    if Holders(c, s):
        return f"every worker is parked and nobody will wake one, yet {Holders(c, s)} wait to run"
    stuck = [w for w in Workers(c) if Resumable(c, s, w)]
    if stuck:
        return f"every worker is parked and nobody will wake {stuck[0]}, whose join can resume"
    return None


# ============================================================================ how a person reads a state


def Show(c: Constants, s: Vars) -> dict[str, object]:
    def deque(w: str) -> str:
        b, t, gen = s.mem.cells[BOTTOM(w)], s.mem.cells[TOP(w)], s.mem.cells[BUFFER(w)]
        slots = [s.mem.cells[("slot", w, gen, i)] for i in range(c.size(gen))]
        return f"top={t} bottom={b} array#{gen}={slots}"

    def local(me: Local) -> str:
        regs = {k: v for k, v in me._asdict().items() if k != "pc" and v not in (None, 0, ())}
        return me.pc + (f" {regs}" if regs else "")

    return {
        "deque": {w: deque(w) for w in Workers(c)},
        "store buffers": {w: [f"{a}={v}" for a, v in s.mem.pending(w)] for w in Workers(c)},
        "sequential deque": {w: list(x) for w, x in s.deque.items()},
        "worker": {w: local(me) for w, me in s.worker.items()},
        "sleeping": [w for w, z in s.sleeping.items() if z],
        "injector": list(s.injector),
        "client": f"{s.client[0]} #{s.client[1]}",
        "ran": {x: n for x, n in s.ran.items() if n},
        "done": [x for x, d in s.done.items() if d],
    }
