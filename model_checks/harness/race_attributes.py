"""The race detector's attribute accesses (``races.RaceDetector`` derives from this): a
module's attribute is its global, a class's data is where its body holds it (and every class
before that one in the look-up, where a write would shadow it), an object's attribute is the key
of its ``__dict__``, a slot is the object's own, and a ``threading.local`` subclass's namespace
is each thread's own (its slots and class data are shared)."""

from __future__ import annotations

import dis
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeGuard, TypeVar, overload

from model_checks.harness import race_methods, race_paths
from model_checks.harness.declared import is_declared
from model_checks.harness.race_builtins import BUILTINS, label, rebound
from model_checks.harness.race_frames import address, stack_value
from model_checks.harness.race_sites import (
    ALL,
    CODE_TYPES,
    PER_THREAD,
    Where,
    class_path,
    harness_class,
    harness_owned,
    is_property,
)
from model_checks.harness.race_swaps import CLASS_READS, WHOLE, read_classes
from model_checks.harness.rt.heap_walk import _raw_getattr

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution

_STORE_ATTR, _EXTENDED_ARG = dis.opmap["STORE_ATTR"], dis.opmap["EXTENDED_ARG"]
MISSING = object()
_HEAP_TYPE = 1 << 9  # ``Py_TPFLAGS_HEAPTYPE``: a class made by a ``class`` statement


K = TypeVar("K")


@overload
def is_a(obj: object, kinds: type[K]) -> TypeGuard[K]: ...
@overload
def is_a(obj: object, kinds: tuple[type, ...]) -> bool: ...
def is_a(obj: object, kinds: type | tuple[type, ...]) -> bool:
    """``isinstance`` without asking ``obj``: where its type is none of ``kinds``, ``isinstance``
    asks the object its ``__class__``, which runs a program's ``__getattribute__``, here inside
    the detector's handler (seventh review, p095: one that took a lock deadlocked the check)."""
    return issubclass(type(obj), kinds)


class AttributeAccesses:
    """``obj.name`` read or written, as accesses of the detector's locations."""

    # the detector's: ``(tid, obj, key, write, frame, label, owner=None)``
    _access: Callable[..., None]
    code_seen: dict[tuple[int, int], tuple[int, int]]
    clocks: list[list[int]]
    ex: Execution

    def _watched_store(self) -> bool:
        """Does a store of the running thread that rebinds a method or a builtin make its look-ups
        reads from now on (``race_methods``, ``race_builtins``: the search starts again)? Not while
        the thread is alone (no other made yet): every look-up of another thread follows the store
        (program order, then the spawns), so none can race with it, and another thread's store is
        watched itself. (Session 47: a dataclass ``__init__`` storing a field whose class default is a
        function, run before any thread started, restarted every such search.)"""
        return len(self.ex.threads) > 1

    def _code_read(self, tid: int, entry: object, where: object) -> bool:
        """Is this read of code (a function, a class, a bound method) at the site ``entry`` from
        ``where`` to be recorded? Once per site and location in the thread's epoch (a read again
        in the same epoch is the same access: FastTrack's same-epoch read; the C filter lets it
        through alike), so a loop calling a module's function records one read a step. Always
        for no site (None)."""
        if entry is None:
            return True
        clocks = self.clocks
        stamp = (tid, clocks[tid][tid] if tid < len(clocks) and tid < len(clocks[tid]) else 0)
        key = (address(entry), address(where))  # (``id``: an audit event, ``race_frames``)
        if self.code_seen.get(key) == stamp:
            return False
        self.code_seen[key] = stamp
        return True

    def _value_read(self, tid: int, entry: object, where: object, value: object) -> bool:
        """Is the read of ``value`` (``MISSING``: none) from ``where`` (a module's dict, a cell) to be
        recorded? Not a module (a name ``import`` bound); code once a step (``_code_read``; session
        39: a handler, a ``partial`` or a bound method swapped by one thread while another calls
        it was proved race free); data always."""
        if value is MISSING or is_a(value, types.ModuleType):
            return False
        return not is_a(value, CODE_TYPES) or self._code_read(tid, entry, where)

    def _load_attr(self, tid: int, obj: object, name: str, frame: Where, entry: object = None) -> None:
        """``obj.name`` is read: a module's global (``_value_read``), a class's data (where its body
        defines it), a function's own attribute (``handler.enabled``), or an object's attribute
        (whatever its value); never a class's code (a method, a method's descriptor)."""
        if is_a(obj, types.ModuleType):
            g = obj.__dict__
            if self._value_read(tid, entry, g, g.get(name, MISSING)):
                self._access(tid, g, name, False, frame, label(g, name))
        elif is_a(obj, type):
            self._class_data(tid, obj, name, frame)
        elif is_a(obj, types.FunctionType):
            own = obj.__dict__
            if name in own:
                self._attr(tid, obj, name, False, frame, own)
        elif issubclass(type(obj), PER_THREAD):
            self._local_attr(tid, obj, name, False, frame)
        elif harness_owned(obj):
            self._program_field(tid, obj, name, False, frame)
        elif is_a(obj, types.CellType):
            if name == race_paths.CELL_CONTENTS:  # the closure's variable (``race_paths``)
                race_paths.cell_contents(self, tid, obj, False, frame)  # type: ignore[arg-type]
        elif not is_a(obj, CODE_TYPES):
            fields = _raw_getattr(obj, "__dict__", None)
            if fields is None and CLASS_READS[0] and self._code_read(tid, entry, obj):
                # its class may be stored (``race_swaps``); a field's key overlaps a class store
                self._class_of(tid, obj, False, frame)
            if fields is None and not _slot(type(obj), name):
                # no namespace of its own (a list, a slotted object): what it does not hold in a
                # slot is its class's, and a method taken to call later (``add = events.append``)
                # reads nothing of the object (session 38's review: a false race with the call,
                # made under a lock)
                self._class_data(tid, type(obj), name, frame)
                return
            if isinstance(fields, dict) and name not in fields:
                if is_property(type(obj), name):
                    return  # its getter's own accesses are traced
                # not the object's own yet: its class's data (``self.limit`` reading
                # ``Config.limit``), and the object's too, which a write would make its own
                self._class_data(tid, type(obj), name, frame)
            self._attr(tid, obj, name, False, frame, fields)

    def _load_method(self, tid: int, obj: object, name: str, frame: Where, entry: object) -> None:
        """``obj.name(...)``: a read of ``obj.name`` where ``method_read`` says so; else, once a
        step: where the method was rebound (``race_methods``), a read of it as of data, and once a
        program stores an object's class (``race_swaps``), a read of ``obj``'s class."""
        if method_read(obj, name):
            self._load_attr(tid, obj, name, frame, entry)
            return
        rebound = race_methods.path(type(obj), name) is not None
        if (rebound or CLASS_READS[0]) and self._code_read(tid, entry, obj):
            if rebound:
                self._load_attr(tid, obj, name, frame, entry)
            if CLASS_READS[0]:
                self._class_of(tid, obj, False, frame)

    def _class_of(self, tid: int, obj: object, write: bool, frame: Where) -> None:
        """``obj``'s class read (a method looked up in it) or written (``obj.__class__ = Other``):
        the key ``__class__`` of its fields, which writing them whole overlaps, or of a slotted
        object itself."""
        cls = type(obj)
        if not cls.__flags__ & _HEAP_TYPE or issubclass(cls, PER_THREAD) or harness_owned(obj):
            return  # (only a class defined in Python may be swapped for another)
        fields = _raw_getattr(obj, "__dict__", None)
        if isinstance(fields, dict):
            self._access(tid, fields, "__class__", write, frame, "", type(obj), holder=obj)
        else:
            self._access(tid, obj, "__class__", write, frame, "")

    def _whole(self, tid: int, obj: object, name: str, frame: Where, fields: object, new: object) -> None:
        """``obj.__dict__ = new`` or ``obj.__class__ = new`` (``new``: MISSING at a ``STORE_ATTR``
        about to run, where it is on the stack; None for a delete): every field of ``obj`` is
        written, before the store (its fields whole) and, for a new ``__dict__``, after it (the
        new dict whole); a class store writes the class every method look-up reads."""
        if new is MISSING:
            new = _stored(frame)
        owner = type(obj)
        label = f"{owner.__name__}.{name}"  # the report's words for the fields written whole
        if isinstance(fields, dict):
            self._access(tid, fields, ALL, True, frame, label, owner, holder=obj)
        if name == "__class__":
            read_classes()  # (on already, unless the store was made where no scan looked)
            if not isinstance(fields, dict):
                self._class_of(tid, obj, True, frame)
        elif isinstance(new, dict) and new is not fields:
            self._access(tid, new, ALL, True, frame, label, owner)

    def _program_field(self, tid: int, obj: object, name: str, write: bool, frame: Where) -> None:
        """``obj.name`` of a harness object that stands for one of ``threading``'s (patch mode's
        ``Thread``) where ``name`` is the program's own (``t.tag = "x"``, read by the thread as
        ``current_thread().tag``; session 39: proved race free): a field of the object, as on any
        other. The harness's own fields (a name its class's code uses) are not the program's."""
        fields = _raw_getattr(obj, "__dict__", None)
        if isinstance(fields, dict) and name not in harness_names(type(obj)):
            self._attr(tid, obj, name, write, frame, fields)

    def _local_attr(self, tid: int, obj: object, name: str, write: bool, frame: Where) -> None:
        """``obj.name`` of a program's ``threading.local`` subclass: a slot is one per object,
        shared by every thread; the class's data is shared (read here, where the thread's own
        namespace may shadow it); the rest is the thread's own. The namespace is not looked at:
        a thread's first touch of it runs ``__init__``, which must run as the program's code, not
        inside this handler, untraced."""
        cls = type(obj)
        if _slot(cls, name):
            self._attr(tid, obj, name, write, frame)
        elif not write and not harness_class(cls):
            self._class_data(tid, cls, name, frame)

    def _class_data(self, tid: int, cls: type, name: str, frame: Where) -> None:
        """``cls.name`` is read where it is data: the class whose body holds it, and each class
        before that one in ``cls``'s method resolution order (a write there would shadow it)."""
        for klass in class_path(cls, name) or race_methods.path(cls, name) or ():
            if not harness_class(klass):
                self._attr(tid, klass, name, False, frame)

    def _store_attr(self, tid: int, obj: object, name: str, frame: Where, new: object = MISSING) -> None:
        """``obj.name`` is written (or deleted): a module's attribute is its global, the location
        its own code writes with ``global``; ``obj.__dict__`` and ``obj.__class__`` write the
        object whole (``_whole``; ``new``: the value stored, for ``setattr``, or, for a patch, the
        one it replaces or puts back); a method rebound has its look-ups read (``race_methods``)."""
        if is_a(obj, types.ModuleType):
            g = obj.__dict__
            if g is BUILTINS and self._watched_store():  # its look-ups by name are reads from now on
                rebound(name, frame)
            self._access(tid, g, name, True, frame, label(g, name))
        elif is_a(obj, type):
            if not harness_class(obj):
                if self._watched_store():  # (a method's look-ups read it)
                    stored = _stored(frame) if new is MISSING else new
                    race_methods.rebinding(obj, name, frame, _held(obj, name), stored)
                self._attr(tid, obj, name, True, frame)
        elif issubclass(type(obj), PER_THREAD):
            self._local_attr(tid, obj, name, True, frame)
        elif harness_owned(obj):
            self._program_field(tid, obj, name, True, frame)
        elif is_a(obj, types.CellType):
            if name == race_paths.CELL_CONTENTS:
                race_paths.cell_contents(self, tid, obj, True, frame)  # type: ignore[arg-type]
        else:
            fields = _raw_getattr(obj, "__dict__", None)
            if name in WHOLE:
                self._whole(tid, obj, name, frame, fields, new)
                return
            if fields is None and CLASS_READS[0]:  # a slot's store looks its class up
                self._class_of(tid, obj, False, frame)
            if isinstance(fields, dict) and name not in fields and is_property(type(obj), name):
                return  # its setter's own accesses are traced
            if isinstance(fields, dict) and self._watched_store():  # (shadowing a method: ``svc.fetch = f``)
                race_methods.rebinding(type(obj), name, frame, _held(type(obj), name), None)
            self._attr(tid, obj, name, True, frame, fields)

    def _attr(
        self, tid: int, obj: object, name: str, write: bool, frame: Where, fields: object = None
    ) -> None:
        """``obj.name``. An object's attribute is the key ``name`` of its ``__dict__`` (``fields``):
        one location, whether the program reaches it as ``obj.name``, ``vars(obj)[name]`` or a copy
        that reads the dict whole (``copy.copy(obj)``, ``obj.__dict__.update(...)``: session 37,
        each proved race free before, a location of its own)."""
        if is_declared(type(obj), name):
            return  # a declared GIL-atomic field: a scheduling point of its own (declared.py)
        if isinstance(fields, dict):
            # named by the object's class (``Box.n``): a report's words keep the class, not the
            # object, alive (its ``__del__`` runs when its last reference goes), and its fields
            # are held through it (``race_shadow``)
            self._access(tid, fields, name, write, frame, "", type(obj), holder=obj)
        else:  # a class's data, a slot
            self._access(tid, obj, name, write, frame, "")

    def _name(self, tid: int, frame: types.FrameType, entry: tuple[int, object], write: bool) -> None:
        """``LOAD_NAME``/``STORE_NAME``: a class body's or ``exec``'s name. Its own namespace (a class
        being made, ``exec``'s locals) is the frame's; else the name is the module's global
        (``exec(src, globals())``, a class body reading a global). A module's own body, run by its
        import, is not looked at (the import orders it)."""
        name = str(entry[1])
        code, g = frame.f_code, frame.f_globals
        if code.co_name == "<module>" and g.get("__file__") == code.co_filename:
            return
        local = frame.f_locals
        if local is not g and (write or name in local):
            return
        if write:
            self._access(tid, g, name, True, frame, f"global {name}")
        elif self._value_read(tid, entry, g, g.get(name, MISSING)):
            self._access(tid, g, name, False, frame, f"global {name}")


def method_read(obj: object, name: str) -> bool:
    """Is ``obj.name(...)`` (``LOAD_METHOD``) a read of ``obj``? A module's, a class's or a
    function's name is judged as an attribute (``_load_attr``); an object's method found in its
    class as code (``self.run()``, ``xs.append``) is none; what its class does not hold as code is
    (``svc.handler()``: a callable kept in the object's fields, or a slot). The C filter's
    ``method_worth``."""
    if is_a(obj, (types.ModuleType, type, types.FunctionType)):
        return True
    if is_a(obj, CODE_TYPES):
        return False
    for klass in type(obj).__mro__:
        found = klass.__dict__.get(name, MISSING)
        if found is not MISSING:
            return not is_a(found, CODE_TYPES) or is_a(found, types.MemberDescriptorType)
    return True


def _stored(frame: Where) -> object:
    """The value a ``STORE_ATTR`` about to run at ``frame`` stores (None for a ``DELETE_ATTR``)."""
    code, at = frame.f_code.co_code, frame.f_lasti
    while code[at] == _EXTENDED_ARG:  # (the site of a prefixed store is its prefix's)
        at += 2
    return stack_value(frame, 2) if code[at] == _STORE_ATTR else None  # type: ignore[arg-type]


def _held(cls: type, name: str) -> object:
    """What a look-up of ``cls.name`` finds in ``cls``'s method resolution order (``MISSING``: none)."""
    for klass in cls.__mro__:
        found = klass.__dict__.get(name, MISSING)
        if found is not MISSING:
            return found
    return MISSING


_HARNESS_NAMES: dict[type, frozenset[str]] = {}


def harness_names(cls: type) -> frozenset[str]:
    """The names a harness class (and its bases) defines or its code uses: its own fields (``_rt``,
    ``daemon``), methods and properties; what else a program stores on its object is the
    program's."""
    names = _HARNESS_NAMES.get(cls)
    if names is None:
        found: set[str] = set()
        codes: list[types.CodeType] = []
        for klass in cls.__mro__:
            for key, value in vars(klass).items():
                found.add(key)
                for fn in (value, getattr(value, "fget", None), getattr(value, "fset", None)):
                    fn = getattr(fn, "__func__", fn)
                    if isinstance(fn, types.FunctionType):
                        codes.append(fn.__code__)
        while codes:
            code = codes.pop()
            found.update(code.co_names)
            codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        names = _HARNESS_NAMES[cls] = frozenset(found)
    return names


def _slot(cls: type, name: str) -> bool:
    """Is ``name`` a slot of ``cls`` (a member descriptor in its method resolution order)? A
    ``threading.local`` subclass's slots are one per object, shared by every thread."""
    for klass in cls.__mro__:
        value = klass.__dict__.get(name)
        if value is not None:
            return is_a(value, types.MemberDescriptorType)
    return False
