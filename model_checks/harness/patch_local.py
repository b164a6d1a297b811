"""``threading.local`` in patch mode: attributes of one controlled thread, not of the OS thread.

The greenlet back end runs every controlled thread on one OS thread, so the real
``threading.local`` would give them all one namespace, and the race detector would see every
thread writing the same attribute. Here each controlled thread of an execution has its own
namespace, as each real thread has: made on the thread's first access, by calling the class's
``__init__`` with the arguments of its creation (as ``threading.local`` does for a subclass).

An instance's ``__dict__`` is the namespace of the thread touching it: every attribute access
first puts that thread's namespace in place. A controlled thread is switched only at a
controlled operation, never inside an attribute access, so no other thread can see it in
between. Namespaces belong to one execution: the next execution starts with none but the
one the program began with (``initial``: what the creating OS thread had set, which the
program's main thread sees, as at import time).

The class lives in the harness, so the race detector does not track its attributes
(``race_sites.harness_owned``, which also takes its subclasses).

An object of a program's subclass of the real ``threading.local`` made at import (``ctx = Ctx()``
at a module's top level) cannot be stood in for (its class's layout is the C type's, and other
objects may hold it): ``per_thread`` makes that very object one namespace per controlled thread
(``_Homes``), by giving each controlled thread its own entry in the OS thread's dict, where the
C type keeps the namespace of each thread. One made by a controlled thread while patched (its
class defined before: at the top of the explored file, review 8's r033) is made so too
(``made_in_a_thread``), the namespace CPython made being its maker's.
"""

from __future__ import annotations

import _thread
import ctypes
import gc
import weakref
from collections.abc import Callable
from typing import Any

_real_get_ident = _thread.get_ident

# (execution, controlled thread id) of the controlled thread running here, or None: set by
# ``patch.py``, which knows the running execution (a function, so that this module imports none)
running: list[Callable[[], tuple[object, int] | None]] = [lambda: None]


class _Namespaces:
    """One ``local``'s namespaces: by controlled thread for the running execution, by OS
    thread outside controlled threads."""

    __slots__ = ("args", "execution", "initial", "of_os_thread", "of_thread")

    def __init__(self, args: tuple[tuple[Any, ...], dict[str, Any]], initial: dict[str, Any] | None) -> None:
        self.args = args
        self.initial = initial  # what the program's main thread starts with (see the docstring)
        self.execution: object = None
        self.of_thread: dict[int, dict[str, Any]] = {}
        self.of_os_thread: dict[int, dict[str, Any]] = {}


class local:
    """``threading.local`` whose namespaces are per controlled thread (module docstring)."""

    __slots__ = ("__dict__", "__weakref__", "_local__spaces")

    def __new__(cls, *args: Any, **kwargs: Any) -> local:
        if (args or kwargs) and cls.__init__ is object.__init__:
            raise TypeError("Initialization arguments are not supported")
        self = object.__new__(cls)
        _LOCALS.add(self)
        spaces = _Namespaces((args, kwargs), None)
        object.__setattr__(self, "_local__spaces", spaces)
        # the creating thread's namespace is made now; ``__init__`` then runs in it as usual
        object.__setattr__(self, "__dict__", _namespace(spaces, self, fresh=False))
        return self

    def __getattribute__(self, name: str) -> Any:
        if name == "__class__":
            # ``isinstance`` asks it (the race detector's handler too): not a thread's first touch,
            # which runs ``__init__`` and must run as the program's code, traced
            return type(self)
        _enter(self)
        return object.__getattribute__(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "__dict__":
            raise AttributeError(f"{type(self).__name__!r} object attribute '__dict__' is read-only")
        _enter(self)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name == "__dict__":
            raise AttributeError(f"{type(self).__name__!r} object attribute '__dict__' is read-only")
        _enter(self)
        object.__delattr__(self, name)

    def __reduce_ex__(self, protocol: Any) -> Any:
        # CPython's cannot be copied or pickled; a copy of this one (``patch_state`` copying a
        # dict that holds it) would be another object, with namespaces of its own
        name = "_thread._local" if type(self) is local else type(self).__name__
        raise TypeError(f"cannot pickle {name!r} object")


def replacing(real: object) -> local:
    """A ``local`` standing in for a real ``threading.local`` made before patching (a module's
    ``_tls = threading.local()``, or one its globals reach: ``patch_reach``): its namespaces
    start with what ``real`` holds for this OS thread, which is what the program's main thread
    reads. One stand-in for one real object, wherever it is found."""
    made = _REPLACED.get(real)
    if made is None:
        made = _REPLACED[real] = local()
    spaces: _Namespaces = object.__getattribute__(made, "_local__spaces")
    spaces.initial = dict(getattr(real, "__dict__", {}))
    mine = _namespace(spaces, made, fresh=False)  # (this OS thread's: patching runs outside any)
    object.__setattr__(made, "__dict__", mine)
    mine.clear()
    mine.update(spaces.initial)
    return made


_REPLACED: weakref.WeakKeyDictionary[object, local] = weakref.WeakKeyDictionary()
_LOCALS: weakref.WeakSet[local] = weakref.WeakSet()  # every stand-in made (``thread_ended``)


def thread_ended(race: object) -> None:
    """The running controlled thread's code is done (not failed): its namespaces go, as CPython
    clears a thread's state (where ``threading.local`` keeps them) before ``join`` returns; what
    they held is freed now, in this thread (review 13, A4: a connection kept in a thread-local was
    never closed, and a pool slot its ``__del__`` gave back never came back: a false deadlock).
    Then what only the race detector (``race``, None when off) holds of what it dropped."""
    _drop_namespaces()
    ended = getattr(race, "thread_ended", None)
    if ended is not None:
        ended()


def collected(phase: str, info: dict[str, int]) -> None:
    """A full collection (``gc.collect()``) began in a controlled thread's step: that step is
    dependent with every other (``Execution.collected``; review 13, F3: a collection holding the
    lock its garbage's ``__del__`` needs was never run after the other thread made the garbage)."""
    if phase == "start" and info["generation"] == 2:
        where = running[0]()
        if where is not None:
            where[0].collected = True  # type: ignore[attr-defined]


# (for the process: a change of ``gc.callbacks`` while patched is a change of the process's state)
gc.callbacks.append(collected)


def _drop_namespaces() -> None:
    if not _HOMES and not _LOCALS:
        return
    where = running[0]()
    if where is None:
        return
    execution, tid = where
    dropped: list[object] = []  # (freed together, once no namespace refers to the thread's)
    for obj in list(_LOCALS):
        spaces: _Namespaces = object.__getattribute__(obj, "_local__spaces")
        if spaces.execution is execution and tid in spaces.of_thread:
            mine = spaces.of_thread.pop(tid)
            dropped.append(mine)
            if object.__getattribute__(obj, "__dict__") is mine:  # (entered again at its next touch)
                object.__setattr__(obj, "__dict__", {})
    for homes in list(_HOMES.values()):
        dropped.extend(homes.leave(execution, tid))
    dropped.clear()


def _enter(self: local) -> None:
    spaces: _Namespaces = object.__getattribute__(self, "_local__spaces")
    object.__setattr__(self, "__dict__", _namespace(spaces, self, fresh=True))


def _namespace(spaces: _Namespaces, self: local, *, fresh: bool) -> dict[str, Any]:
    """The namespace of the thread running now; a new one is made (and, if ``fresh``, the
    class's ``__init__`` run in it) on the thread's first access."""
    where = running[0]()
    if where is None:
        table, key = spaces.of_os_thread, _real_get_ident()
    else:
        execution, key = where
        if spaces.execution is not execution:  # a new execution: no thread has touched it yet
            spaces.execution, spaces.of_thread = execution, {}
        table = spaces.of_thread
    found = table.get(key)
    if found is not None:
        return found
    main = where is not None and key == 0
    made: dict[str, Any] = dict(spaces.initial) if main and spaces.initial is not None else {}
    table[key] = made
    if fresh:
        object.__setattr__(self, "__dict__", made)
        cls = type(self)
        if cls.__init__ is not object.__init__:
            args, kwargs = spaces.args
            cls.__init__(self, *args, **kwargs)
    return made


# --- a real ``threading.local`` subclass's object made at import ---------------------------------
#
# CPython 3.11's ``_thread._local`` keeps each thread's namespace under the key
# ``thread.local.<address>`` of its thread state's dict (``PyThreadState_GetDict``): an entry
# holding a dummy object whose namespace it is, made (and ``__init__`` run in it with the
# constructor's arguments) on the thread's first access when the key is missing. The controlled
# threads share one OS thread, so one entry: ``_Homes`` puts the entry of the controlled thread
# touching the object in place first, as ``local._enter`` does with ``__dict__``.

_get_dict = ctypes.pythonapi.PyThreadState_GetDict
_get_dict.restype, _get_dict.argtypes = ctypes.py_object, []
_incref = ctypes.pythonapi.Py_IncRef
_incref.restype, _incref.argtypes = None, [ctypes.py_object]
_OS = -1  # the OS thread, outside controlled threads: the program's main thread, as at import


def _thread_dict() -> dict[str, object]:
    found: dict[str, object] = _get_dict()
    _incref(found)  # a borrowed reference, which ctypes takes for a new one and releases
    return found


class _Homes:
    """Where one object's namespaces are: the entry of each controlled thread of the running
    execution; the main thread's is the one the import made (``home``), put back as it was then
    (``initial``) when an execution starts; the OS thread's is that one too."""

    __slots__ = ("dummies", "execution", "holder", "home", "home_dict", "initial", "key", "owners")

    def __init__(self, obj: object, key: str, home: object, owner: int = 0) -> None:
        self.key = key
        self.home = home
        getter: Any = _thread._local.__getattribute__
        self.home_dict: dict[str, Any] = getter(obj, "__dict__")
        self.initial = dict(self.home_dict)
        self.execution: object = None
        self.dummies: dict[int, object] = {}
        self.holder: int | None = _OS  # whose entry the OS thread's dict holds now
        self.owners = (_OS, owner)  # whose the home entry is (the thread that made the object)

    def enter(self) -> None:
        """Put the entry of the thread running now in place."""
        where = running[0]()
        if where is None:
            who = _OS
        else:
            execution, who = where
            if execution is not self.execution:  # no thread of it has touched the object yet
                self.execution, self.dummies, self.holder = execution, {}, None
                self.home_dict.clear()
                self.home_dict.update(self.initial)
        if who == self.holder:
            return
        tdict = _thread_dict()
        if self.holder is not None and self.holder not in self.owners:
            held = tdict.get(self.key)
            if held is not None:
                self.dummies[self.holder] = held
        mine = self.home if who in self.owners else self.dummies.get(who)
        if mine is None:
            tdict.pop(self.key, None)  # its first touch makes its namespace, running ``__init__``
        else:
            tdict[self.key] = mine
        self.holder = who

    def leave(self, execution: object, who: int) -> list[object]:
        """Thread ``who`` of ``execution`` ended: its entry, to drop (its maker's stays home)."""
        if execution is not self.execution or who in self.owners:
            return []
        mine = self.dummies.pop(who, None)
        if self.holder == who:
            mine = _thread_dict().pop(self.key, None)
            self.holder = None
        return [] if mine is None else [mine]

    def restore(self) -> None:
        """Patching ended: the OS thread's entry is the import's, as the import left it."""
        self.execution, self.dummies = None, {}
        _thread_dict()[self.key] = self.home
        self.holder = _OS
        self.home_dict.clear()
        self.home_dict.update(self.initial)


_HOMES: dict[int, _Homes] = {}  # id(object) -> its namespaces (while patched)
_HOOKED: dict[type, int] = {}  # class -> how many of its objects are tracked


def per_thread(obj: object) -> Callable[[], None] | None:
    """Make ``obj``, an object of a program's subclass of the real ``threading.local`` made
    before patching, one namespace per controlled thread (the module docstring); what undoes it,
    or None when its namespace is not where CPython 3.11 keeps it (another version: unchanged)."""
    cls = type(obj)
    if not isinstance(obj, _thread._local) or cls is _thread._local or id(obj) in _HOMES:
        return None
    key = f"thread.local.{id(obj):#x}"
    home = _thread_dict().get(key)
    if home is None:  # made in another OS thread, or not 3.11's layout
        return None
    homes = _HOMES[id(obj)] = _Homes(obj, key, home)
    undo_class = _hook(cls)

    def undo() -> None:
        homes.restore()
        del _HOMES[id(obj)]
        undo_class()

    return undo


def made_in_a_thread(obj: object) -> None:
    """``obj``, of a program's subclass of the real ``threading.local`` defined before patching,
    made now by a controlled thread (the greenlets' one OS thread): one namespace per controlled
    thread, the one CPython made (where ``__init__`` runs next) its maker's (review 8, r033: it
    was refused, and ``lanecheck explore`` gave no way to define the class while patched)."""
    where = running[0]()
    key = f"thread.local.{id(obj):#x}"
    home = _thread_dict().get(key)
    if where is None or home is None:  # (not 3.11's layout: left as CPython made it)
        return
    execution, maker = where
    homes = _HOMES[id(obj)] = _Homes(obj, key, home, maker)
    homes.execution, homes.holder = execution, maker
    undo_class = _hook(type(obj))
    ends = _MADE[id(obj)] = weakref.finalize(obj, _forget_made, id(obj), undo_class)
    ends.atexit = False


def _forget_made(ident: int, undo_class: Callable[[], None]) -> None:
    _HOMES.pop(ident, None)
    _MADE.pop(ident, None)
    undo_class()


def forget_made() -> None:
    """Patching ended: the objects made while patched are CPython's again (their class's hooks
    go, their maker's entry stays in the OS thread's dict)."""
    for ends in list(_MADE.values()):
        ends()


_MADE: dict[int, weakref.finalize[Any, Any]] = {}  # id(object made while patched) -> what forgets it


def made_per_thread(obj: object) -> bool:
    """Has ``obj``, a real ``threading.local`` made before patching, been stood in for
    (``replacing``) or made per controlled thread (``per_thread``)?"""
    return obj in _REPLACED or id(obj) in _HOMES


def _enter_real(self: object) -> None:
    homes = _HOMES.get(id(self))
    if homes is not None:
        homes.enter()


def _hook(cls: type) -> Callable[[], None]:
    """``cls``'s attribute access puts the entry of the thread touching its object in place."""
    names = ("__getattribute__", "__setattr__", "__delattr__")
    if _HOOKED.get(cls, 0) == 0:
        own = {name: vars(cls)[name] for name in names if name in vars(cls)}
        get, set_, delete = (getattr(cls, name) for name in names)

        def __getattribute__(self: object, name: str) -> Any:
            if name == "__class__":  # ``isinstance`` asks it: no thread's first touch
                return type(self)
            _enter_real(self)
            return get(self, name)

        def __setattr__(self: object, name: str, value: Any) -> None:
            _enter_real(self)
            set_(self, name, value)

        def __delattr__(self: object, name: str) -> None:
            _enter_real(self)
            delete(self, name)

        for name, hook in zip(names, (__getattribute__, __setattr__, __delattr__), strict=True):
            setattr(cls, name, hook)
        _OWN_HOOKS[cls] = own
    _HOOKED[cls] = _HOOKED.get(cls, 0) + 1

    def undo() -> None:
        _HOOKED[cls] -= 1
        if _HOOKED[cls] == 0:
            del _HOOKED[cls]
            own = _OWN_HOOKS.pop(cls)
            for name in names:
                if name in own:
                    setattr(cls, name, own[name])
                else:
                    delattr(cls, name)

    return undo


_OWN_HOOKS: dict[type, dict[str, Any]] = {}  # class -> the attribute hooks it defined itself


__all__ = ["collected", "local", "per_thread", "replacing", "running", "thread_ended"]
