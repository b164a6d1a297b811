"""Patch mode's ``threading``, ``queue`` and ``_thread`` classes, as classes (``patch.py``).

``threading.Event``, ``Condition``, ``Semaphore``, ``BoundedSemaphore``, ``queue.Queue``,
``LifoQueue``, ``SimpleQueue`` and ``_thread.RLock`` are classes in CPython, and programs subclass
them (``class Flag(threading.Event)``) and test ``isinstance(q, queue.Queue)``. Patched, each
name is a class of its own (``_Patched``), deriving from the real class's Python implementation:

* called by that name inside a controlled thread, it makes the harness's compiled controlled
  object (one step per operation), which ``isinstance`` then recognises as one of it;
* a program's subclass of it is built as an ordinary object of the real implementation, whose
  ``Lock``, ``Condition`` and ``Semaphore`` are the patched names' controlled ones: its methods,
  and ``super()`` calls, are CPython's own code on controlled primitives;
* outside a controlled thread the name hands out the real object.

A program's subclass defined before patching derives from the real class and is built the same
way, except for the C types whose layout no Python class shares (``_queue.SimpleQueue``,
``_thread.RLock``, ``threading.local``): ``patch._rebase`` refuses those by name.

``threading.Lock`` and ``RLock`` stay functions, as in CPython (``isinstance(x, threading.Lock)``
is a ``TypeError`` there too); ``_thread.allocate_lock`` (and ``allocate``, ``threading``'s own
``_allocate_lock``) makes a controlled lock, and ``isinstance(x, _thread.LockType)`` holds for one.

A queue's internals (``q.mutex``, ``q.not_empty``, ``q.not_full``, ``q.all_tasks_done``,
``q.queue``, a write of ``q.unfinished_tasks``) exist only in CPython's own queue code: when a
patched module of the program names one (``names_queue_internals``), its queues are made of that
code on controlled locks and conditions (about three steps a ``put`` or ``get`` instead of one);
otherwise the compiled queue refuses each by name.
"""

from __future__ import annotations

import _thread
import dis
import queue
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from types import CodeType, FrameType, FunctionType, ModuleType
from typing import Any

from model_checks.harness import own_code, patch_imports
from model_checks.harness.patch_imported import StandIn
from model_checks.harness.patch_threads import _controlled, current_frames

# (the state search's readers take the real types, ``_thread.LockType`` among them, when imported:
# imported here, before this module's stand-ins replace them; ``lanecheck explore --strategy
# states`` imported them inside ``patched``, and every state reaching a real lock was refused)
from model_checks.harness.rt import fingerprint as _fingerprint  # noqa: F401
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.sync import primitives

# Is a queue made by ``queue.Queue`` / ``LifoQueue`` CPython's own code (``names_queue_internals``)?
FAITHFUL_QUEUES = [False]


class _Patched(type):
    """The metaclass of a patched name. The class it makes for the name itself sets ``_real``
    (the real class), ``_made`` (the controlled object, from the runtime and the call's
    arguments; None for an ordinary object of the class) and ``_mine`` (is an object one that
    ``_made`` made?); a program's subclass of it sets none and is an ordinary class."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if "_real" in cls.__dict__:
            rt = _controlled()
            if rt is None:
                return cls.__dict__["_real"](*args, **kwargs)
            made = cls.__dict__["_made"](rt, *args, **kwargs)
            if made is not None:
                return made
        return super().__call__(*args, **kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        if "_real" not in cls.__dict__:
            return super().__instancecheck__(obj)
        real: type = cls.__dict__["_real"]
        return isinstance(obj, real) or super().__instancecheck__(obj) or bool(cls.__dict__["_mine"](obj))

    def __subclasscheck__(cls, sub: Any) -> bool:
        if "_real" not in cls.__dict__:
            return super().__subclasscheck__(sub)
        real: type = cls.__dict__["_real"]
        return issubclass(sub, real) or super().__subclasscheck__(sub)


def _queue_state(obj: object) -> Any:
    """The model of a compiled controlled queue, or None."""
    return obj._st if type(obj) is primitives.Queue else None


def _semaphore_state(obj: object) -> Any:
    """The model of a compiled controlled semaphore, or None."""
    return obj._st if type(obj) is primitives.Semaphore else None


class Event(threading.Event, metaclass=_Patched):
    _real = threading.Event
    _made = staticmethod(lambda rt: None if _privates_named() else rt.event())
    _mine = staticmethod(lambda obj: type(obj) is primitives.Event)


def _condition(rt: ControlledRuntime, lock: Any = None) -> primitives.Condition | None:
    """The compiled condition over a controlled lock (or none); over any other object with
    ``acquire`` and ``release`` (a program's own lock-like class, as CPython accepts: sixth
    review), None: an ordinary object of the class, CPython's ``Condition`` code over that object,
    whose waits are on controlled locks (``_thread.allocate_lock``)."""
    if isinstance(lock, StandIn):  # a lock made at import: its twin of this execution
        lock = lock._target()
    if lock is None or type(lock) is primitives.Lock:
        return rt.condition(lock)
    return None


class Condition(threading.Condition, metaclass=_Patched):
    _real = threading.Condition
    _made = staticmethod(_condition)
    _mine = staticmethod(lambda obj: type(obj) is primitives.Condition)


class Semaphore(threading.Semaphore, metaclass=_Patched):
    _real = threading.Semaphore
    _made = staticmethod(lambda rt, value=1: None if _privates_named() else rt.semaphore(value))
    _mine = staticmethod(lambda obj: type(obj) is primitives.Semaphore)


class BoundedSemaphore(threading.BoundedSemaphore, metaclass=_Patched):
    _real = threading.BoundedSemaphore
    _made = staticmethod(
        lambda rt, value=1: None if _privates_named() else primitives.Semaphore(rt._ex, value, bounded=True)
    )
    _mine = staticmethod(lambda obj: getattr(_semaphore_state(obj), "bound", None) is not None)


def _queue(rt: ControlledRuntime, maxsize: int = 0, *, lifo: bool) -> primitives.Queue | None:
    return None if FAITHFUL_QUEUES[0] else primitives.Queue(rt._ex, maxsize, lifo=lifo)


class Queue(queue.Queue, metaclass=_Patched):  # type: ignore[type-arg]
    _real = queue.Queue
    _made = staticmethod(lambda rt, maxsize=0: _queue(rt, maxsize, lifo=False))
    _mine = staticmethod(lambda obj: getattr(_queue_state(obj), "lifo", None) is not None and not obj.simple)


class LifoQueue(queue.LifoQueue, metaclass=_Patched):  # type: ignore[type-arg]
    _real = queue.LifoQueue
    _made = staticmethod(lambda rt, maxsize=0: _queue(rt, maxsize, lifo=True))
    _mine = staticmethod(lambda obj: getattr(_queue_state(obj), "lifo", False) is True)


class SimpleQueue(queue._PySimpleQueue, metaclass=_Patched):  # type: ignore[name-defined,misc]
    _real = queue.SimpleQueue
    _made = staticmethod(lambda rt: primitives.Queue(rt._ex, 0, simple=True))
    _mine = staticmethod(lambda obj: type(obj) is primitives.Queue and obj.simple)


# ``_thread``'s locks. The import machinery takes its module locks from ``_thread`` too: those
# are controlled only for an import the program's code asked for (``patch_imports``); the
# harness's and the libraries' own imports keep real ones.
_real_allocate_lock = _thread.allocate_lock


def allocate_lock() -> Any:
    """``_thread.allocate_lock()``: a controlled lock inside a controlled thread."""
    return _allocate(sys._getframe(1))


def allocate() -> Any:
    """``_thread.allocate()``, the old name of ``allocate_lock``."""
    return _allocate(sys._getframe(1))


def _allocate(caller: FrameType) -> Any:
    rt = _controlled()
    if rt is None or (
        patch_imports.by_the_importer(caller) and not patch_imports.asked_by_the_program(caller)
    ):
        return _real_allocate_lock()
    return rt.lock()


def _refuse_lock_type(*args: Any, **kwargs: Any) -> None:
    raise TypeError("cannot create '_thread.lock' instances")


class LockType(metaclass=_Patched):
    """``_thread.LockType``: neither callable nor subclassable, as in CPython; its objects are the
    locks ``allocate_lock`` and ``threading.Lock`` make (controlled ones too)."""

    _real = _thread.LockType
    _made = staticmethod(_refuse_lock_type)
    _mine = staticmethod(lambda obj: type(obj) is primitives.Lock and not obj._st.reentrant)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        raise TypeError("type '_thread.lock' is not an acceptable base type")


class RLock(threading._PyRLock, metaclass=_Patched):  # type: ignore[name-defined,misc]
    """``_thread.RLock`` (a subclass runs ``threading``'s Python RLock on controlled locks)."""

    _real = _thread.RLock
    _made = staticmethod(lambda rt: rt.rlock())
    _mine = staticmethod(lambda obj: type(obj) is primitives.Lock and obj._st.reentrant)


def _looked(real: property) -> property:
    """A ``threading.Barrier`` property that reads what the barrier's lock guards without it
    (``n_waiting``, ``broken``), CPython's code after one step that orders the read with the
    barrier's lock (``Condition._look``). Left a thread's local code, it was never reordered with
    the other threads' ``wait``: "exactly one waiting" was proved (session 38's fifth review)."""
    fget = real.fget
    assert fget is not None

    def look(barrier: threading.Barrier) -> Any:
        cond = getattr(barrier, "_cond", None)
        if type(cond) is primitives.Condition and _controlled() is not None:
            cond._look()
        return fget(barrier)

    return property(look, doc=real.__doc__)


# What each real class or function is replaced by while patched: (module or class, name, real,
# patched).
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    (threading, "Condition", threading.Condition, Condition),
    (threading, "Event", threading.Event, Event),
    (threading, "Semaphore", threading.Semaphore, Semaphore),
    (threading, "BoundedSemaphore", threading.BoundedSemaphore, BoundedSemaphore),
    (queue, "Queue", queue.Queue, Queue),
    (queue, "SimpleQueue", queue.SimpleQueue, SimpleQueue),
    (queue, "LifoQueue", queue.LifoQueue, LifoQueue),
    (_thread, "allocate_lock", _thread.allocate_lock, allocate_lock),
    (_thread, "get_ident", _thread.get_ident, patch_imports.get_ident),
    (_thread, "allocate", _thread.allocate, allocate),
    (threading, "_allocate_lock", _thread.allocate_lock, allocate_lock),
    (_thread, "LockType", _thread.LockType, LockType),
    (_thread, "RLock", _thread.RLock, RLock),
    (sys, "_current_frames", sys._current_frames, current_frames),
    *patch_imports.REPLACEMENTS,  # the order an import gives, for the race detector
    *(
        (threading.Barrier, name, vars(threading.Barrier)[name], _looked(vars(threading.Barrier)[name]))
        for name in ("n_waiting", "broken")
    ),
]

# C types no Python class can stand in for by re-basing: a program's subclass of one, defined
# before patching, is refused in a controlled thread (``patch._rebase``).
UNREBASABLE: tuple[type, ...] = (_thread._local, queue.SimpleQueue, _thread.RLock)


# --- which code uses a semaphore's or an event's condition -----------------------------------

# CPython's fields that the compiled semaphore and event have no counterpart for: a program that
# holds ``sem._cond`` and writes ``sem._value`` under it (a pool resetting its count) needs
# CPython's own code (``primitives._private`` refuses them by name)
_PRIVATE_READ = frozenset({"_cond"})
_PRIVATE_WRITTEN = frozenset({"_value", "_flag"})
_NAMING: dict[int, tuple[object, bool]] = {}  # id(module or code) -> (it, does its code name them)


def _privates_named() -> bool:
    """Does the code that makes this semaphore or event (the module of the first caller that is
    not the harness's: the program's, or the library's that made it) name ``x._cond`` or write
    ``x._value`` or ``x._flag`` (not ``self``'s)? Then it is an ordinary object of CPython's code
    on a controlled condition (a step or two more an operation), else the compiled one."""
    f: FrameType | None = sys._getframe(2)
    while f is not None and own_code.own(f.f_code.co_filename):
        f = f.f_back
    if f is None:
        return False
    module = sys.modules.get(str(f.f_globals.get("__name__")))
    # (code run by ``exec`` in a namespace of its own: that code alone)
    where: object = module if getattr(module, "__dict__", None) is f.f_globals else f.f_code
    known = _NAMING.get(id(where))
    if known is None or known[0] is not where:
        codes = _codes(where) if isinstance(where, ModuleType) else iter((f.f_code,))
        known = _NAMING[id(where)] = (where, any(_names_privates(code) for code in codes))
    return known[1]


def _names_privates(code: CodeType) -> bool:
    names = code.co_names
    if not (_PRIVATE_READ | _PRIVATE_WRITTEN).isdisjoint(names):
        before: dis.Instruction | None = None
        for instruction in dis.get_instructions(code):
            name, op = instruction.argval, instruction.opname
            of_self = before is not None and (before.opname, before.argval) == ("LOAD_FAST", "self")
            before = instruction
            if (
                op in _ATTRIBUTE_OPS
                and not of_self
                and (name in _PRIVATE_READ or (name in _PRIVATE_WRITTEN and op == "STORE_ATTR"))
            ):
                return True
    return any(_names_privates(const) for const in code.co_consts if isinstance(const, CodeType))


# --- which programs use a queue's internals -------------------------------------------------

# names only a queue's internals have; ``mutex`` and ``queue`` are common names of a program's own
# fields (``self.mutex``, ``self.queue = Queue()``), so they count only together, on one object
_OWN_NAMES = frozenset({"not_empty", "not_full", "all_tasks_done"})
_COMMON_NAMES = frozenset({"mutex", "queue"})
_ATTRIBUTE_OPS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR"})


def names_queue_internals(modules: Iterable[ModuleType]) -> bool:
    """Does the code of any of ``modules`` use a queue's internals: read ``x.not_empty``,
    ``x.not_full`` or ``x.all_tasks_done``, write ``x.unfinished_tasks``, or read both
    ``x.mutex`` and ``x.queue`` of one ``x`` in one function (``with q.mutex: q.queue.clear()``)?
    ``self``'s are not counted: a subclass of a queue runs CPython's code anyway. By name, so a
    class of the program's own with such fields counts too, which costs steps, never
    correctness; an access the scan misses meets the compiled queue's refusal."""
    return any(_names_internals(code) for module in modules for code in _codes(module))


def _names_internals(code: CodeType) -> bool:
    names = code.co_names
    if "unfinished_tasks" in names or not (_OWN_NAMES | _COMMON_NAMES).isdisjoint(names):
        common: dict[str, set[object]] = {}  # name -> the objects it was read from
        before: dis.Instruction | None = None
        for instruction in dis.get_instructions(code):
            name, op = instruction.argval, instruction.opname
            of = None if before is None else (before.opname, before.argval)
            before = instruction
            if op not in _ATTRIBUTE_OPS or of == ("LOAD_FAST", "self"):
                continue
            if name in _OWN_NAMES or (name == "unfinished_tasks" and op == "STORE_ATTR"):
                return True
            if name in _COMMON_NAMES:
                common.setdefault(name, set()).add(of)
        if len(common) == len(_COMMON_NAMES) and set.intersection(*common.values()):
            return True
    return any(_names_internals(const) for const in code.co_consts if isinstance(const, CodeType))


def _codes(module: ModuleType) -> Iterator[CodeType]:
    """The module's code: compiled from its source (every function and class body in it), or,
    where its loader cannot give it, its functions' and classes' code as they are now."""
    get_code: Callable[[str], CodeType | None] | None = getattr(module.__loader__, "get_code", None)
    try:
        code = get_code(module.__name__) if get_code is not None else None
    except (ImportError, OSError, SyntaxError):
        code = None
    if code is not None:
        yield code
        return
    for value in vars(module).values():
        members = vars(value).values() if isinstance(value, type) else (value,)
        for member in members:
            if isinstance(member, FunctionType) and member.__module__ == module.__name__:
                yield member.__code__
