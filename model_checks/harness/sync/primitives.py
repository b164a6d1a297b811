"""The controlled primitives handed to code under test. Each call is one scheduling point."""

from __future__ import annotations

import math
import queue as _queue
from collections.abc import Callable
from typing import Any, ClassVar, Final, TypeVar, cast

from model_checks.harness.rt.clock import read_clock
from model_checks.harness.rt.objects import (
    ConditionState,
    EventState,
    LockState,
    Op,
    QueueState,
    SemaphoreState,
)
from model_checks.harness.rt.scheduler import Execution, UsageError
from model_checks.harness.sync import reprs
from model_checks.harness.sync.timeouts import (
    _blocks,
    _check_lock_timeout,
    _check_queue_timeout,
    _timeout,
    _wait_refusal,
    timeout_ns,
)

T = TypeVar("T")


_BLOCKING: Final = (True,)
_NOTIFY_ONE: Final = (1,)

# Sharing an operation. An ``Op`` whose kind, object and arguments are constant (a plain
# ``with lock:``'s acquire and release, an untimed wait or join, ``notify()``) is built once per
# primitive and announced again at every call: announced, an ``Op`` is only read (by the
# scheduler, the objects, DPOR, the race detector, the fingerprint, a report), except that an
# execution recording source lines writes each operation's ``source``, and a timed one gets its
# ``deadline``: with ``Execution.sources`` on every call builds its own, and a timed operation
# always does. Building and freeing an ``Op`` was ~700 instructions, and most steps of a
# reference's run announce one of these (docs/harness.md, session 24). The primitive builds them
# with itself (none while the execution records sources, which it does from its start), in
# attributes named ``_shared_...`` that the state fingerprint does not read (``rt/object_kinds.py``,
# ``SHARED``: they hold nothing but constants of the primitive).


class _Refused:
    """CPython's field ``name`` of a ``kind`` of primitive, which a controlled one has no
    counterpart of: a read of it raises (``Queue._internal``'s error for a queue's internals,
    ``_private``'s for the others)."""

    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name

    def __get__(self, obj: Any, owner: object = None) -> Any:
        if obj is None:
            return self
        raise obj._internal(self.name) if self.kind == "queue" else _private(self.kind, self.name)

    def __set__(self, obj: Any, value: object) -> None:
        # (as the read-only property it replaced: compiled, the class has no such attribute either)
        raise AttributeError(f"property {self.name!r} of {type(obj).__name__!r} object has no setter")


class Lock:
    """``threading.Lock`` (or ``RLock`` when ``reentrant``) under the scheduler."""

    def __init__(self, ex: Execution, name: str = "", reentrant: bool = False) -> None:
        self._ex = ex
        st = LockState(len(ex.objects), name, reentrant)
        ex.add_object(st)
        self._st = st
        # the blocking acquire and the release, shared by their announcements (see above)
        shared = not ex.sources
        self._shared_acquire = Op("acquire", st, _BLOCKING) if shared else None
        self._shared_release = Op("release", st) if shared else None

    @property
    def name(self) -> str:
        return self._st.name

    def acquire_op(self) -> Op:
        """The plain blocking acquire (shared, unless the execution records sources)."""
        return self._shared_acquire or Op("acquire", self._st, _BLOCKING)

    def release_op(self) -> Op:
        return self._shared_release or Op("release", self._st)

    def acquire(self, blocking: bool = True, timeout: float | int = -1) -> bool:
        if blocking is True and timeout == -1:  # the plain ``with lock:``: no timeout to work out
            return bool(self._ex.perform(self.acquire_op()))
        _check_lock_timeout(blocking, timeout)
        blocking = _blocks(blocking, timeout)
        t = _timeout(blocking, timeout)
        return bool(self._ex.perform(Op("acquire", self._st, (blocking,), timeout=t)))

    def release(self) -> None:
        self._ex.perform(self.release_op())

    def locked(self) -> bool:
        return bool(self._ex.perform(Op("locked", self._st, read=True)))

    def _is_owned(self) -> bool:
        return self._st.owner is not None and self._st.owner == self._ex.running_thread()

    # ``with lock:`` goes straight to the operation (one call less per step than via acquire)
    def __enter__(self) -> bool:
        return bool(self._ex.perform(self.acquire_op()))

    def __exit__(self, *exc: object) -> None:
        self._ex.perform(self.release_op())

    def critical_section(self, append: Callable[[Any], object] | None = None) -> Section:
        """``reference.worker_pool.critical_section`` of this lock (it asks a lock that has this
        method): the same enter, exit and append as its Python ``_Section``, run here natively."""
        return Section(self, append)

    def __repr__(self) -> str:
        return reprs.lock(self, self._st)


class Section:
    """A controlled lock's critical section (``Lock.critical_section``): ``with section`` is
    ``with lock`` and ``section + item`` calls ``append(item)``, as the reference's generic
    ``_Section`` does; compiled, neither runs a Python frame (a reference's mutexes are entered
    and left dozens of times an execution). The operations, their objects and so the steps are
    the lock's own."""

    def __init__(self, lock: Lock, append: Callable[[Any], object] | None) -> None:
        self._lock = lock
        self._append = append

    def __enter__(self) -> bool:
        lock = self._lock
        return bool(lock._ex.perform(lock.acquire_op()))

    def __exit__(self, *exc: object) -> None:
        lock = self._lock
        lock._ex.perform(lock.release_op())

    def __add__(self, item: Any) -> object:
        append = self._append
        if append is None:
            raise TypeError("this critical section was made without an append")
        return append(item)

    def __repr__(self) -> str:
        return f"<critical section of {self._lock!r}>"


class Condition:
    """``threading.Condition``: wait releases the lock, parks until notified, then reacquires."""

    def __init__(self, ex: Execution, lock: Any = None, name: str = "") -> None:
        self._ex = ex
        if lock is None:
            lock = Lock(ex, f"{name}.lock" if name else "", reentrant=True)
        if not isinstance(lock, Lock):
            raise TypeError("a controlled Condition needs a lock from the same controlled runtime")
        self._lock = lock
        st = ConditionState(len(ex.objects), name, lock._st)
        ex.add_object(st)
        self._st = st
        # the untimed wait, ``notify()`` and ``notify_all()``, shared (see above)
        shared = not ex.sources
        self._shared_wait = Op("wait", st) if shared else None
        self._shared_notify = Op("notify", st, _NOTIFY_ONE) if shared else None
        self._shared_notify_all = Op("notify_all", st) if shared else None

    def acquire(self, blocking: bool = True, timeout: float | int = -1) -> bool:
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()

    def __enter__(self) -> bool:
        return self._lock.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._lock.__exit__()

    def wait(self, timeout: float | None = None) -> bool:
        if timeout is not None:
            if not timeout > 0:  # 0, negative, NaN: CPython's waiter lock is only tried
                timeout = 0.0
            elif self._lock._is_owned():  # (not held: the operation's RuntimeError comes first)
                refused = _wait_refusal(timeout)
                if refused is not None:  # ``inf``, ``1e10``: CPython's waiter lock refuses it
                    raise refused
            return bool(self._ex.perform(Op("wait", self._st, timeout=timeout)))
        return bool(self._ex.perform(self._shared_wait or Op("wait", self._st)))

    def wait_for(self, predicate: Callable[[], T], timeout: float | None = None) -> T:
        ex = self._ex
        deadline = None
        if timeout is not None:
            # CPython's reads the clock (``_time()``): whether it waits again depends on it
            deadline = read_clock(ex) + timeout
        result = predicate()
        while not result:
            wait = None
            if deadline is not None:
                wait = deadline - read_clock(ex)
                if wait <= 0:
                    break
            self.wait(wait)
            result = predicate()
        return result

    def notify(self, n: int = 1) -> None:
        if n != 1:
            self._ex.perform(Op("notify", self._st, (n,)))
            return
        self._ex.perform(self._shared_notify or Op("notify", self._st, _NOTIFY_ONE))

    def notify_all(self) -> None:
        self._ex.perform(self._shared_notify_all or Op("notify_all", self._st))

    def notifyAll(self) -> None:
        self.notify_all()

    def _look(self) -> None:
        """A read of what the condition's lock guards, made without it (``Barrier.n_waiting``):
        one step, ordered with the lock's acquires and releases and the condition's waits."""
        self._ex.perform(Op("look", self._st, read=True))

    def _is_owned(self) -> bool:
        """CPython's ``Condition._is_owned()``: held by the calling thread (which no other thread
        can change: no step)."""
        return self._lock._is_owned()

    def __repr__(self) -> str:
        return reprs.condition(repr(self._lock), self._st)

    @property
    def _waiters(self) -> tuple[None, ...]:
        """CPython's deque of the waiters' locks, as a program reads it (``len(cond._waiters)``):
        a snapshot with one entry per waiting thread, read as one step."""
        count: int = self._ex.perform(Op("waiters", self._st, read=True))  # type: ignore[assignment]
        return (None,) * count


class Event:
    def __init__(self, ex: Execution, name: str = "") -> None:
        self._ex = ex
        st = EventState(len(ex.objects), name)
        ex.add_object(st)
        self._st = st

    def set(self) -> None:
        self._ex.perform(Op("set", self._st))

    def clear(self) -> None:
        self._ex.perform(Op("clear", self._st))

    def is_set(self) -> bool:
        return bool(self._ex.perform(Op("is_set", self._st, read=True)))

    def isSet(self) -> bool:
        return self.is_set()

    def __repr__(self) -> str:
        return reprs.event(self, self._st)

    @property
    def _flag(self) -> bool:
        """CPython's field, as a program reads it: ``is_set()``."""
        return self.is_set()

    @_flag.setter
    def _flag(self, value: bool) -> None:
        raise _private("event", "_flag")

    _cond: ClassVar[_Refused] = _Refused("event", "_cond")

    def wait(self, timeout: float | None = None) -> bool:
        if timeout is not None:
            if not timeout > 0:
                # a poll (0, negative, NaN): CPython returns the flag at once, so it is a read, not
                # a timed wait that uses up the execution's timeouts (a poll loop was "bounded by
                # timeout_limit")
                return self.is_set()
            refused = _wait_refusal(timeout)
            if refused is not None:
                # ``inf``, ``1e10``: CPython's condition refuses it only if the event is not set
                if self.is_set():
                    return True
                raise refused
        return bool(self._ex.perform(Op("wait", self._st, timeout=timeout)))


class Semaphore:
    def __init__(self, ex: Execution, value: int = 1, name: str = "", bounded: bool = False) -> None:
        if value < 0:
            raise ValueError("semaphore initial value must be >= 0")
        self._ex = ex
        self._st = ex.new_object(lambda oid: SemaphoreState(oid, name, value, value if bounded else None))

    def __repr__(self) -> str:
        return reprs.semaphore(self, self._st)

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        if not blocking and timeout is not None:
            raise ValueError("can't specify timeout for non-blocking acquire")
        if timeout is not None and math.isnan(timeout):
            timeout = None  # CPython's loop polls for ever: a wait with no timeout
        # a timeout of 0 or less is a try, as in CPython (its first wait times out at once)
        blocking = bool(blocking) and (timeout is None or timeout > 0)
        if blocking and timeout is not None:
            refused = _wait_refusal(timeout)
            if refused is not None:  # ``inf``, ``1e10``: refused by CPython only if it would wait
                if self._ex.perform(Op("acquire", self._st, (False,))):
                    return True
                raise refused
        t = _timeout(blocking, timeout)
        return bool(self._ex.perform(Op("acquire", self._st, (blocking,), timeout=t)))

    def release(self, n: int = 1) -> None:
        self._ex.perform(Op("release", self._st, (n,)))

    @property
    def _value(self) -> int:
        """CPython's count, as a program reads it (a look, not a synchronisation), as one step."""
        value: int = self._ex.perform(Op("value", self._st, read=True))  # type: ignore[assignment]
        return value

    @_value.setter
    def _value(self, value: int) -> None:
        raise _private("semaphore", "_value")

    _cond: ClassVar[_Refused] = _Refused("semaphore", "_cond")

    @property
    def _initial_value(self) -> int:
        """``BoundedSemaphore``'s bound, which never changes (no step); a plain ``Semaphore`` has
        none, as in CPython."""
        bound: int | None = cast(SemaphoreState, self._st).bound
        if bound is None:
            raise AttributeError("'Semaphore' object has no attribute '_initial_value'")
        return bound

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _private(kind: str, name: str) -> UsageError:
    """A write of CPython's field ``name``, or its ``_cond``, on a compiled controlled ``kind``:
    its operations are single steps with no condition to hand out. Patch mode makes the
    semaphores and events of a module that names ``_cond`` or writes ``_value``/``_flag`` of CPython's
    own code on a controlled condition (``patch_types.names_private_fields``)."""
    return UsageError(
        f"{name} of a controlled {kind}: its operations are single steps of the harness's model, "
        f"which has no {name} to hand out or write. In patch mode a {kind} runs CPython's own code "
        "on a controlled condition (its _cond, _value, _flag all real) when the module whose code "
        "makes it names _cond or writes _value or _flag (not self's): this access came from "
        "elsewhere (getattr, another module), or the object is the harness's own rt primitive"
    )


class Queue:
    """``queue.Queue`` (FIFO; LIFO when ``lifo``); ``maxsize <= 0`` means unbounded."""

    def __init__(
        self, ex: Execution, maxsize: int = 0, name: str = "", lifo: bool = False, simple: bool = False
    ) -> None:
        self._ex = ex
        self.simple = simple  # made as ``queue.SimpleQueue`` (patch mode), which has no maxsize
        self._st = cast(QueueState, ex.new_object(lambda oid: QueueState(oid, name, maxsize, lifo)))

    def __repr__(self) -> str:
        return reprs.queue(self, self._st, self.simple)

    @property
    def maxsize(self) -> Any:
        """Kept by the queue's state and read by each ``put`` when it runs, as CPython's ``put``
        reads ``self.maxsize`` at each call (review 9's s40: ``q.maxsize = 2`` after construction
        left the compiled queue full at its first size). A read of it is an operation."""
        return self._ex.perform(Op("maxsize", self._st, read=True))

    @maxsize.setter
    def maxsize(self, value: Any) -> None:
        self._ex.perform(Op("set_maxsize", self._st, (value,)))

    def put(self, item: object, block: bool = True, timeout: float | None = None) -> None:
        # (the state's size now, no step of its own: the ``put`` operation that follows reads it
        # again when it runs; an unbounded queue's ``put`` never looks at the timeout)
        if block and self._st.maxsize > 0:
            _check_queue_timeout(timeout)
            timeout = self._nan_unbounded(timeout)
            refused = None if timeout is None else _wait_refusal(timeout)
            if refused is not None:  # ``inf``, ``1e10``: refused by CPython only if it is full
                try:
                    self._ex.perform(Op("put", self._st, (item, False)))
                except Full:
                    raise refused from None
                return
        block = _blocks(block, timeout)
        self._ex.perform(Op("put", self._st, (item, block), timeout=_timeout(block, timeout)))

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        if block and timeout is not None:
            if self.simple:
                timeout_ns(timeout)  # the C ``SimpleQueue`` converts it first, item or not
            _check_queue_timeout(timeout)
            timeout = self._nan_unbounded(timeout)
            refused = None if timeout is None else _wait_refusal(timeout)
            if refused is not None:  # ``inf``, ``1e10``: refused by CPython only if it is empty
                try:
                    return self._ex.perform(Op("get", self._st, (False,)))
                except Empty:
                    raise refused from None
        block = _blocks(block, timeout)
        return self._ex.perform(Op("get", self._st, (block,), timeout=_timeout(block, timeout)))

    def _nan_unbounded(self, timeout: float | None) -> float | None:
        """CPython's queue polls for ever with a NaN timeout (its deadline is never reached): a
        wait with none."""
        return None if timeout is not None and math.isnan(timeout) else timeout

    def put_nowait(self, item: object) -> None:
        self.put(item, block=False)

    def get_nowait(self) -> Any:
        return self.get(block=False)

    def qsize(self) -> int:
        size = self._ex.perform(Op("qsize", self._st, read=True))
        assert isinstance(size, int)
        return size

    def empty(self) -> bool:
        return bool(self._ex.perform(Op("empty", self._st, read=True)))

    def full(self) -> bool:
        return bool(self._ex.perform(Op("full", self._st, read=True)))

    def task_done(self) -> None:
        """One item taken earlier is processed (``ValueError`` if more than were put)."""
        self._ex.perform(Op("task_done", self._st))

    def join(self) -> None:
        """Block until every item put has been marked done (``task_done``)."""
        self._ex.perform(Op("join", self._st))

    @property
    def unfinished_tasks(self) -> int:
        count = self._ex.perform(Op("unfinished", self._st, read=True))
        assert isinstance(count, int)
        return count

    @unfinished_tasks.setter
    def unfinished_tasks(self, value: int) -> None:
        raise self._internal("unfinished_tasks")

    # ``queue.Queue``'s internals. This queue's operations are single steps of its model, with no
    # mutex or conditions a program could hold or wait on, so each is refused by name rather than
    # faked (patch mode runs CPython's own queue code, on controlled locks, for a program whose
    # modules name them: ``patch_types.py``).
    mutex: ClassVar[_Refused] = _Refused("queue", "mutex")
    not_empty: ClassVar[_Refused] = _Refused("queue", "not_empty")
    not_full: ClassVar[_Refused] = _Refused("queue", "not_full")
    all_tasks_done: ClassVar[_Refused] = _Refused("queue", "all_tasks_done")
    queue: ClassVar[_Refused] = _Refused("queue", "queue")

    def _internal(self, name: str) -> Exception:
        if self.simple:
            return AttributeError(f"'SimpleQueue' object has no attribute {name!r}")
        return UsageError(
            f"q.{name} of a controlled queue: its operations are single steps of the harness's "
            f"model, which has no {name} to hand out. In patch mode a queue runs CPython's own "
            "queue code on controlled locks and conditions (q.mutex, q.not_empty, q.not_full, "
            "q.all_tasks_done, q.queue, q.unfinished_tasks all real) when a patched module of the "
            f"program names {name}: this access came from elsewhere (getattr, or a module not "
            "patched: pass it to patched() too), or the queue is rt.queue() (use a lock beside it)"
        )


Full = _queue.Full
Empty = _queue.Empty
