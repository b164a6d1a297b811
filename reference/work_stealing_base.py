"""What both work-stealing pools share: admission, fork/join, parking, running, Stop and failure.

``PoolBase`` is the pool minus where tasks wait: ``WorkStealingPool``
(``reference.work_stealing``: a Chase-Lev deque per worker and an injector) and
``GlobalQueuePool`` (``reference.global_queue_pool``: one locked queue) fill that in.

Parking (a worker with nothing to do registers, re-checks every queue, then sleeps; whoever
makes work visible wakes one) is ``Parking``'s, in ``reference.work_stealing_park``.

``join`` from a worker never blocks while there is work: it runs other tasks until the
joined task is done, and parks only when nothing is runnable; completing a task a parked
joiner waits for wakes it. From any other thread ``join`` waits.

Stop follows the Work Lane's: ``stop(StopMode.DRAIN)`` closes admission (later submits get
INVALID_STATE), lets every accepted task (and what they spawn) run, and joins the workers;
``stop(StopMode.DISCARD)`` runs nothing more: queued tasks are handed to ``on_discard`` (and
traced as ``discard``), their handles say so, and tasks already running finish. A task that
raises is reported to ``on_error`` (default: logged) and its ``join`` raises ``TaskFailed``;
a joined task that was discarded makes ``join`` raise ``TaskDiscarded``. A fault of the
pool's own code fails the pool (``reference.failure``): its Stop reports everything left and
returns UNKNOWN. Stop waits for ``pending`` (accepted tasks not yet done) to reach 0, registered
as a waiter: the completion that brings it there takes the park lock only when one is.

Mutant seams: ``_wait_for`` (what a worker's join does while the task is not done),
``_wait_external``, ``_run``, ``_wait_quiet`` (Stop's wait); the subclasses' ``_recheck`` and
``_find_work`` (or, with a queue per worker, ``_takes`` and ``_find_elsewhere``: the worker
loop, ``_work``, which a worker's join runs too, calls the own queue's take itself, one Python
call less per task).
"""

from __future__ import annotations

import itertools
import logging
from abc import abstractmethod
from collections.abc import Callable, Hashable
from functools import partial
from typing import Any, TypedDict, TypeVar

from . import arguments
from .arguments import MAX_SIZE, MAX_WORKERS
from .failure import FailureState, SchedulerFailed, SchedulerFailure
from .results import Result
from .runtime import (
    DEFAULT_RUNTIME,
    AtomicInt,
    Runtime,
    ThreadHandle,
    ThreadingRuntime,
)
from .scheduler import StopMode
from .tracing import Tracer
from .work_stealing_park import Parking
from .work_stealing_task import DISCARDED, DONE, EXTERNAL, PENDING, RAISED, PoolStats, TaskHandle, log_error

_log = logging.getLogger("reference")


class PoolOptions(TypedDict, total=False):
    """``PoolBase``'s optional keyword arguments: what a subclass with arguments of its own passes on."""

    capacity: int
    runtime: Runtime | None
    tracer: Tracer | None
    on_error: Callable[[TaskHandle, BaseException], None] | None
    on_discard: Callable[[TaskHandle], None] | None
    seed: int


class PoolBase(Parking, FailureState):
    """What both pools share: admission, fork/join, parking, running, Stop and failure.

    A subclass provides its queues (``_make_queues``, called before the workers
    start), where tasks go (``_inject`` under the injector lock,
    ``_push_spawned``), where workers find them (``_find_work``), the park
    re-check (``_recheck``, declared by ``Parking``) and the queues' content for Stop (``_empty_injector``,
    ``_take_everything``).
    """

    POOL = ""
    # Per worker, its own queue's take (a bound method: ``(status, task)``, ``task`` None unless
    # taken), which the worker loop tries before ``_find_elsewhere``; None (no queue of its own):
    # the loop asks ``_find_work``. A class attribute, so a pool without one keeps its instance
    # attributes below CPython's 30 shared keys (above, every ``self.`` load is slower).
    _takes: list[Callable[[], tuple[str, TaskHandle | None]]] | None = None

    def __init__(
        self,
        *,
        workers: int,
        capacity: int = 64,
        runtime: Runtime | None = None,
        tracer: Tracer | None = None,
        on_error: Callable[[TaskHandle, BaseException], None] | None = None,
        on_discard: Callable[[TaskHandle], None] | None = None,
        seed: int = 0,
    ) -> None:
        workers = arguments.count("workers", workers, maximum=MAX_WORKERS)
        capacity = arguments.power_of_two("capacity", capacity, maximum=MAX_SIZE)
        arguments.count("seed", seed, minimum=0, maximum=(1 << 63) - 1)
        arguments.runtime(runtime)
        arguments.tracer(tracer)
        arguments.function("on_error", on_error, optional=True)
        arguments.function("on_discard", on_discard, optional=True)
        self.workers = workers
        self.capacity = capacity
        self._rt = rt = DEFAULT_RUNTIME if runtime is None else runtime
        self._tracer = tracer
        self._on_error = log_error if on_error is None else on_error
        self._on_discard = on_discard
        self.stats = PoolStats(workers)
        self._ids = itertools.count()
        self._state_lock = rt.lock(name="pool.state")
        self._state = "running"  # running -> stopping -> stopped; under _state_lock
        self._failure: SchedulerFailure | None = None
        self._inj_lock = rt.lock(name="injector")
        self._closed = False  # under _inj_lock: Stop began, no submit is accepted
        self._pending = rt.atomic_int(0, name="pending")  # accepted tasks not yet done or discarded
        self._discarding = rt.atomic_int(0, name="discarding")
        self._init_parking(rt, workers)  # the park lock, the semaphores, who is registered
        # A task's state is a plain field, written once by its completer and read by joiners;
        # under a checking runtime each write and read is also announced on this atomic cell
        # (as the deque does for its slots) so partial-order reduction sees them conflict.
        self._states: AtomicInt | None = (
            None if type(rt) is ThreadingRuntime else rt.atomic_int(0, name="task.state")
        )
        self._worker_ids: dict[Hashable, int] = {}
        # Bound once: spawn and join ask on every call (the production runtime's is the builtin
        # thread ident itself, without a Python frame in between).
        self._current_thread: Callable[[], Hashable] = rt.current_thread
        self._threads: list[ThreadHandle] = []
        self._make_queues(seed)
        self._sinks = self._spawn_sinks()
        self._start()

    def _start(self) -> None:
        if self._tracer is not None:
            config = {"workers": self.workers, "capacity": self.capacity, "pool": self.POOL}
            self._tracer.begin(config)  # type: ignore[arg-type]  # "pool" is a str
        for w in range(self.workers):
            self._threads.append(self._rt.start_thread(partial(self._worker_main, w), f"w{w}"))

    # -- subclass hooks -----------------------------------------------------

    @abstractmethod
    def _make_queues(self, seed: int) -> None:
        """Build the pool's queues (``seed`` for its victim order), before its workers start."""

    @abstractmethod
    def _inject(self, task: TaskHandle) -> None: ...

    @abstractmethod
    def _push_spawned(self, w: int, task: TaskHandle) -> None: ...

    def _spawn_sinks(self) -> list[Callable[[TaskHandle], None]] | None:
        """Per worker, a callable doing what ``_push_spawned`` does with one call less (a bound
        method of its queue), or None: spawns then call ``_push_spawned``."""
        return None

    @abstractmethod
    def _find_work(self, w: int) -> TaskHandle | None: ...

    def _find_elsewhere(self, w: int) -> TaskHandle | None:
        """``_find_work`` after the own queue's take came back empty (see ``_takes``)."""
        return self._find_work(w)

    @abstractmethod
    def _empty_injector(self) -> list[TaskHandle]:
        """Take every task out of the injector; the caller holds ``_inj_lock``."""

    def _take_injector(self) -> list[TaskHandle]:
        with self._inj_lock:
            return self._empty_injector()

    @abstractmethod
    def _take_everything(self) -> list[TaskHandle]: ...

    # -- the public API -----------------------------------------------------

    @property
    def running(self) -> bool:
        with self._state_lock:
            return self._state == "running" and self._failure is None

    def _task_id(self, name: object) -> object:
        if name is None:
            return next(self._ids)
        if not isinstance(name, str | int) or isinstance(name, bool):
            raise TypeError(f"name must be a str or an int, got {type(name).__name__} {arguments.show(name)}")
        return name

    def submit(
        self, fn: Callable[[], Any], name: str | int | None = None
    ) -> tuple[Result, TaskHandle | None]:
        """Queue ``fn()`` from outside the pool: ``(SUCCESS, handle)``; ``(INVALID_ARGUMENT, None)`` if
        ``fn`` is not callable or ``name`` not a str/int; ``(INVALID_STATE, None)`` once Stop began or
        the pool failed. A refused task stays with the caller (it never runs)."""
        try:
            arguments.function("fn", fn)
            task = TaskHandle(fn, self._task_id(name))
        except TypeError as exc:
            _log.debug("submit refused: %s", exc)
            self._emit("submit", {"task": None, "result": "invalid_argument"})
            return Result.INVALID_ARGUMENT, None
        with self._inj_lock:
            if self._closed or self._failure is not None:
                self._emit("submit", {"task": task.id, "result": "invalid_state"})
                return Result.INVALID_STATE, None
            self._pending.fetch_add(1)
            self._inject(task)
            if self._tracer is not None:
                self._emit("submit", {"task": task.id, "result": "ok"})
        self._notify_work()
        return Result.SUCCESS, task

    def spawn(self, fn: Callable[[], Any], name: str | int | None = None) -> TaskHandle:
        """Fork ``fn()`` from a task running on this pool (``TypeError`` if ``fn`` is not callable,
        ``RuntimeError`` from any other thread: use ``submit``). Always accepted: a Stop(drain)
        runs it, a Stop(discard) reports it."""
        if not callable(fn):
            arguments.function("fn", fn)
        w = self._worker_ids.get(self._current_thread())
        if w is None:
            raise RuntimeError("spawn is for tasks running on this pool; other threads use submit")
        task = TaskHandle(fn, next(self._ids) if name is None else self._task_id(name))
        self._pending.fetch_add(1)
        sinks = self._sinks
        if sinks is None:
            self._push_spawned(w, task)
        else:
            sinks[w](task)
        if self._sleepers.load():  # _notify_work inlined: usually nobody is registered to park
            self._wake_one()
        return task

    def join(self, task: TaskHandle) -> Any:
        """Wait for ``task`` and return its value (``TaskFailed``/``TaskDiscarded`` otherwise). On a
        worker, runs other tasks meanwhile; elsewhere, blocks."""
        if type(task) is not TaskHandle:
            arguments.instance("task", task, TaskHandle)
        states = self._states  # _pending_task inlined (a fork/join calls this once per task)
        if states is not None:
            states.load()
        if task.state == PENDING:
            w = self._worker_ids.get(self._current_thread())
            if w is None:
                self._wait_external(task)
            else:
                self._wait_for(w, task)
        if task.state == PENDING:
            raise SchedulerFailed(f"the pool failed while task {task.id!r} was pending")
        if self._tracer is not None:
            self._emit("join", {"task": task.id})
        if task.state == DONE:
            return task.value
        return task.outcome()

    def _wait_for(self, w: int, task: TaskHandle) -> None:
        """Help until ``task`` is done: run what this worker finds; park when there is nothing."""
        self._work(w, task)

    def _wait_external(self, task: TaskHandle) -> None:
        with self._park_lock:
            task.joiner = EXTERNAL
            self._joiners.fetch_add(1)
            try:
                while self._pending_task(task) and self._failure is None:
                    self._idle.wait()
            finally:
                task.joiner = None
                self._joiners.fetch_add(-1)

    def _worker_index(self) -> int | None:
        return self._worker_ids.get(self._current_thread())

    # -- workers ------------------------------------------------------------

    def _worker_main(self, w: int) -> None:
        # No lock: each worker writes its own key once, before it runs a task, and only its own
        # tasks (spawn, join) and Stop (which finds no key for its thread) read the table; a dict
        # item store is atomic under the GIL. A lock here met Stop's state lock in every execution.
        self._worker_ids[self._rt.current_thread()] = w
        self._work(w, None)

    def _work(self, w: int, joined: TaskHandle | None) -> None:
        """Worker ``w``'s loop: take from its own queue, else find work elsewhere; run what it
        found, or park when there is nothing. The worker loop (``joined`` None) runs until
        shutdown or the pool fails, and a fault of our own code fails the pool here; a worker's
        join runs it until ``joined`` is done, and a fault goes up to the task that joined."""
        states = self._states
        # The own queue's take called here, not through _find_work: one Python call less per task.
        take = None if self._takes is None else self._takes[w]
        task: TaskHandle | None = None
        try:
            while True:
                if joined is None:
                    if self._failure is not None:
                        return
                else:
                    if states is not None:  # _pending_task inlined
                        states.load()
                    if joined.state != PENDING:
                        return
                if take is None:
                    task = self._find_work(w)
                else:
                    task = take()[1]
                    if task is None:
                        task = self._find_elsewhere(w)
                if task is not None:
                    self._run(w, task)
                elif not self._park(w, joined):
                    return  # shutdown, or the pool failed
        except BaseException as exc:  # our own code: a task's exceptions are caught in _run
            if joined is not None:
                raise
            _log.exception("worker %d failed", w)
            self._fail(exc)
            if task is not None and task.state == PENDING:
                self._discard([task])  # taken but never run: reported, not lost

    def _run(self, w: int, task: TaskHandle) -> None:
        if self._discarding.load():
            self._discard([task])
            return
        tracer = self._tracer
        if tracer is not None:
            self._emit("run", {"worker": w, "task": task.id})
        self.stats.runs[w] += 1
        try:
            task.value = task.fn()
            state = DONE
        except Exception as exc:
            task.error = exc
            state = RAISED
            try:
                self._on_error(task, exc)
            except Exception:
                _log.exception("on_error raised for task %r", task.id)
        if tracer is not None:
            self._emit("done", {"worker": w, "task": task.id, "outcome": "ok" if state == DONE else "raised"})
        self._complete(task, state)

    def _pending_task(self, task: TaskHandle) -> bool:
        states = self._states
        if states is not None:
            states.load()
        return task.state == PENDING

    def _complete(self, task: TaskHandle, state: int) -> None:
        states = self._states
        if states is not None:
            states.store(state)
        task.state = state  # before the joiners test: Dekker with _park / _wait_external
        last = self._pending.fetch_add(-1) == 1  # before it too: Dekker with _wait_quiet
        # One park-lock round trip, and only when a registered waiter may need it: a parked or
        # external joiner of this task, or (the pool gone quiet) a waiting Stop.
        if self._joiners.load() and (last or task.joiner is not None):
            with self._park_lock:
                joiner = task.joiner
                if last or joiner == EXTERNAL:
                    self._idle.notify_all()
                if joiner is not None and joiner != EXTERNAL and self._sleeping[joiner]:
                    self._unpark(joiner)

    # -- discard, failure, Stop ------------------------------------------------

    def _discard(self, tasks: list[TaskHandle], *, logged: bool = False) -> None:
        if not tasks:
            return
        if not logged:
            self._emit("discard", {"tasks": [t.id for t in tasks]})
        for task in tasks:
            if self._failure is not None:
                self._failure.discarded.append((-1, task))
            if self._on_discard is not None:
                try:
                    self._on_discard(task)
                except Exception:
                    _log.exception("on_discard raised for task %r", task.id)
            self._complete(task, DISCARDED)

    def _fail(self, error: BaseException) -> None:
        with self._state_lock:
            if self._failure is None:
                self._failure = SchedulerFailure(error)
        self._wake_all(shutdown=True)

    def stop(self, mode: StopMode = StopMode.DRAIN) -> Result:
        """Stop and join the workers (see the module docstring). SUCCESS (also when already
        stopped); INVALID_ARGUMENT if ``mode`` is not a ``StopMode``; INVALID_STATE from a task of
        this pool or while another Stop runs; UNKNOWN if the pool failed."""
        if not isinstance(mode, StopMode):
            return Result.INVALID_ARGUMENT
        if self._worker_index() is not None:
            return Result.INVALID_STATE  # it would wait for itself
        with self._state_lock:
            if self._state == "stopped":
                return Result.SUCCESS if self._failure is None else Result.UNKNOWN
            if self._state == "stopping":
                return Result.INVALID_STATE
            self._state = "stopping"
        with self._inj_lock:
            self._closed = True
            self._emit("stop_begin", {"mode": mode.value})
        if mode is StopMode.DISCARD:
            self._discarding.store(1)
            with self._inj_lock:
                taken = self._empty_injector()
                # logged while the injector is held: a worker that looks at the injector after
                # it was emptied must not log "empty" before the log says the tasks left it
                if taken:
                    self._emit("discard", {"tasks": [t.id for t in taken]})
            self._discard(taken, logged=True)
        self._wait_quiet()
        self._wake_all(shutdown=True)
        for thread in self._threads:
            thread.join()
        if self._failure is not None:
            self._discard(self._take_everything())
            _log.error("%s", self._failure.describe())
            result, outcome = Result.UNKNOWN, "failed"
        else:
            result, outcome = Result.SUCCESS, "ok"
        with self._state_lock:
            self._state = "stopped"
        self._emit("stop_end", {"mode": mode.value, "result": outcome})
        return result

    def _wait_quiet(self) -> None:
        """Stop's wait for ``pending`` to reach 0 (or the pool to fail)."""
        # Admission is closed, so 0 is final: only a running task (itself counted) spawns. Seen
        # without the lock, Stop skips a park-lock round trip that met every parking worker's.
        if self._pending.load() == 0:
            return
        with self._park_lock:
            if self._pending.load() > 0 and self._failure is None:
                self._joiners.fetch_add(1)  # register, then look again: Dekker with _complete
                try:
                    while self._pending.load() > 0 and self._failure is None:
                        self._idle.wait()
                finally:
                    self._joiners.fetch_add(-1)

    def _stop_on_exit(self, exc_type: type[BaseException] | None) -> Result:
        # The producer side failed when the block raised: its queued items are not run.
        return self.stop(StopMode.DRAIN if exc_type is None else StopMode.DISCARD)

    def _emit(self, event: str, fields: dict[str, Any]) -> None:
        tracer = self._tracer
        if tracer is not None:
            tracer.emit(self._rt.thread_name(), event, fields)


P = TypeVar("P", bound=PoolBase)


def create_pool(build: Callable[..., P], what: str, options: dict[str, Any]) -> tuple[Result, P | None]:
    """The ToolKit-style factory of either pool: ``(SUCCESS, pool)``, or ``(INVALID_ARGUMENT, None)``
    for any bad argument (the refusal is logged at debug level, naming ``what`` was created)."""
    try:
        return Result.SUCCESS, build(**options)
    except (TypeError, ValueError) as exc:
        _log.debug("%s create refused its arguments: %s", what, exc)
        return Result.INVALID_ARGUMENT, None


__all__ = ["PoolBase", "PoolOptions", "create_pool"]
