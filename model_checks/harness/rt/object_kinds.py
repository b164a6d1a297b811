"""How the state fingerprint tells kinds of objects apart, the same for its walk
(``heap_walk.py``) and its encoder (``reducers.py``): long-lived objects named by a number
(atoms), classes whose instance state Python shows, the C types read whole or refused, and so
the kind of object each type is (``_kind``)."""

from __future__ import annotations

import collections
import logging
import operator
import re
import types
from collections import deque
from collections.abc import Callable
from typing import Any

from model_checks.harness.rt.native import NATIVE
from model_checks.harness.rt.per_type import PerType

# objects of the harness that stand for the whole execution: atoms, never walked
_OPAQUE_HARNESS = frozenset(
    {
        "Execution",
        "ControlledRuntime",
        "GreenletBackend",
        "ThreadBackend",
        "ThreadInfo",
        "RaceDetector",
        "Hooks",
    }
)


class Opaque(Exception):
    """Something whose state the fingerprint cannot see: refuse the whole state."""


# Long-lived objects (code, classes, module-level functions) are named by a small number; the
# object is kept alive here so that its id is never reused for another.
_ATOMS: dict[int, int] = {}
_KEEP: list[object] = []


def _atom(x: object) -> int:
    n = _ATOMS.get(id(x))
    if n is None:
        n = _ATOMS[id(x)] = len(_KEEP)
        _KEEP.append(x)
    return n


_PY_CLASS: dict[type, bool] = {}
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE
_MANAGED_DICT = 1 << 4  # Py_TPFLAGS_MANAGED_DICT (3.11)
_BUILTIN_BASES = (list, dict, set, frozenset, deque, tuple, int, str, bytes, float, BaseException)


def _python_class(cls: type) -> bool:
    """Is every class of ``cls``'s MRO one whose instance state Python shows (defined in Python,
    compiled by mypyc, or a container the walk reads)?"""
    known = _PY_CLASS.get(cls)
    if known is not None:
        return known
    ok = True
    for c in cls.__mro__:
        if c is object or c in _BUILTIN_BASES or hasattr(c, "__mypyc_attrs__"):
            continue
        if not _python_layout(c):
            ok = False
            break
    _PY_CLASS[cls] = ok
    return ok


def _python_layout(c: type) -> bool:
    """Does ``c`` add to its base's instance layout only what a class statement adds (its
    ``__slots__``, a weak-reference slot, a dict)? A C type — static like ``functools.partial``
    or an extension's heap type like ``_random.Random`` — adds fields no attribute shows."""
    if not c.__flags__ & _HEAPTYPE:
        return False
    base = c.__base__
    if base is None:
        return False
    extra = 8 * len(_own_slots(c))
    if c.__weakrefoffset__ and not base.__weakrefoffset__:
        extra += 8
    if c.__dictoffset__ and not base.__dictoffset__ and not c.__flags__ & _MANAGED_DICT:
        extra += 8  # a dict pointer in the object (a managed dict lives before it)
    return c.__basicsize__ == base.__basicsize__ + extra


def _own_slots(c: type) -> list[str]:
    """The instance fields ``c``'s own ``__slots__`` adds (not the dict and weak-reference slots)."""
    slots = c.__dict__.get("__slots__", ())
    if isinstance(slots, str):
        slots = (slots,)
    return [n for n in slots if n not in ("__dict__", "__weakref__")]


def _names(t: type) -> tuple[str, ...]:
    """The names of ``t``'s slots and compiled attributes, read by the walk (``_Canon._fields``)
    and the encoder (``reducers._fields_of``) alike."""
    known = _LAYOUT.get(t)
    if known is not None:
        return known
    names: list[str] = []
    for c in t.__mro__:
        attrs = getattr(c, "__mypyc_attrs__", None)
        if attrs is None:
            names.extend(_own_slots(c))
        else:
            names.extend(
                a for a in attrs if a not in ("__dict__", "__weakref__") and not a.startswith(SHARED)
            )
    # once each: a compiled class's ``__mypyc_attrs__`` repeats its bases' (a slot redeclared by
    # a subclass shadows the base's, which no name then reads)
    _LAYOUT[t] = found = tuple(dict.fromkeys(names))
    return found


_LAYOUT: dict[type, tuple[str, ...]] = {}

# A compiled primitive's operation shared by its announcements (``sync/primitives.py``): a function
# of the primitive's object and constants, no state (and absent while an execution records
# sources: read, it would tell two executions' states apart by that alone).
SHARED = "_shared_"


def field_reader(t: type, names: tuple[str, ...]) -> Any:
    """``operator.attrgetter(*names)`` for the instances of ``t`` (one name: its value; several: a
    tuple), in C where ``native.py`` says it is built: ``FieldReader`` looks ``t``'s descriptors
    up once, not at every read (``_field_reader.c``; the fingerprint reads every instance's fields
    at each state)."""
    if NATIVE is None:
        # a Python class's hook is the program's code, not the fingerprint's to run (as in C)
        return _raw_reader(names) if hooked(t) else operator.attrgetter(*names)
    return NATIVE.FieldReader(t, names)


def hooked(t: type) -> bool:
    """Does ``t``, a Python class, hook attribute access (``__getattribute__``, ``__getattr__``)?
    Then its objects are read as ``object.__getattribute__`` reads them (session 40, p095: a hook
    that takes a lock took a controlled lock outside any controlled thread)."""
    own: Any = t.__getattribute__
    return bool(t.__flags__ & _HEAPTYPE) and (own is not object.__getattribute__ or hasattr(t, "__getattr__"))


def _raw_reader(names: tuple[str, ...]) -> Any:
    raw = object.__getattribute__
    if len(names) == 1:
        return lambda x: raw(x, names[0])
    return lambda x: tuple(raw(x, name) for name in names)


# C iterators whose ``__reduce__`` is their whole state (not dict and set iterators: they also
# keep the size they started with, to raise when it changes)
_SAMPLE_ITERATORS: tuple[Any, ...] = (
    iter(range(1)),
    iter(range(1 << 70)),
    iter([]),
    iter(()),
    reversed([]),
    iter(""),
    iter("\u20ac"),
    iter(b""),
    enumerate(()),
    zip(),
    map(len, ()),
    filter(None, ()),
    reversed(range(1)),
)
_ITERATORS: frozenset[type] = frozenset(type(i) for i in _SAMPLE_ITERATORS)

_LOGGING = (logging.Logger, logging.Handler, logging.Manager, logging.PlaceHolder)

# a method of a C class defined with ``METH_METHOD`` (``re.Pattern.match``): like a builtin
# function, its state is its name and the object it is bound to
_BUILTIN_METHOD = type(re.compile("").match)
_DESCRIPTORS = (
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
    types.MethodWrapperType,
    type(collections.namedtuple("_T", "a").a),  # type: ignore[attr-defined]  # a named tuple's field (``_tuplegetter``)
)


# What the walk (``_Canon._walk``) and the encoder (``reducers._reducer``) make of an object whose
# type neither reads as one of its exact types: one decision for both, in one order, by type alone
# (``_kind``, kept per type).
BUILTIN = "builtin"  # a builtin function or C method: its name and the object it is bound to
ATOM = "atom"  # named by a number: immutable, or no state of the program (logging)
ITERATOR = "iterator"  # a C iterator: what it reduces to is its whole state
CLASS = "class"
HARNESS = "harness"  # an object of the harness that stands for the whole execution
EXCEPTION = "exception"
OPAQUE = "opaque"  # state Python does not show: the whole state is refused
INSTANCE = "instance"  # its fields, after its built-in base's value (``_BASE``)

# per type of kind INSTANCE: the built-in base whose value is read with the fields (None: none)
_BASE: dict[type, Any] = {}
_READ_BASES = (list, dict, set, frozenset, deque, tuple, int, str, bytes, float)


def _decide(t: type) -> str:
    if t is types.BuiltinFunctionType or t is _BUILTIN_METHOD:
        return BUILTIN
    # (the logging machinery is no state of the program: under pytest the root logger holds a
    # capture handler with a real lock, which would refuse every state)
    if issubclass(t, (types.GenericAlias, types.UnionType)) or issubclass(t, _LOGGING) or t in _DESCRIPTORS:
        return ATOM
    if t in _ITERATORS:
        return ITERATOR
    if issubclass(t, type):
        return CLASS
    if t.__name__ in _OPAQUE_HARNESS and t.__module__.startswith("model_checks.harness"):
        return HARNESS
    if issubclass(t, BaseException):
        return EXCEPTION
    if not _python_class(t):
        return OPAQUE
    _BASE[t] = next((b for b in _READ_BASES if issubclass(t, b)), None)
    return INSTANCE


_KIND = PerType(_decide)
_kind: Callable[[type], str] = _KIND.__getitem__  # (a C call, on the fingerprint's path per object)
