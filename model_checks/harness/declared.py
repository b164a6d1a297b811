"""Declared GIL-atomic fields: deliberate unlocked accesses, made scheduling points.

Some code reads or writes a plain attribute without a lock on purpose (a flag read by a Dekker-
style protocol, a field read under one lock and written under another), relying on CPython
making one attribute load or store atomic. The race detector (``races.py``) would report each
such access; declaring the field says "this is intended" and, in exchange, the harness
interleaves it: while race detection runs, a declared field of the class is replaced by a data
descriptor whose every load and store, in a controlled thread, is first a scheduling point on an
atomic cell of its own (``load`` is a pure read, ``store`` a write, as for ``rt.atomic_int``).
So exploration stays complete for the declared accesses instead of silently skipping them.

``declare_atomic(cls_or_"module:Qualname", "attribute", reason)``; a string names a class
without importing it (each design's declarations live in its folder's ``declared.py``).
"""

from __future__ import annotations

import sys
from collections import deque
from typing import Any

from model_checks.harness.patch import current_runtime
from model_checks.harness.rt.objects import AtomicState, Op

_DECLARED: dict[tuple[str, str], str] = {}  # ("module:Qualname", attribute) -> why it is atomic
_CACHE: dict[tuple[type, str], bool] = {}


def _name(cls: type | str) -> str:
    return cls if isinstance(cls, str) else f"{cls.__module__}:{cls.__qualname__}"


def declare_atomic(cls: type | str, attribute: str, reason: str = "") -> None:
    """Declare ``cls.attribute`` a deliberate GIL-atomic field (see the module docstring)."""
    if not attribute.isidentifier():
        raise ValueError(f"declare_atomic: {attribute!r} is not an attribute name")
    name = _name(cls)
    if ":" not in name:
        raise ValueError(f"declare_atomic: name the class as 'module:Qualname', not {name!r}")
    _DECLARED[(name, attribute)] = reason
    _CACHE.clear()


def undeclare_atomic(cls: type | str, attribute: str) -> None:
    _DECLARED.pop((_name(cls), attribute), None)
    _CACHE.clear()


def declared() -> dict[tuple[str, str], str]:
    """Every declaration: (class, attribute) -> reason."""
    return dict(_DECLARED)


def is_declared(cls: type, attribute: str) -> bool:
    """Is ``attribute`` declared atomic on ``cls`` or one of its bases?"""
    key = (cls, attribute)
    hit = _CACHE.get(key)
    if hit is None:
        hit = _CACHE[key] = any((_name(base), attribute) in _DECLARED for base in cls.__mro__)
    return hit


def _resolve(name: str) -> type | None:
    module, _, qualname = name.partition(":")
    obj: Any = sys.modules.get(module)  # only classes already imported: importing has effects
    if obj is None:  # (not imported: no look-up of an attribute of None, which raises inside)
        return None
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) else None


class _Cells:
    """The atomic cell of each (object, field) in the current execution."""

    def __init__(self) -> None:
        self.ex: object = None
        self.cells: dict[tuple[int, str], AtomicState] = {}
        self.alive: list[object] = []


_CELLS = _Cells()


_MUTABLE = (dict, list, set, deque, bytearray)


def _point(obj: object, attribute: str, kind: str, value: object = None) -> None:
    rt = current_runtime()
    if rt is None:
        return  # the scheduler, an invariant, a final check, an uncontrolled thread: plain access
    ex = rt._ex
    if _CELLS.ex is not ex:
        _CELLS.ex, _CELLS.cells, _CELLS.alive = ex, {}, []
    key = (id(obj), attribute)
    cell = _CELLS.cells.get(key)
    if cell is None:
        label = f"{type(obj).__name__}.{attribute}"
        made = ex.new_object(lambda oid: AtomicState(oid, label, None, by_identity=True))
        assert isinstance(made, AtomicState)
        cell = _CELLS.cells[key] = made
        _CELLS.alive.append(obj)
    if isinstance(value, _MUTABLE):
        # loading a container to change it (``self._events.append(e)``): the step goes on to use
        # its content, so the point must be ordered with every other load of the field (a store)
        kind = "store"
        if ex.race is not None:
            ex.race.exempt_container(value)  # type: ignore[attr-defined]
    ex.perform(Op(kind, cell, (value,) if kind == "store" else (), read=kind == "load"))


class _AtomicField:
    """The descriptor standing for a declared field while race detection runs."""

    def __init__(self, attribute: str, original: Any, has_original: bool) -> None:
        self.attribute = attribute
        self.original = original
        self.has_original = has_original
        # a slot or property: delegate to it; otherwise the value lives in the instance dict
        self.delegate = hasattr(type(original), "__set__")

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self.original if self.has_original else self
        value = self._value(obj, owner)
        _point(obj, self.attribute, "load", value)
        # read again: the point may have let other threads run, and one may have stored
        return self._value(obj, owner)

    def _value(self, obj: object, owner: type | None) -> Any:
        if self.delegate:
            return self.original.__get__(obj, owner)
        try:
            return obj.__dict__[self.attribute]
        except KeyError:
            if self.has_original:
                return self.original
            raise AttributeError(self.attribute) from None

    def __set__(self, obj: object, value: Any) -> None:
        _point(obj, self.attribute, "store", value)
        if self.delegate:
            self.original.__set__(obj, value)
        else:
            obj.__dict__[self.attribute] = value

    def __delete__(self, obj: object) -> None:
        _point(obj, self.attribute, "store")
        if self.delegate:
            self.original.__delete__(obj)
        else:
            del obj.__dict__[self.attribute]


Installed = list[tuple[type, str, Any, bool]]


def install_points(undo: Installed) -> None:
    """Install the descriptors of every declared field of an imported class, each noted in
    ``undo`` as it is (for ``remove_points``, called however this ends). Two calls, not a
    context manager: one cost an execution about 4,000 instructions (session 46)."""
    for name, attribute in list(_DECLARED):
        cls = _resolve(name)
        if cls is None or isinstance(cls.__dict__.get(attribute), _AtomicField):
            continue
        has = attribute in cls.__dict__
        original = cls.__dict__.get(attribute)
        setattr(cls, attribute, _AtomicField(attribute, original, has))
        undo.append((cls, attribute, original, has))


def remove_points(undo: Installed) -> None:
    """The descriptors ``install_points`` noted in ``undo`` removed, the last first."""
    for cls, attribute, original, has in reversed(undo):
        if has:
            setattr(cls, attribute, original)
        else:
            delattr(cls, attribute)


__all__ = [
    "declare_atomic",
    "declared",
    "install_points",
    "is_declared",
    "remove_points",
    "undeclare_atomic",
]
