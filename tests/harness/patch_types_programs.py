"""Programs on the patched names as classes (tests/harness/test_patch_types.py): subclasses of
``threading.Event``/``Condition``/``Semaphore`` and of the queues, defined inside the explored
function or at import, ``isinstance``, ``_thread``'s locks, ``threading.excepthook`` and the
primitives' misuse errors. This module names no queue internals (``queue_internals_programs.py``
does), so its plain queues are the compiled ones."""

from __future__ import annotations

import _thread
import queue
import threading
from collections.abc import Callable

from tests.harness.expected import Fails, Races
from tests.harness.program_threads import start_and_join


class Box:
    def __init__(self) -> None:
        self.v = 0


# ------------------------------------------------------------------- subclasses and isinstance


def isinstance_holds() -> None:
    """What CPython answers, for the objects the patched names make in a controlled thread."""
    q: queue.Queue[int] = queue.Queue()
    lifo: queue.LifoQueue[int] = queue.LifoQueue()
    simple: queue.SimpleQueue[int] = queue.SimpleQueue()
    prio: queue.PriorityQueue[int] = queue.PriorityQueue()
    assert isinstance(q, queue.Queue) and not isinstance(q, queue.LifoQueue)
    assert isinstance(lifo, queue.Queue) and isinstance(lifo, queue.LifoQueue)
    assert isinstance(prio, queue.Queue) and isinstance(prio, queue.PriorityQueue)
    assert isinstance(simple, queue.SimpleQueue) and not isinstance(simple, queue.Queue)
    assert issubclass(queue.LifoQueue, queue.Queue) and issubclass(queue.PriorityQueue, queue.Queue)
    bounded, sem = threading.BoundedSemaphore(2), threading.Semaphore(2)
    assert isinstance(bounded, threading.BoundedSemaphore) and isinstance(bounded, threading.Semaphore)
    assert isinstance(sem, threading.Semaphore) and not isinstance(sem, threading.BoundedSemaphore)
    assert issubclass(threading.BoundedSemaphore, threading.Semaphore)
    assert isinstance(threading.Event(), threading.Event)
    assert isinstance(threading.Condition(), threading.Condition)
    assert not isinstance(threading.Event(), threading.Condition)
    assert isinstance(threading.Lock(), _thread.LockType)
    assert not isinstance(threading.RLock(), _thread.LockType)
    assert isinstance(_thread.RLock(), _thread.RLock)
    assert q.maxsize == 0 and queue.Queue(3).maxsize == 3


def subclasses_inside() -> None:
    """Correct: subclasses defined in the explored function, each calling ``super()``."""

    class Flag(threading.Event):
        def __init__(self) -> None:
            super().__init__()
            self.sets = 0

        def set(self) -> None:
            self.sets += 1
            super().set()

    class Jobs(queue.Queue[int]):
        def put(self, item: int, block: bool = True, timeout: float | None = None) -> None:
            super().put(item * 10, block, timeout)

    class Stack(queue.LifoQueue[int]):
        pass

    class Inbox(queue.SimpleQueue[int]):
        def get(self, block: bool = True, timeout: float | None = None) -> int:
            return super().get(block, timeout) + 1

    flag, jobs, stack, inbox = Flag(), Jobs(maxsize=1), Stack(), Inbox()
    assert isinstance(flag, threading.Event) and isinstance(jobs, queue.Queue)
    assert isinstance(stack, queue.LifoQueue) and isinstance(inbox, queue.SimpleQueue)

    def producer() -> None:
        jobs.put(1)
        jobs.put(2)  # blocks until the first is taken (maxsize=1)
        inbox.put(5)
        flag.set()

    def consumer() -> None:
        assert jobs.get() == 10
        assert jobs.get() == 20

    start_and_join(producer, consumer)
    assert flag.wait(0) and flag.sets == 1
    assert inbox.get() == 6
    stack.put(1)
    stack.put(2)
    assert [stack.get(), stack.get()] == [2, 1]


def semaphore_subclass_as_mutex(permits: int) -> Callable[[], None]:
    """A ``Semaphore`` subclass guards a counter: correct with one permit, a race with two."""

    def program() -> None:
        class Gate(threading.Semaphore):
            pass

        box, gate = Box(), Gate(permits)

        def work() -> None:
            with gate:
                box.v += 1

        start_and_join(work, work)
        with gate:
            assert box.v == 2

    program.__name__ = f"semaphore_subclass_as_mutex_{permits}"
    return program


def condition_subclass_hand_off() -> None:
    """Correct: a hand-off on a ``Condition`` subclass (CPython's code: its waiters are locks from
    ``_thread.allocate_lock``), with a timed ``wait_for`` too."""

    class Signal(threading.Condition):
        pass

    box, signal = Box(), Signal()

    def give() -> None:
        with signal:
            box.v = 1
            signal.notify_all()

    def take() -> None:
        with signal:
            signal.wait_for(lambda: box.v == 1)

    start_and_join(give, take)
    with signal:
        assert signal.wait_for(lambda: box.v == 1, timeout=0.5)


class ImportedFlag(threading.Event):
    """Defined at import, before patching: CPython's Event, on the patched names' primitives."""

    def set(self) -> None:
        super().set()


class ImportedJobs(queue.Queue):  # type: ignore[type-arg]
    pass


def imported_subclasses() -> None:
    """Correct: subclasses defined before patching, made inside."""
    flag, jobs = ImportedFlag(), ImportedJobs()

    def work() -> None:
        jobs.put(1)
        flag.set()

    start_and_join(work)
    assert flag.is_set() and jobs.get_nowait() == 1
    assert isinstance(jobs, queue.Queue) and isinstance(flag, threading.Event)


class ImportedInbox(queue.SimpleQueue):  # type: ignore[type-arg]
    """A subclass of the C SimpleQueue, made before patching: no controlled queue can be it."""


def imported_simple_queue_subclass() -> None:
    ImportedInbox().put(1)


# ------------------------------------------------------------------- _thread's locks


def low_level_lock_guards() -> None:
    """Correct: ``_thread.allocate_lock()`` (and ``allocate``) as a mutex."""
    box, lock, other, old = Box(), _thread.allocate_lock(), Box(), _thread.allocate()
    assert isinstance(lock, _thread.LockType) and isinstance(old, _thread.LockType)

    def work() -> None:
        with lock:
            box.v += 1
        with old:
            other.v += 1

    start_and_join(work, work)
    with lock, old:
        assert box.v == other.v == 2


def low_level_rlock_guards() -> None:
    box, lock = Box(), _thread.RLock()

    def work() -> None:
        with lock, lock:
            box.v += 1

    start_and_join(work, work)
    with lock:
        assert box.v == 2


def low_level_lock_race() -> None:
    """BUG: the second thread's write is outside the lock."""
    box, lock = Box(), _thread.allocate_lock()

    def locked() -> None:
        with lock:
            box.v += 1

    def unlocked() -> None:
        box.v = box.v + 1

    start_and_join(locked, unlocked)


# ------------------------------------------------------------------- threading.excepthook

CAUGHT: list[str] = []


def collect(args: threading.ExceptHookArgs) -> None:
    assert args.thread is not None and args.exc_type is ValueError, args
    CAUGHT.append(str(args.exc_value))


def hook_set_inside() -> None:
    """Correct: the program collects its threads' errors with a hook of its own and checks them."""
    caught: list[str] = []
    mutex = threading.Lock()

    def hook(args: threading.ExceptHookArgs) -> None:
        with mutex:
            caught.append(f"{args.thread.name if args.thread else '?'}: {args.exc_value}")

    threading.excepthook = hook

    def fail() -> None:
        raise ValueError("boom")

    t = threading.Thread(target=fail, name="w")
    t.start()
    t.join()
    with mutex:
        assert caught == ["w: boom"], caught


def hook_set_before() -> None:
    """The hook ``collect``, set before the explored function: it sees the thread's error."""
    CAUGHT.clear()

    def fail() -> None:
        raise ValueError("late")

    start_and_join(fail)
    assert CAUGHT == ["late"], CAUGHT


def thread_raises() -> None:
    """BUG: a thread raises, and no hook of the program's own takes it."""

    def fail() -> None:
        raise ValueError("unhandled")

    start_and_join(fail)


def hook_that_fails() -> None:
    """BUG: the program's hook itself refuses the exception."""

    def hook(args: threading.ExceptHookArgs) -> None:
        raise AssertionError(f"a worker failed: {args.exc_value}")

    threading.excepthook = hook

    def fail() -> None:
        raise KeyError("k")

    start_and_join(fail)


# ------------------------------------------------------------------- CPython's misuse errors


def misuse_words() -> None:
    """Each misuse raises CPython's exception with CPython's words."""
    said: list[str] = []

    def expect(action: Callable[[], object], kind: type[Exception]) -> None:
        try:
            action()
        except kind as error:
            said.append(str(error))

    rlock = threading.RLock()
    expect(threading.Lock().release, RuntimeError)
    expect(_thread.allocate_lock().release, RuntimeError)
    expect(rlock.release, RuntimeError)
    expect(threading.BoundedSemaphore(1).release, ValueError)
    expect(threading.Condition().wait, RuntimeError)
    expect(threading.Condition().notify, RuntimeError)
    rlock.acquire()
    start_and_join(lambda: expect(rlock.release, RuntimeError))
    rlock.release()
    assert said == [
        "release unlocked lock",
        "release unlocked lock",
        "cannot release un-acquired lock",
        "Semaphore released too many times",
        "cannot wait on un-acquired lock",
        "cannot notify on un-acquired lock",
        "cannot release un-acquired lock",
    ], said


def queue_mutex_by_getattr() -> None:
    """A queue's internal read by ``getattr``: not seen by the scan, so refused by name."""
    q: queue.Queue[int] = queue.Queue()
    getattr(q, "mu" + "tex")


# What each program gives (tests/harness/test_patched_catalogue.py).
FOUND = [
    Races(semaphore_subclass_as_mutex(2), "Box.v", ("box.v += 1",)),
    Races(low_level_lock_race, "Box.v", ("box.v = box.v + 1",)),
    Fails(hook_that_fails, "assertion", "a worker failed: 'k'"),
]
PROVED = [
    isinstance_holds,
    subclasses_inside,
    semaphore_subclass_as_mutex(1),
    condition_subclass_hand_off,
    imported_subclasses,
    low_level_lock_guards,
    low_level_rlock_guards,
    hook_set_inside,
    misuse_words,
]
