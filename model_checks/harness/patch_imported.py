"""Stand-ins for the synchronisation objects a program made at import, before patching.

``lock = threading.Lock()`` at a module's top level (or a class body's, or in ``__init__`` of an
object made at import) is a real lock: patching the ``threading`` names afterwards does not change
it, so the explorer neither schedules its operations nor orders accesses by it. An outside review
found what follows (session 35): a correctly locked counter reported as a data race, a queue's
order assumed and proved, and a condition hand-off that blocked the process on the real lock.

A ``Thread`` or a ``ThreadPoolExecutor`` made at import (not started, given no work) is one too:
each execution makes its own controlled one.

So ``patched(module)`` puts a ``StandIn`` in place of each such object it finds in the module's
globals, its classes' attributes and the attributes of its module-level instances. A stand-in
makes, in each execution, a controlled object of the same kind and starting state (a set event
stays set; a queue's items, a semaphore's count are copied) the first time a controlled thread
touches it, and hands every call to that object; outside a controlled thread it hands them to the
real one. A condition made on one of these locks gets the lock's stand-in object of the same
execution, so the two stay one.
"""

from __future__ import annotations

import _thread
import concurrent.futures.thread
import queue
import threading
from collections.abc import Callable
from typing import Any

from model_checks.harness.rt.scheduler import UsageError

_REAL_LOCK = type(_thread.allocate_lock())
_REAL_RLOCKS: tuple[type, ...] = tuple({type(threading.RLock()), threading._PyRLock})  # type: ignore[attr-defined]
_REAL_CONDITION = threading.Condition
_REAL_EVENT = threading.Event
_REAL_SEMAPHORE = threading.Semaphore
_REAL_BOUNDED = threading.BoundedSemaphore
_REAL_BARRIER = threading.Barrier
# the real classes (captured here, before any patching: ``patched`` replaces the names) and the
# name of each, looked up again when the twin is made (then the patched one)
_REAL_QUEUES = (
    (queue.PriorityQueue, "PriorityQueue"),
    (queue.LifoQueue, "LifoQueue"),
    (queue.Queue, "Queue"),
)
_REAL_SIMPLE_QUEUE = queue.SimpleQueue
_REAL_THREAD = threading.Thread
_EXECUTOR = concurrent.futures.thread.ThreadPoolExecutor
Replacements = list[tuple[Any, str, Any, Any]]  # (module or class, name, real, replacement)
Running = Callable[[], object]  # the runtime of the controlled thread running here, or None


class StandIn:
    """A program's synchronisation object made before patching: a controlled twin per execution."""

    def __init__(self, real: object, make: Callable[[], object], running: Running, name: str) -> None:
        self._real = real
        self._make = make
        self._running = running
        self._name = name
        self._runtime: object = None
        self._twin: object = None

    def _target(self) -> Any:
        rt = self._running()
        if rt is None:
            return self._real
        if self._runtime is not rt:  # a new execution: a fresh twin, in the object's first state
            self._runtime, self._twin = rt, self._make()
        return self._twin

    def forget(self) -> None:
        """Patching ended: the last execution's twin goes."""
        self._runtime = self._twin = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # a cached function (``patch_cached``)
        return self._target()(*args, **kwargs)

    def __enter__(self) -> Any:
        return self._target().__enter__()

    def __exit__(self, *exc: object) -> Any:
        return self._target().__exit__(*exc)

    def __repr__(self) -> str:
        return f"<stand-in for {self._name}, made before patching>"

    # A container copied (each execution's ``patch_state`` snapshot) holds the same handle.
    def __copy__(self) -> StandIn:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> StandIn:
        return self


# Stand-ins other modules make for objects of theirs (``patch_identity``: a ``sqlite3``
# connection made at import), found wherever this module's are (globals, fields, containers).
OTHER_STAND_INS: list[Callable[[Any, str, Running], StandIn | None]] = []
# ... and those whose parts stand in too, through ``made`` (``patch_mp_imported``: a
# ``multiprocessing`` condition or ``Value`` made at import shares its lock's twin)
MORE_STAND_INS: list[Callable[[Any, str, Running, dict[int, StandIn]], StandIn | None]] = []


def stand_in(real: object, name: str, running: Running, made: dict[int, StandIn]) -> StandIn | None:
    """The stand-in of ``real`` (one per object: ``made``, by id), or None when it is not one of
    ``threading``'s or ``queue``'s objects (or of ``OTHER_STAND_INS``'). ``UsageError`` for one in
    a state no fresh object can start in (a lock held at patching)."""
    found = made.get(id(real))
    if found is not None:
        return found
    for other in OTHER_STAND_INS:
        found = other(real, name, running)
        if found is not None:
            made[id(real)] = found
            return found
    for more in MORE_STAND_INS:
        found = more(real, name, running, made)
        if found is not None:
            made[id(real)] = found
            return found
    make = _maker(real, name, running, made)
    if make is None:
        return None
    made[id(real)] = made_now = StandIn(real, make, running, name)
    return made_now


def _maker(real: Any, name: str, running: Running, made: dict[int, StandIn]) -> Callable[[], object] | None:
    # ``threading``'s and ``queue``'s names are looked up after patching (here, or when the twin
    # is made): the patched ones, which make a controlled object inside a controlled thread.
    kind = type(real)
    _refuse_subclass(real, name)
    if kind is _REAL_LOCK or isinstance(real, _REAL_RLOCKS):
        held = real.locked() if kind is _REAL_LOCK else real._is_owned()
        if held:
            raise UsageError(
                f"{name} is a lock held when patching began (acquired at import and not released): "
                "a fresh lock for each execution cannot start held; release it before patched() "
                "or `lanecheck explore` runs the program"
            )
        return threading.Lock if kind is _REAL_LOCK else threading.RLock
    if isinstance(real, _REAL_CONDITION):
        lock = stand_in(getattr(real, "_lock"), f"{name}'s lock", running, made)  # noqa: B009
        assert lock is not None, "a Condition's lock is a Lock or an RLock"
        return lambda: threading.Condition(lock._target())
    if isinstance(real, _REAL_EVENT):
        was_set = real.is_set()

        def event() -> object:
            made_now = threading.Event()
            if was_set:
                made_now.set()
            return made_now

        return event
    if isinstance(real, _REAL_SEMAPHORE):
        value = real._value
        bounded = isinstance(real, _REAL_BOUNDED)
        return lambda: (threading.BoundedSemaphore if bounded else threading.Semaphore)(value)
    if isinstance(real, _REAL_BARRIER):
        made_at_import: Any = real  # (its private fields: what ``Barrier.__init__`` kept)
        parties, action, timeout = real.parties, made_at_import._action, made_at_import._timeout
        return lambda: threading.Barrier(parties, action, timeout)
    for cls, factory in _REAL_QUEUES:  # subclasses first
        if isinstance(real, cls):
            items = list(real.queue)
            maxsize = real.maxsize

            def fill(factory: str = factory, items: list[Any] = items, maxsize: int = maxsize) -> object:
                made_now = getattr(queue, factory)(maxsize)
                for item in items:
                    made_now.put_nowait(item)
                return made_now

            return fill
    if isinstance(real, (_REAL_THREAD, _EXECUTOR)):
        return _runner(real, name)
    if type(real) is _REAL_SIMPLE_QUEUE:
        if real.qsize():
            raise UsageError(f"{name} is a SimpleQueue holding items when patching began: not supported")
        return queue.SimpleQueue
    return None


# the classes whose objects made at import stand in: one of a program's subclass of them cannot
# (its overrides would be lost, a race or a failure in them proved absent: session 37's review)
_STOOD_IN: tuple[type, ...] = (
    _REAL_CONDITION,
    _REAL_EVENT,
    _REAL_SEMAPHORE,
    _REAL_BOUNDED,
    _REAL_BARRIER,
    *(cls for cls, _ in _REAL_QUEUES),
)


def _refuse_subclass(real: object, name: str) -> None:
    """``UsageError`` for an object of a program's subclass of a synchronisation class made at
    import: what its own ``__init__`` took is not known, so no fresh one can be made for each
    execution, and a plain twin would drop its overrides (``set`` raising when set twice)."""
    kind = type(real)
    for base in _STOOD_IN:
        if isinstance(real, base) and kind not in _STOOD_IN:
            raise UsageError(
                f"{name} is a {kind.__name__} (a subclass of {base.__name__}) made at import: it "
                "cannot be made afresh for each execution with its own arguments, and a plain "
                f"{base.__name__} would drop its overrides; make it inside the explored function"
            )


def _runner(real: Any, name: str) -> Callable[[], object]:
    """A ``Thread`` or a ``ThreadPoolExecutor`` made at import and not used yet: each execution makes
    its own, as a fresh interpreter would. One already running threads cannot be, nor one of a
    subclass (what its own ``__init__`` took is not known): ``UsageError``, naming the fix."""
    kind = type(real).__name__
    if type(real) not in (_REAL_THREAD, _EXECUTOR):
        raise UsageError(
            f"{name} is a {kind} made at import: a subclass of Thread or ThreadPoolExecutor cannot be "
            "made afresh for each execution; make it inside the explored function"
        )
    if type(real) is _REAL_THREAD:
        if real.is_alive() or real.ident is not None:
            raise UsageError(
                f"{name} is a thread started at import: it runs outside the explorer; start it inside "
                "the explored function"
            )
        unstarted: Any = real  # (its private fields: what ``Thread.__init__`` kept)
        target, args, kwargs = unstarted._target, unstarted._args, unstarted._kwargs
        thread_name, daemon = real.name, real.daemon
        return lambda: threading.Thread(
            target=target, name=thread_name, args=args, kwargs=kwargs, daemon=daemon
        )
    if real._threads:
        raise UsageError(
            f"{name} is a ThreadPoolExecutor given work at import: its worker threads are real and run "
            "outside the explorer; submit to it inside the explored function"
        )
    workers, prefix = real._max_workers, real._thread_name_prefix
    initializer, initargs = real._initializer, real._initargs
    return lambda: _EXECUTOR(workers, prefix, initializer, initargs)


def replaced_late(by_identity: dict[int, Any], replacements: Replacements, late: Replacements) -> None:
    """``by_identity`` told of the replacements made when patching began (``late``:
    ``patch_process.at_patching``). One of a name replaced already (the working directory's
    ``open``, made around the first) takes the first's place; one of a real object that a library
    holds under a name of its own does not take the program's: numpy's ``bit_generator.RLock`` is
    ``threading.RLock`` (or, imported while patched, its replacement), and numpy's draw lock (one
    write of a generator's state, no exclusion) became the program's ``RLock`` once numpy was
    imported (session 47: a dataclass's ``field(default_factory=threading.RLock)``)."""
    original = {id(fake): real for _, _, real, fake in replacements}
    names = {(id(mod), attr) for mod, attr, _, _ in replacements}
    for mod, attr, real, fake in late:
        key = id(original.get(id(real), real))
        if key not in by_identity or (id(mod), attr) in names:
            by_identity[key] = fake


class Factories:
    """What ``patched`` stands in for beyond a module's globals (``patch_reach``): each
    synchronisation object (``made``, by id) and each real object it replaced by name
    (``replaced``: ``threading.Lock``, ``threading.Thread``, ...), held by reference elsewhere as a
    factory: ``field(default_factory=threading.Lock)`` (the dataclass's ``__init__`` keeps it in a
    closure cell), ``defaultdict(threading.Lock)``, ``lock_factory=threading.Lock`` as a default or
    a class attribute, ``partial(threading.Thread, daemon=True)``. Kept real, it made a real lock
    in a controlled thread, which the explorer neither orders accesses by nor schedules: a false
    race, or the process blocked on it past its time limit; a real thread, a false deadlock in
    ``start`` (outside review 14)."""

    def __init__(self, running: Running) -> None:
        self.running = running
        self.made: dict[int, StandIn] = {}
        self.replaced: dict[int, object] = {}  # id(real) -> its replacement
        self._reals: dict[int, object] = {}  # id(replacement put in place) -> the real

    def with_replaced(self, replaced: dict[int, object]) -> Callable[[object, str], object | None]:
        self.replaced = replaced
        return self.stand_in_for

    def factory(self, value: object) -> object | None:
        """The replacement of ``value``, a real object replaced by name, else None."""
        fake = self.replaced.get(id(value))
        if fake is not None:
            self._reals[id(fake)] = value
        return fake

    def stand_in_for(self, value: object, name: str) -> object | None:
        fake = self.factory(value)
        return fake if fake is not None else stand_in(value, name, self.running, self.made)

    def real_of(self) -> Callable[[object, str], object | None]:
        """The real object of each stand-in and replacement put in place, for ``put_back``."""
        reals = {**self._reals, **{id(fake): fake._real for fake in self.made.values()}}
        return lambda value, _name: reals.get(id(value))
