"""The runtime seam: every primitive that blocks, synchronises or starts a thread.

Reference code never touches ``threading`` directly. It asks a ``Runtime`` for
its locks, conditions and threads, so a checker can hand it a runtime whose
primitives are scheduling points under a controlled scheduler (see
``model_checks.harness``) while production code gets plain ``threading``
(``ThreadingRuntime``, the default) at no extra cost.

The interface is deliberately the subset of ``threading`` that the reference
designs need, with the same method names and semantics, plus atomics, which
``threading`` lacks but lock-free designs (the Schedule Gate's one-word CAS,
Chase-Lev deques) cannot do without, and a shared FIFO (``deque``): with real
threads a plain ``collections.deque``, whose ``append``, ``popleft`` and
``len`` are each one atomic step under the GIL, so a queue needs no lock of its
own; under a checker each of them is a scheduling point.

Every factory takes an optional ``name``: it costs nothing with real threads
and makes a checker's report say "lane[0].mutex" instead of "<Lock 0x7f...>".
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

T = TypeVar("T")


@runtime_checkable
class LockLike(Protocol):
    """A mutual-exclusion lock with ``threading.Lock``'s interface."""

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool: ...

    def release(self) -> None: ...

    def __enter__(self) -> bool: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None, /
    ) -> None: ...


@runtime_checkable
class ConditionLike(LockLike, Protocol):
    """A condition variable with ``threading.Condition``'s interface (its lock's, and the waits).

    ``wait`` may return spuriously under a checking runtime (as it may in other
    languages' condition variables), so callers must wait in a ``while`` loop.
    """

    def wait(self, timeout: float | None = None) -> bool: ...

    def wait_for(self, predicate: Callable[[], Any], timeout: float | None = None) -> Any: ...

    def notify(self, n: int = 1) -> None: ...

    def notify_all(self) -> None: ...


@runtime_checkable
class EventLike(Protocol):
    """A one-way flag with ``threading.Event``'s interface."""

    def set(self) -> None: ...

    def clear(self) -> None: ...

    def is_set(self) -> bool: ...

    def wait(self, timeout: float | None = None) -> bool: ...


@runtime_checkable
class SemaphoreLike(Protocol):
    """A counting semaphore with ``threading.Semaphore``'s interface."""

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool: ...

    def release(self, n: int = 1) -> None: ...

    def __enter__(self) -> bool: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None, /
    ) -> None: ...


@runtime_checkable
class ThreadHandle(Protocol):
    """A started thread: something to join and to name in reports."""

    @property
    def name(self) -> str: ...

    def join(self, timeout: float | None = None) -> None: ...

    def is_alive(self) -> bool: ...


class FifoLike(Protocol[T]):
    """A FIFO shared by threads: each operation is atomic (``collections.deque``'s interface)."""

    def append(self, item: T, /) -> None: ...

    def popleft(self) -> T:
        """Remove and return the oldest item; ``IndexError`` when there is none."""
        ...

    def __len__(self) -> int: ...


class AtomicInt(Protocol):
    """A sequentially consistent integer cell (C++ ``std::atomic<int>``)."""

    def load(self) -> int: ...

    def store(self, value: int) -> None: ...

    def compare_and_swap(self, expected: int, new: int) -> bool:
        """Set to ``new`` iff the value is ``expected``; say whether it did."""
        ...

    def fetch_add(self, delta: int) -> int:
        """Add ``delta``; return the value before the addition."""
        ...


class AtomicRef(Protocol[T]):
    """A sequentially consistent reference cell; CAS compares by identity."""

    def load(self) -> T: ...

    def store(self, value: T) -> None: ...

    def compare_and_swap(self, expected: T, new: T) -> bool: ...


class Runtime(Protocol):
    """Factory of the primitives reference code may use. Nothing else may block."""

    def lock(self, name: str = "") -> LockLike: ...

    def rlock(self, name: str = "") -> LockLike: ...

    def condition(self, lock: LockLike | None = None, name: str = "") -> ConditionLike: ...

    def event(self, name: str = "") -> EventLike: ...

    def semaphore(self, value: int = 1, name: str = "") -> SemaphoreLike: ...

    def atomic_int(self, value: int = 0, name: str = "") -> AtomicInt: ...

    def atomic_ref(self, value: Any = None, name: str = "") -> AtomicRef[Any]: ...

    def deque(self, name: str = "") -> FifoLike[Any]:
        """An empty shared FIFO. Each operation is atomic; a sequence of them is not."""
        ...

    def start_thread(self, target: Callable[[], None], name: str) -> ThreadHandle:
        """Start ``target`` on a new thread called ``name`` and return its handle."""
        ...

    def current_thread(self) -> Hashable:
        """An identity of the calling thread, stable for its lifetime."""
        ...

    def thread_name(self) -> str:
        """The calling thread's name, as trace events record it (``"p0"``, ``"w1"``)."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back: real time, or a checker's virtual time."""
        ...

    def yield_point(self, label: str = "") -> None:
        """A place where another thread may run; free with real threads."""
        ...


class _LockedCell(Generic[T]):
    # CPython offers no atomic read-modify-write, so each cell carries its own
    # lock; loads and stores of a reference are already atomic under the GIL.
    __slots__ = ("_lock", "_value")

    def __init__(self, value: T) -> None:
        self._value = value
        self._lock = threading.Lock()

    def load(self) -> T:
        return self._value

    def store(self, value: T) -> None:
        self._value = value


class _ThreadingAtomicInt(_LockedCell[int]):
    __slots__ = ()

    def compare_and_swap(self, expected: int, new: int) -> bool:
        with self._lock:
            if self._value != expected:  # by value: equal ints need not be one object
                return False
            self._value = new
        return True

    def fetch_add(self, delta: int) -> int:
        with self._lock:
            old = self._value
            self._value = old + delta
            return old


class _ThreadingAtomicRef(_LockedCell[T]):
    __slots__ = ()

    def compare_and_swap(self, expected: T, new: T) -> bool:
        with self._lock:
            if self._value is not expected:
                return False
            self._value = new
        return True


# The lock types ``ThreadingRuntime`` hands out, for code that treats the interpreter's own locks
# specially (``worker_pool.critical_section``) without importing ``threading`` itself.
INTERPRETER_LOCKS: tuple[type, ...] = (type(threading.Lock()), type(threading.RLock()))


class TokenLock:
    """A mutex that is one token in a ``queue.SimpleQueue``: ``threading.Lock``'s interface and meaning.

    Made by ``token_lock``, one class per lock: its ``__enter__`` and ``__exit__`` are the queue's
    own bound ``get`` and ``put`` (``put(exc_type, exc, tb)`` puts a token back, whatever it is),
    so a ``with`` block runs no Python frame. Entering and leaving one costs about three quarters
    of a ``threading.Lock``'s, even through ``worker_pool.critical_section`` (callgrind, CPython
    3.11: ~1,040 against ~1,420 instructions a block). Like a ``with`` on a lock, entering checks
    no GIL drop request: the thread is not switched out right after taking the token (see
    ``work_lane``'s docstring). Not reentrant; a thread waiting for the token releases the GIL.
    """

    __slots__ = ()
    tokens: queue.SimpleQueue[object]

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        try:
            self.tokens.get(blocking, None if timeout < 0 else timeout)
        except queue.Empty:
            return False
        return True

    def release(self) -> None:
        if not self.tokens.empty():
            raise RuntimeError("release unlocked lock")
        self.tokens.put(True)

    def locked(self) -> bool:
        return self.tokens.empty()

    def __enter__(self) -> bool:  # replaced per lock by the queue's ``get``
        return self.acquire()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None, /
    ) -> None:  # replaced per lock by the queue's ``put``
        self.release()


def token_lock() -> TokenLock:
    """A new, free ``TokenLock`` (about 1.7 kB and 15 us: a class of its own, reclaimed by the cyclic
    collector once the lock is gone)."""
    tokens: queue.SimpleQueue[object] = queue.SimpleQueue()
    tokens.put(True)
    methods = {"__slots__": (), "tokens": tokens, "__enter__": tokens.get, "__exit__": tokens.put}
    lock: TokenLock = type("TokenLock", (TokenLock,), methods)()
    return lock


def cheap_lock(runtime: Runtime, name: str = "") -> LockLike:
    """``runtime.lock(name)``, or under the threading runtime a ``TokenLock`` in its place.

    For a lock held only briefly and only through ``with``, ``acquire`` and ``release`` (no
    condition is made of it). A checker's runtime keeps its own lock, so a checker explores the
    same protocol: a mutex, taken and given back at the same places.
    """
    lock = runtime.lock(name=name)
    if type(lock) is INTERPRETER_LOCKS[0]:
        return token_lock()
    return lock


class ThreadingRuntime:
    """The production runtime: plain ``threading``, names ignored."""

    def lock(self, name: str = "") -> LockLike:
        return threading.Lock()

    def rlock(self, name: str = "") -> LockLike:
        return threading.RLock()

    def condition(self, lock: LockLike | None = None, name: str = "") -> ConditionLike:
        return threading.Condition(lock)  # type: ignore[arg-type]

    def event(self, name: str = "") -> EventLike:
        return threading.Event()

    def semaphore(self, value: int = 1, name: str = "") -> SemaphoreLike:
        return threading.Semaphore(value)

    def atomic_int(self, value: int = 0, name: str = "") -> AtomicInt:
        return _ThreadingAtomicInt(value)

    def atomic_ref(self, value: Any = None, name: str = "") -> AtomicRef[Any]:
        return _ThreadingAtomicRef(value)

    def deque(self, name: str = "") -> FifoLike[Any]:
        # No wrapper: append, popleft and len are single C calls, atomic under the GIL
        # (and guarded per object on free-threaded builds), so the hot path pays nothing.
        return deque()

    def start_thread(self, target: Callable[[], None], name: str) -> ThreadHandle:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        return thread

    # The thread's ident, asked directly (no Python frame in between: schedulers ask on every
    # spawn and join).
    current_thread: Callable[[], Hashable] = staticmethod(threading.get_ident)

    def thread_name(self) -> str:
        return threading.current_thread().name

    def monotonic(self) -> float:
        return time.monotonic()

    def yield_point(self, label: str = "") -> None:
        return None


DEFAULT_RUNTIME: Runtime = ThreadingRuntime()
