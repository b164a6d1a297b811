"""The model of every controlled primitive: when an operation is enabled and what it does.

An ``Op`` is what a controlled thread announces before touching a controlled object. The
scheduler decides *when* it runs (``enabled``) and then runs it atomically (``apply``), so each
scheduling step is "one operation + the thread's local code up to its next operation".

Alternatives of one thread's pending operation (explored choices, never both enabled with
``NORMAL``): ``TIMEOUT`` (a blocked timed wait gives up) and ``SPURIOUS`` (a condition wait
returns without a notify)."""

from __future__ import annotations

import queue as _queue
from collections import deque
from typing import TYPE_CHECKING, Any, ClassVar, Final

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution
# ``Final`` constants are inlined by the compiled core; a plain module global is a dictionary
# look-up at every use, and these are used at every step.
NORMAL: Final = 0
TIMEOUT: Final = 1
SPURIOUS: Final = 2
ALT_MARK = {NORMAL: "", TIMEOUT: "!", SPURIOUS: "~"}
Action = tuple[int, int]  # (thread id, alternative)

GLOBAL: Final[frozenset[int]] = frozenset({-1})  # dependent with every operation

# How an operation's enabledness is decided (``Op.gate``, from its object's ``gates``): most
# operations can always run, and a parked condition wait never runs without a notify, so only the
# remaining few ask their object at each step.
ALWAYS: Final = 0
ASK: Final = 1
NEVER: Final = 2


class Op:
    """One announced operation. ``objs`` are the object ids it touches (for DPOR).

    A hand-written slotted class rather than a dataclass: one is built per scheduling step, and
    the generated ``__init__`` with its defaults and ``__post_init__`` was a visible share of it.
    """

    __slots__ = ("args", "deadline", "gate", "kind", "obj", "objs", "read", "result", "source", "timeout")

    def __init__(
        self,
        kind: str,
        obj: ObjState,
        args: tuple[Any, ...] = (),
        timeout: float | None = None,
        read: bool = False,
        objs: frozenset[int] | None = None,
        source: tuple[str, int] = ("", 0),
        deadline: float = 0.0,
        result: object = None,
    ) -> None:
        self.kind = kind
        self.obj = obj
        self.args = args
        self.timeout = timeout  # a timed blocking operation may time out
        self.read = read  # a pure read: independent of other reads of the same object
        if objs:
            self.objs: frozenset[int] = objs
        else:
            self.objs = obj.own if obj.fixed_footprint else obj.footprint(self)
        self.gate: int = obj.gate_of.get(kind, ALWAYS)
        self.source = source
        self.deadline = deadline
        self.result = result

    def __repr__(self) -> str:
        return f"Op({self.kind!r}, {self.obj.name!r}, {self.args!r})"

    def describe(self) -> str:
        if self.kind == "spawn":
            return "spawn"
        if self.kind == "reacquire":
            return "wait woke, reacquired"
        if self.kind == "wake":
            return "wait (parked)"
        if self.kind == "acquire" and self.args == (True,) and self.timeout is None:
            return "acquire"
        if self.kind in ("read", "write") and not self.args:
            return self.kind
        if self.kind in ("begin", "exit", "yield"):
            label = self.args[0] if self.kind == "yield" and self.args and self.args[0] else ""
            return f"{self.kind}({label})" if label else self.kind
        shown = [repr(a) for a in self.args]
        if self.timeout is not None and self.kind != "sleep":  # (a sleep's is its length)
            shown.append(f"timeout={self.timeout:g}")
        return f"{self.kind}({', '.join(shown)})"


def dependent(a: Op, b: Op) -> bool:
    if a.objs is GLOBAL or b.objs is GLOBAL:
        return True
    if a.read and b.read:
        return False
    return not a.objs.isdisjoint(b.objs)


class Resume:
    """Give ``value`` back to the thread (the operation returns it)."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value


# Shared outcomes for the constant results (a Resume is never changed after it is made): most
# steps return one of these, so they need no allocation.
RESUME_NONE: Final = Resume(None)
RESUME_TRUE: Final = Resume(True)
RESUME_FALSE: Final = Resume(False)


class Raise:
    """Raise ``error`` in the thread (a misuse ``on`` an object: CPython's words, and the object
    named in a note, which a report's traceback shows)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException, on: ObjState | None = None) -> None:
        if on is not None and on.name:
            error.add_note(f"(raised by the controlled {on.kind} {on.name})")
        self.error = error


class Park:
    """Keep the thread suspended; its pending operation becomes ``op``."""

    __slots__ = ("op",)

    def __init__(self, op: Op) -> None:
        self.op = op


Outcome = Resume | Raise | Park


# ``frozenset({oid})`` per object id, shared by the objects of every execution
_OWN: Final[dict[int, frozenset[int]]] = {}


class ObjState:
    """Model state of one controlled object."""

    kind = "object"
    # operation kind -> ASK (``enabled`` decides) or NEVER; every other kind is always enabled
    gates: ClassVar[dict[str, int]] = {}
    # operation kinds whose blocked thread waits for a signal (a notify, a set, a release, ...),
    # not for a lock: a deadlock with such a waiter and pending work is a lost wakeup
    signals: ClassVar[frozenset[str]] = frozenset()
    fixed_footprint = True  # every operation touches just this object (``own``)

    def __init__(self, oid: int, name: str) -> None:
        self.oid = oid
        self.name = name or f"{self.kind}#{oid}"
        # built once: every op on it shares it (and the objects of every execution with this id:
        # a frozenset is immutable, and made anew it cost each object a set and a frozenset)
        own = _OWN.get(oid)
        self.own: frozenset[int] = _OWN.setdefault(oid, frozenset({oid})) if own is None else own
        # ``gates``, read once per object: a class attribute is a by-name look-up for the compiled
        # core, and every ``Op`` reads its object's
        self.gate_of: dict[str, int] = self.gates

    def footprint(self, op: Op) -> frozenset[int]:
        return self.own

    def enabled(self, ex: Execution, op: Op, tid: int) -> bool:
        return True

    def apply(self, ex: Execution, op: Op, tid: int, alt: int) -> Outcome:
        raise NotImplementedError(op.kind)

    def waiting(self, op: Op) -> bool:
        """Is a thread blocked on ``op`` waiting for a signal (rather than for a lock)?"""
        return op.kind in self.signals

    def blocked_detail(self, ex: Execution, op: Op) -> str:
        return ""


class LockState(ObjState):
    kind = "lock"
    gates: ClassVar[dict[str, int]] = {"acquire": ASK}

    def __init__(self, oid: int, name: str, reentrant: bool = False) -> None:
        self.reentrant = reentrant
        if reentrant:
            self.kind = "rlock"
        super().__init__(oid, name)
        self.owner: int | None = None
        self.count = 0

    def free_for(self, tid: int) -> bool:
        return self.owner is None or (self.reentrant and self.owner == tid)

    def enabled(self, ex: Execution, op: Op, tid: int) -> bool:
        if op.kind == "acquire" and op.args[0]:  # blocking (``free_for``, inline: runs every step)
            return self.owner is None or (self.reentrant and self.owner == tid)
        return True

    def take(self, tid: int, count: int = 1) -> None:
        self.owner = tid
        self.count += count

    def apply(self, ex: Execution, op: Op, tid: int, alt: int) -> Outcome:
        if op.kind == "acquire":
            if alt == TIMEOUT or not self.free_for(tid):
                return RESUME_FALSE
            self.take(tid)
            return RESUME_TRUE
        if op.kind == "release":
            if self.owner is None or (self.reentrant and self.owner != tid):
                words = "cannot release un-acquired lock" if self.reentrant else "release unlocked lock"
                return Raise(RuntimeError(words), self)
            self.count -= 1
            if self.count == 0:
                self.owner = None
            return RESUME_NONE
        if op.kind == "locked":
            return Resume(self.owner is not None)
        raise NotImplementedError(op.kind)

    def blocked_detail(self, ex: Execution, op: Op) -> str:
        return f"held by {ex.thread_label(self.owner)}" if self.owner is not None else ""


# (``look``: a program's look at what the lock guards, ``Barrier.n_waiting``: ``patch_types``)
_TOUCH_LOCK: Final = frozenset({"wait", "reacquire", "acquire", "release", "locked", "look"})


class ConditionState(ObjState):
    """A condition variable over ``lock``. Notify wakes waiters in FIFO order (as CPython does)."""

    kind = "condition"
    gates: ClassVar[dict[str, int]] = {"wake": NEVER, "reacquire": ASK}
    signals: ClassVar[frozenset[str]] = frozenset({"wake"})
    fixed_footprint = False

    def __init__(self, oid: int, name: str, lock: LockState) -> None:
        super().__init__(oid, name)
        self.lock = lock
        self.waiters: deque[int] = deque()
        self.with_lock: frozenset[int] = frozenset({oid, lock.oid})

    def footprint(self, op: Op) -> frozenset[int]:
        if op.kind in _TOUCH_LOCK:
            return self.with_lock
        return self.own

    def enabled(self, ex: Execution, op: Op, tid: int) -> bool:
        if op.kind == "wake":
            return False  # only a notify (or a timeout / spurious alternative) moves it on
        if op.kind == "reacquire":
            return self.lock.free_for(tid) if not self.lock.reentrant else self.lock.owner is None
        return True

    def apply(self, ex: Execution, op: Op, tid: int, alt: int) -> Outcome:
        lock = self.lock
        if op.kind == "wait":
            if lock.owner != tid:
                return Raise(RuntimeError("cannot wait on un-acquired lock"), self)
            saved = lock.count
            lock.owner, lock.count = None, 0
            self.waiters.append(tid)
            wake = Op("wake", self, (), timeout=op.timeout)
            wake.source, wake.deadline, wake.result = op.source, op.deadline, saved
            return Park(wake)
        if op.kind == "wake":  # only reached through TIMEOUT or SPURIOUS
            self.waiters.remove(tid)
            return Park(self._reacquire(op, alt != TIMEOUT))
        if op.kind == "reacquire":
            saved = op.args[0]
            lock.take(tid, saved if isinstance(saved, int) and saved > 0 else 1)
            return Resume(op.args[1])
        if op.kind in ("notify", "notify_all"):
            if lock.owner != tid:
                return Raise(RuntimeError("cannot notify on un-acquired lock"), self)
            n = len(self.waiters) if op.kind == "notify_all" else int(op.args[0])
            for _ in range(min(n, len(self.waiters))):
                woken = self.waiters.popleft()
                ex.threads[woken].pending = self._reacquire(ex.threads[woken].pending, True)
            return RESUME_NONE
        if op.kind in ("waiters", "look"):
            return Resume(len(self.waiters))
        return lock.apply(ex, op, tid, alt)

    def _reacquire(self, wake: Op | None, result: bool) -> Op:
        saved = wake.result if wake is not None else 1
        op = Op("reacquire", self, (saved, result))
        if wake is not None:
            op.source = wake.source
        return op

    def blocked_detail(self, ex: Execution, op: Op) -> str:
        if op.kind == "wake":
            return "waiting for a notify"
        return self.lock.blocked_detail(ex, op)


class EventState(ObjState):
    kind = "event"
    gates: ClassVar[dict[str, int]] = {"wait": ASK}
    signals: ClassVar[frozenset[str]] = frozenset({"wait"})

    def __init__(self, oid: int, name: str) -> None:
        super().__init__(oid, name)
        self.flag = False

    def enabled(self, ex: Execution, op: Op, tid: int) -> bool:
        return op.kind != "wait" or self.flag

    def apply(self, ex: Execution, op: Op, tid: int, alt: int) -> Outcome:
        if op.kind in ("set", "clear"):
            self.flag = op.kind == "set"
            return RESUME_NONE
        return Resume(self.flag)  # is_set, wait


class SemaphoreState(ObjState):
    kind = "semaphore"
    gates: ClassVar[dict[str, int]] = {"acquire": ASK}
    signals: ClassVar[frozenset[str]] = frozenset({"acquire"})

    def __init__(self, oid: int, name: str, value: int, bound: int | None = None) -> None:
        super().__init__(oid, name)
        self.value = value
        self.bound = bound

    def enabled(self, ex: Execution, op: Op, tid: int) -> bool:
        return op.kind != "acquire" or not op.args[0] or self.value > 0

    def apply(self, ex: Execution, op: Op, tid: int, alt: int) -> Outcome:
        if op.kind == "acquire":
            if alt == TIMEOUT or self.value <= 0:
                return RESUME_FALSE
            self.value -= 1
            return RESUME_TRUE
        if op.kind == "release":
            n = int(op.args[0])
            if self.bound is not None and self.value + n > self.bound:
                return Raise(ValueError("Semaphore released too many times"), self)
            self.value += n
            return RESUME_NONE
        if op.kind != "value":  # (``value``: a program's look at CPython's ``_value``)
            raise NotImplementedError(op.kind)
        return Resume(self.value)


class QueueState(ObjState):
    kind = "queue"
    gates: ClassVar[dict[str, int]] = {"put": ASK, "get": ASK, "join": ASK}
    signals: ClassVar[frozenset[str]] = frozenset({"put", "get", "join"})

    def __init__(self, oid: int, name: str, maxsize: Any, lifo: bool = False) -> None:
        super().__init__(oid, name)
        self.maxsize: Any = maxsize  # (``q.maxsize = n`` sets it: ``set_maxsize``)
        self.lifo = lifo
        self.items: deque[object] = deque()
        self.unfinished = 0  # items put and not yet marked done (``task_done``), as ``queue.Queue``

    def full(self) -> bool:
        return bool(0 < self.maxsize <= len(self.items))

    def enabled(self, ex: Execution, op: Op, tid: int) -> bool:
        if op.kind == "put" and op.args[1]:
            return not self.full()
        if op.kind == "get" and op.args[0]:
            return bool(self.items)
        if op.kind == "join":
            return self.unfinished == 0
        return True

    def apply(self, ex: Execution, op: Op, tid: int, alt: int) -> Outcome:
        if op.kind == "put":
            if alt == TIMEOUT or self.full():
                return Raise(_queue.Full())
            self.items.append(op.args[0])
            self.unfinished += 1
            return RESUME_NONE
        if op.kind == "get":
            if alt == TIMEOUT or not self.items:
                return Raise(_queue.Empty())
            return Resume(self.items.pop() if self.lifo else self.items.popleft())
        if op.kind == "qsize":
            return Resume(len(self.items))
        if op.kind == "empty":
            return Resume(not self.items)
        if op.kind == "full":
            return Resume(self.full())
        if op.kind == "task_done":
            if self.unfinished <= 0:
                return Raise(ValueError("task_done() called too many times"))
            self.unfinished -= 1
            return RESUME_NONE
        if op.kind == "join":
            return RESUME_NONE
        if op.kind == "unfinished":
            return Resume(self.unfinished)
        if op.kind == "maxsize":
            return Resume(self.maxsize)
        if op.kind == "set_maxsize":
            self.maxsize = op.args[0]
            return RESUME_NONE
        raise NotImplementedError(op.kind)

    def blocked_detail(self, ex: Execution, op: Op) -> str:
        if op.kind == "join":
            return f"{self.unfinished} item(s) not yet marked done"
        return ""


class AtomicState(ObjState):
    kind = "atomic"

    def __init__(self, oid: int, name: str, value: object, by_identity: bool) -> None:
        super().__init__(oid, name)
        self.value: Any = value
        self.by_identity = by_identity

    def apply(self, ex: Execution, op: Op, tid: int, alt: int) -> Outcome:
        if op.kind == "load":
            return Resume(self.value)
        if op.kind == "store":
            self.value = op.args[0]
            return RESUME_NONE
        if op.kind == "cas":
            expected, new = op.args
            same = self.value is expected if self.by_identity else self.value == expected
            if same:
                self.value = new
            return Resume(same)
        if op.kind == "fetch_add":
            old = self.value
            self.value = old + op.args[0]
            return Resume(old)
        if op.kind == "swap":
            old, self.value = self.value, op.args[0]
            return Resume(old)
        raise NotImplementedError(op.kind)


class LocationState(ObjState):
    """A plain shared location whose racy accesses are scheduling points (``races.py``,
    ``interleave_races``): a ``read`` (a pure read) or a ``write`` of it, in the step of the access."""

    kind = "location"

    def apply(self, ex: Execution, op: Op, tid: int, alt: int) -> Outcome:
        return RESUME_NONE


class ThreadState(ObjState):
    """The thread object itself: spawned, begun, exited, joined."""

    kind = "thread"
    gates: ClassVar[dict[str, int]] = {"join": ASK}
    signals: ClassVar[frozenset[str]] = frozenset({"join"})

    def __init__(self, oid: int, name: str, tid: int) -> None:
        super().__init__(oid, name)
        self.tid = tid
        self.finished = False

    def enabled(self, ex: Execution, op: Op, tid: int) -> bool:
        return op.kind != "join" or self.finished

    def apply(self, ex: Execution, op: Op, tid: int, alt: int) -> Outcome:
        if op.kind == "spawn":
            ex.add_thread(self)
            return RESUME_NONE
        if op.kind == "begin":
            return RESUME_NONE
        if op.kind == "exit":
            self.finished = True
            return RESUME_NONE
        if op.kind == "join":
            return RESUME_NONE
        if op.kind == "is_alive":
            return Resume(not self.finished)
        raise NotImplementedError(op.kind)

    def blocked_detail(self, ex: Execution, op: Op) -> str:
        return f"waiting for {self.name} to finish"
