"""Patch mode's controlled threads (``patch.py``): the execution whose controlled thread runs here,
``threading.Thread`` and ``Timer`` as controlled threads, the main thread and the thread list as
one execution sees them, ``concurrent.futures.Future`` hashed by the order it was made, a pool's
task that is a container's method seen by the race detector, and the
interpreter's exit (its pools' workers ended and joined) and patching's (the controlled threads
the standard library still refers to, forgotten)."""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.thread
import functools
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType, GeneratorType
from typing import Any, cast

from model_checks.harness import own_code, patch_local
from model_checks.harness.race_calls import handed
from model_checks.harness.rt import recursion, stacks
from model_checks.harness.rt.scheduler import UsageError
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.sync.handles import ThreadHandle
from model_checks.harness.thread_idents import IDENT_BASE as IDENT_BASE
from model_checks.harness.thread_idents import MAIN_THREAD, _MainThread, native_id, thread_ident

_CURRENT: list[ControlledRuntime | None] = [None]


def set_current(rt: ControlledRuntime | None) -> None:
    if rt is None and HOOK_OF_CHECK:
        # the ``threading.excepthook`` a program sets (``_bootstrap``) ends with its execution
        threading.excepthook = HOOK_OF_CHECK[0]
    if rt is None:
        for restore in AT_EXECUTION_END:
            restore()
    _CURRENT[0] = rt
    for hook in ON_EXECUTION:
        hook(rt)
    _MADE[0] = 0  # each execution numbers its threads from 1, as a fresh interpreter would
    _FUTURES[0] = 0
    # the thread objects of earlier executions (keyed by their runtime's id, which a later
    # runtime may reuse) must not answer ``current_thread`` in this one
    _THREAD_OBJECTS.clear()
    _LOW_LEVEL.clear()


_MADE = [0]  # ``Thread`` objects made in the running execution
HOOK_OF_CHECK: list[Any] = []  # ``threading.excepthook`` when the running check began (``patch.new_check``)
# what puts the process's state back as the running check's first execution found it, when each
# execution ends (``patch.start_execution``, ``patch_state.Snapshot.leave``)
AT_EXECUTION_END: list[Callable[[], None]] = []
# called with each execution's runtime as it begins and with None as it ends, in every check: the
# modules that keep per-thread state of their own (``patch_os_thread``), ``patch_exit_calls``
ON_EXECUTION: list[Callable[[ControlledRuntime | None], None]] = []


def current_runtime() -> ControlledRuntime | None:
    """The runtime of the execution whose controlled thread is running here, if any."""
    return _controlled()


def _controlled() -> ControlledRuntime | None:
    rt = _CURRENT[0]
    if rt is None or rt._ex.running_thread() is None:
        return None
    return rt


def _running() -> tuple[object, int] | None:
    rt = _CURRENT[0]
    if rt is None:
        return None
    tid = rt._ex.running_thread()
    return None if tid is None else (rt._ex, tid)


patch_local.running[0] = _running


_real_thread = threading.Thread


class Thread:
    """``threading.Thread`` as a controlled thread (subclassing and ``run()`` overrides work)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if _controlled() is None:
            if cls is Thread:
                return _real_thread(*args, **kwargs)
            raise UsageError("a patched Thread subclass can only be created inside a controlled thread")
        return super().__new__(cls)

    def __init__(
        self,
        group: None = None,
        target: Callable[..., object] | None = None,
        name: str | None = None,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        *,
        daemon: bool | None = None,
    ) -> None:
        rt = _controlled()
        assert rt is not None
        self._rt = rt
        self._target = handed(rt._ex, target)  # ``target=xs.append``: an access when it runs
        self._args = args
        self._kwargs = kwargs or {}
        # hashed by the order it was made in the execution, not by address: a program that keeps
        # threads in a set (``ThreadPoolExecutor`` joins ``self._threads`` in set order) then
        # meets them in the same order whenever a schedule is replayed
        _MADE[0] += 1
        self._made = _MADE[0]
        # as ``threading`` names them: ``Thread-N (target)``
        called = getattr(target, "__name__", None)
        own_name = f"Thread-{self._made}" + (f" ({called})" if called is not None else "")
        self._name = name or own_name
        # as ``threading``: a new thread is a daemon if the thread creating it is one
        creator = rt._ex.running_thread()
        inherited = creator is not None and rt._ex.threads[creator].daemon
        self._handle: ThreadHandle | None = None
        self._daemonic = bool(daemon) if daemon is not None else inherited

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    @property
    def daemon(self) -> bool:
        return self._daemonic

    @daemon.setter
    def daemon(self, daemonic: bool) -> None:
        # CPython's refusal: the flag was given to the thread when it started (session 40: a
        # program catching this RuntimeError failed with "no error")
        if self._handle is not None:
            raise RuntimeError("cannot set daemon status of active thread")
        self._daemonic = daemonic

    def __hash__(self) -> int:
        return self._made

    def getName(self) -> str:
        return self._name

    def isDaemon(self) -> bool:
        return self.daemon

    def setDaemon(self, daemonic: bool) -> None:
        self.daemon = daemonic

    @property
    def ident(self) -> int | None:
        # the number ``threading.get_ident()`` gives in the thread (session 37: the thread's index,
        # so ``get_ident() == current_thread().ident`` was False)
        return None if self._handle is None else thread_ident(self._handle.ident)

    @property
    def native_id(self) -> int | None:
        return None if self._handle is None else native_id(self._handle.ident)

    def run(self) -> None:
        try:
            if self._target is not None:
                self._target(*self._args, **self._kwargs)
        finally:
            # as CPython's ``run``: what the thread was handed is released once it has run
            # (review 13, A4: an argument stayed alive after ``join``, its finalizer never ran)
            del self._target, self._args, self._kwargs

    def start(self) -> None:
        if self._handle is not None:
            raise RuntimeError("threads can only be started once")
        self._handle = self._rt.start_thread(lambda: _bootstrap(self), self._name, daemon=self.daemon)
        _THREAD_OBJECTS[id(self._rt), self._handle.ident] = self

    def join(self, timeout: float | None = None) -> None:
        if self._handle is None:
            raise RuntimeError("cannot join thread before it is started")
        if self._rt._ex.running_thread() == self._handle.ident:
            raise RuntimeError("cannot join current thread")
        self._handle.join(timeout)

    def is_alive(self) -> bool:
        return self._handle is not None and self._handle.is_alive()

    def __repr__(self) -> str:
        """CPython's (``<Thread(Thread-1 (work), started 1000001)>``), read with no step (review
        10, row 19: it was the harness's class name)."""
        handle = self._handle
        status = "initial" if handle is None else "stopped" if handle._st.finished else "started"
        status += " daemon" if self._daemonic else ""
        status += "" if handle is None else f" {self.ident}"
        return f"<{type(self).__name__}({self._name}, {status})>"


def _bootstrap(thread: Thread) -> None:
    """``thread.run()``, as ``threading``'s threads run it: an exception it raises goes to
    ``threading.excepthook``, called with its ``ExceptHookArgs``. CPython's own hook prints it; a
    checker reports it instead (a failure, as before). A hook of the program's own is the
    program's decision, as in a real run: what it does happens (it runs in the failed thread, its
    locks and writes steps of it), and the exception is a failure only if the hook raises one (or
    fails an assertion); one it swallows ends the thread quietly, so a program that collects its
    threads' errors this way fails where it checks them, as it would for real."""
    lent = _as_deep_as_real(_TARGET_DEPTH - 2)  # (``thread.run()``, then its target)
    try:
        for begin in THREAD_BEGINS:
            begin()
        thread.run()
    except (Exception, SystemExit) as error:  # (not the harness's Abort: a BaseException)
        hook = threading.excepthook
        if isinstance(error, UsageError) or _reports(hook):
            raise
        args = threading.ExceptHookArgs([type(error), error, error.__traceback__, thread])
        del error
        hook(args)
    finally:
        recursion.repay(lent)
    patch_local.thread_ended(thread._rt._ex.race)


# what each controlled thread does first, before its code: the reads of the process's state
# its code may depend on (``patch_shared``: the recursion limit; set while patched)
THREAD_BEGINS: tuple[Callable[[], None], ...] = ()

# the recursion depth at which a real thread runs its code (CPython 3.11): a ``Thread``'s target
# under ``_bootstrap``, ``_bootstrap_inner`` and ``run``; ``start_new_thread``'s function alone
_TARGET_DEPTH = 4
_LOW_LEVEL_DEPTH = 1


def _as_deep_as_real(real: int) -> int:
    """Give the calling controlled thread, whose caller's frame is ``real`` deep in a real thread,
    the depth a real thread has there (``rt/recursion.py``); what was lent, to repay."""
    here = recursion.depth()
    return 0 if here is None else recursion.lend(here - 1 - real)


def _reports(hook: Callable[..., object] | None) -> bool:
    """Is ``hook`` one that reports a thread's exception, which the checker does instead: CPython's
    own, or the test runner's (pytest's, set around each test, records it to fail the test)?"""
    while isinstance(hook, functools.partial):
        hook = hook.func
    if hook is None or hook is threading.__excepthook__:
        return True
    return str(getattr(hook, "__module__", "")).startswith("_pytest.")


_THREAD_OBJECTS: dict[tuple[int, int], Thread | _MainThread] = {}  # (runtime id, thread id) -> its object

_real_timer = threading.Timer


class Timer(Thread):
    """``threading.Timer``: calls ``function`` once ``interval`` seconds have passed unless
    ``cancel``led first. The wait is a timed wait of the virtual clock, so with virtual timeouts
    the call may come at any point the search chooses, before or after the others' steps."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if _controlled() is None and cls is Timer:
            return _real_timer(*args, **kwargs)
        return super().__new__(cls)

    def __init__(
        self,
        interval: float,
        function: Callable[..., object],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.interval = interval
        self.function = handed(self._rt._ex, function)
        self.args = args if args is not None else ()
        self.kwargs = kwargs if kwargs is not None else {}
        self.finished = self._rt.event()

    def cancel(self) -> None:
        """Stop the timer if it has not called ``function`` yet."""
        self.finished.set()

    def run(self) -> None:
        self.finished.wait(self.interval)
        if not self.finished.is_set():
            self.function(*self.args, **self.kwargs)
        self.finished.set()


class _DummyThread(Thread):
    """``threading._DummyThread`` (CPython 3.11): the ``Thread`` object ``current_thread()`` makes
    for a thread that ``threading`` did not start, named ``Dummy-N`` from the counter that numbers
    ``Thread-N``, a daemon, alive for ever, not joinable."""

    def __init__(self, rt: ControlledRuntime, tid: int) -> None:
        self._rt = rt
        self._target = None
        self._args = ()
        self._kwargs = {}
        _MADE[0] += 1
        self._made = _MADE[0]
        self._name = f"Dummy-{self._made}"
        self._daemonic = True
        self._handle = rt._handles[tid]

    def is_alive(self) -> bool:
        return True

    def join(self, timeout: float | None = None) -> None:
        raise AssertionError("cannot join a dummy thread")


def _current_thread(rt: ControlledRuntime) -> Any:
    tid = rt._ex.running_thread()
    assert tid is not None
    known = _THREAD_OBJECTS.get((id(rt), tid))
    if known is not None:
        return known
    if tid == 0:
        return _main_thread(rt)
    if (id(rt), tid) in _LOW_LEVEL:
        dummy = _THREAD_OBJECTS[id(rt), tid] = _DummyThread(rt, tid)
        return dummy
    return rt.current_thread()


# the threads ``_thread.start_new_thread`` started in the running execution: (runtime id, thread id)
_LOW_LEVEL: set[tuple[int, int]] = set()


def _start_new(function: Callable[..., object], args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> int:
    """``_thread.start_new_thread``: a controlled daemon thread (such threads do not keep the
    interpreter alive) with no ``Thread`` object; ``current_thread()`` in it makes its
    ``_DummyThread``, as CPython's does. Its exception is the checker's failure (CPython prints it
    through ``sys.unraisablehook``, not ``threading.excepthook``); ``SystemExit`` ends it quietly."""
    rt = _controlled()
    assert rt is not None
    target = handed(rt._ex, function)
    called = getattr(function, "__name__", None)

    def body() -> None:
        lent = _as_deep_as_real(_LOW_LEVEL_DEPTH - 1)
        try:
            for begin in THREAD_BEGINS:
                begin()
            target(*args, **(kwargs or {}))
        except SystemExit:
            pass
        finally:
            recursion.repay(lent)
        patch_local.thread_ended(rt._ex.race)

    name = f"start_new_thread-{len(rt._ex.threads)}" + (f" ({called})" if called is not None else "")
    handle = rt.start_thread(body, name, daemon=True)
    _LOW_LEVEL.add((id(rt), handle.ident))
    return thread_ident(handle.ident)


_real_current_frames = sys._current_frames


def current_frames() -> dict[int, FrameType]:
    """``sys._current_frames()`` in a controlled thread: each live controlled thread's ident (as
    ``get_ident`` gives it) and its current frame (``stacks.current_frame``; the caller's, for
    the running one), each other thread's liveness a step. The real one gave the one OS
    thread's ident, which no controlled thread has. The harness's own callers get the real one."""
    rt = _controlled()
    caller = sys._getframe(1)
    if rt is None or own_code.machinery(caller.f_code.co_filename):
        return _real_current_frames()
    ex = rt._ex
    running = ex.running_thread()
    out: dict[int, FrameType] = {}
    for info in list(ex.threads):
        # each other thread asked, as ``_enumerate`` does: a read of its state, ordered with its end
        if info.tid == running:
            out[thread_ident(info.tid)] = caller
        elif info.born and ThreadHandle(ex, info.state).is_alive():
            frame = stacks.current_frame(ex, info.tid)
            out[thread_ident(info.tid)] = frame if frame is not None else _starting()
    return dict(sorted(out.items()))


def _bootstrap_pending() -> Iterator[None]:
    yield  # never run: its frame stands for a started thread's before its first step


def _starting() -> FrameType:
    """A frame for a thread started but not begun (CPython's has begun once ``start`` returns)."""
    pending = cast("GeneratorType[None, None, None]", _bootstrap_pending())
    frame: FrameType | None = pending.gi_frame
    assert frame is not None
    return frame


def _main_thread(rt: ControlledRuntime) -> Any:
    main = _THREAD_OBJECTS.get((id(rt), 0))
    if main is None:
        main = _THREAD_OBJECTS[id(rt), 0] = MAIN_THREAD
        MAIN_THREAD.attach(rt)
    return main


def _enumerate(rt: ControlledRuntime) -> list[Any]:
    """The execution's live threads, as ``threading.enumerate`` lists a process's: the main thread
    and every ``Thread`` started and not finished (each asked: a read of its state). The real
    one listed the real main thread, which a program joining "every other thread" then joined:
    it hung (session 36)."""
    mine = sorted((ident, t) for (owner, ident), t in _THREAD_OBJECTS.items() if owner == id(rt) and ident)
    return [_main_thread(rt), *(t for _, t in mine if t.is_alive())]


_real_future: Any = concurrent.futures._base.Future


class Future(_real_future):  # type: ignore[misc]
    """``concurrent.futures.Future``, hashed by the order it was made in its execution (not by
    address): ``as_completed`` and ``wait`` keep the futures in sets, and a set's order by address
    changed from one execution to the next ("the test is not deterministic", session 36)."""

    def __init__(self) -> None:
        super().__init__()
        _FUTURES[0] += 1
        self._made = _FUTURES[0] if _controlled() is not None else id(self)

    def __hash__(self) -> int:
        return self._made


_FUTURES = [0]  # ``Future`` objects made in the running execution
_real_work_item: Any = concurrent.futures.thread._WorkItem


class WorkItem(_real_work_item):  # type: ignore[misc]
    """A pool's task. The pool's worker calls it in the library's code, which is not traced: a
    container's method handed to ``submit`` or ``map`` (``pool.submit(d.update, other)``) is
    wrapped so that its call is an access (``race_calls.handed``; session 37: proved race free
    before)."""

    def __init__(self, future: Any, fn: Callable[..., Any], args: Any, kwargs: Any) -> None:
        rt = _controlled()
        super().__init__(future, fn if rt is None else handed(rt._ex, fn), args, kwargs)


_real_acquire_futures: Any = concurrent.futures._base._AcquireFutures


class _AcquireFutures(_real_acquire_futures):  # type: ignore[misc]
    """``as_completed`` and ``wait`` take the futures' locks in the order of their addresses; by
    the order they were made instead (their hash), the same in every execution."""

    def __init__(self, futures: Any) -> None:
        self.futures = sorted(futures, key=hash)


def interpreter_exit(rt: ControlledRuntime) -> None:
    """What the interpreter does once the main thread's code returned, before it waits for the
    other non-daemon threads: ``concurrent.futures``' exit hook tells the workers of every pool not
    shut down that they are done, and joins them. Without it a program that never calls
    ``shutdown`` (a module-level pool, most often) ended in a reported deadlock: its idle workers
    blocked on their queue for ever, where the real interpreter exits."""
    futures_thread = sys.modules.get("concurrent.futures.thread")
    queues = getattr(futures_thread, "_threads_queues", None)
    if futures_thread is None or not queues:
        return
    mine = [(t, q) for t, q in list(queues.items()) if isinstance(t, Thread) and t._rt is rt]
    if not mine:
        return
    # the hook's own flag, which the workers read once their queue hands them None; set for this
    # execution's exit only (the next execution starts before any exit)
    futures_thread._shutdown = True  # type: ignore[attr-defined]
    try:
        for _, work_queue in mine:
            work_queue.put(None)
        for t, _ in mine:
            t.join()
    finally:
        futures_thread._shutdown = False  # type: ignore[attr-defined]


def _forget_controlled_threads() -> None:
    """Drop the controlled threads the standard library still refers to once patching ends:
    ``concurrent.futures`` keeps each worker thread and its queue for the interpreter's exit,
    when it would put to a queue of a finished execution."""
    _THREAD_OBJECTS.clear()
    futures_thread = sys.modules.get("concurrent.futures.thread")
    queues = getattr(futures_thread, "_threads_queues", None)
    if queues is not None:
        for thread in list(queues):
            if isinstance(thread, Thread):
                queues.pop(thread, None)
