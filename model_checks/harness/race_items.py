"""Subscripts of objects that are no listed container (``race_sites.CONTAINERS``), for the race
detector (``races.py``): an access of the object's item, at the program's line.

An outside review (ninth: s05, s06, s23) proved three lost updates race free: ``mm[0]`` of an
``mmap``, ``a[0]`` of a numpy array and ``cfg["stats"]["hits"]`` of a ``configparser`` section
read, then written, by two threads with no lock. Their ``__getitem__``/``__setitem__`` are C code
or the standard library's Python, neither traced, so the subscript was no access. The rule now is
general: a subscript (read, store or ``del``) in code under test of an object whose type's item
methods are not traced is an access of (object, key), a store or ``del`` a write, where the
object's class is not an immutable builtin (a tuple, a string, a class: ``List[int]``,
``Color["RED"]``: nothing can write them, so their reads never race). A class whose item methods
are Python code under test is not: its own accesses are seen (a class guarding its items with a
lock inside ``__getitem__`` would otherwise race at every subscript). The key is the location
(an unhashable one: the whole object, which conflicts with every key); a buffer (``mmap``,
``memoryview``, a one-dimensional numpy array) is indexed by position, as a list is (``[-1]`` and
``[n-1]`` are one; a slice is the whole); a numpy array of more dimensions by its full index
tuple, anything else on it whole. Not matched: a view and the memory it shares (a numpy slice, a
``memoryview`` and the ``bytearray`` under it are different objects), and the methods of these
objects (``mm.write``, ``a.fill``, ``a += 1``).
"""

from __future__ import annotations

import gc
import mmap
import operator
import types
import weakref
from collections.abc import Callable
from typing import Any

from model_checks.harness.race_library import UNTRACED_CODE
from model_checks.harness.race_sites import ALL, under_test
from model_checks.harness.rt.per_type import PerType

# immutable builtins: a subscript reads what no store can change
_IMMUTABLE: tuple[type, ...] = (tuple, str, bytes, range, type, types.GenericAlias, types.MappingProxyType)
_BUFFERS: tuple[type, ...] = (mmap.mmap, memoryview)
_WEAKLY_KEYED: tuple[type, ...] = (weakref.WeakKeyDictionary, weakref.WeakSet)
_ITEM_METHODS = ("__getitem__", "__setitem__", "__delitem__")
_BUFFER_TYPES: set[type] = set()  # the buffers among them (by position)


def decided() -> dict[type, bool]:
    """The types decided so far (the C filter's table: a type not in it is asked of Python)."""
    return _DECIDED


def _decide(tp: type) -> bool:
    if issubclass(tp, _IMMUTABLE) or tp.__module__ in ("typing", "typing_extensions"):
        return False
    if issubclass(tp, _WEAKLY_KEYED):  # (a ``WeakSet`` has no item methods: ``race_objects``')
        return True
    if issubclass(tp, _BUFFERS) or any(
        k.__module__ == "numpy" and k.__name__ == "ndarray" for k in tp.__mro__
    ):
        _BUFFER_TYPES.add(tp)
        return True
    methods = [_in_mro(tp, name) for name in _ITEM_METHODS]
    if all(m is None for m in methods):
        return False
    for method in methods:
        code = getattr(method, "__code__", None)
        if not isinstance(code, types.CodeType):
            continue
        if under_test(code.co_filename) and (code.co_filename, code.co_qualname) not in UNTRACED_CODE:
            return False  # traced: its own accesses are seen
    return True


_DECIDED = PerType(_decide)  # shared with the C filter (``Tracer.subscripted``)
# Is a subscript of an object of ``tp`` (no listed container) an access of its item? (A C call:
# the Python tracer asks it at each subscript.)
subscripted: Callable[[type], bool] = _DECIDED.__getitem__


def _in_mro(tp: type, name: str) -> object | None:
    for klass in tp.__mro__:
        found: object | None = klass.__dict__.get(name)
        if found is not None:
            return found
    return None


class WeakKey:
    """A key a mapping holds weakly (a ``WeakKeyDictionary``'s, a ``WeakSet``'s item), as a
    location: by the object's id, and held weakly, so that the detector does not keep it alive
    (its entry would then never go: session 45, ``race_objects``). Named as the key while it
    lives."""

    __slots__ = ("ident", "kind", "ref")

    def __init__(self, key: object) -> None:
        self.ident = id(key)
        self.kind = type(key).__name__
        self.ref = weakref.ref(key)

    def __hash__(self) -> int:
        return self.ident

    def __eq__(self, other: object) -> bool:
        return type(other) is WeakKey and other.ident == self.ident

    def __repr__(self) -> str:
        key = self.ref()
        return repr(key) if key is not None else f"<{self.kind} object at {self.ident:#x}>"


def key_of(obj: Any, key: object) -> object:
    """The location of ``obj[key]``: the key, a buffer's position, or the whole object."""
    if isinstance(obj, _WEAKLY_KEYED):
        return WeakKey(key) if type(key).__weakrefoffset__ else ALL
    if type(obj) in _BUFFER_TYPES:
        shape = getattr(obj, "shape", None)
        if isinstance(obj, mmap.mmap) or (isinstance(shape, tuple) and len(shape) == 1):
            return _position(obj, key)
        if isinstance(key, tuple) and shape is not None and len(key) == len(shape):
            try:
                return tuple(operator.index(k) % n for k, n in zip(key, shape, strict=True))
            except (TypeError, ZeroDivisionError):
                return ALL
        return ALL
    try:
        hash(key)
    except TypeError:
        return ALL
    return key


def _position(obj: Any, key: Any) -> object:
    try:
        i = operator.index(key)  # (a numpy integer too)
        n = len(obj)
    except (TypeError, ValueError):  # a slice, a released buffer
        return ALL
    return i % n if -n <= i < n else ALL


# the iterators a loop's later turns are reads of their container through (the C filter's
# ``loop_container``: CPython 3.11's list, dict and set iterators, through an ``enumerate``)
_LOOPED: tuple[type, ...] = (
    type(iter([])),
    type(reversed([])),
    type(iter({})),
    type(iter({}.values())),
    type(iter({}.items())),
    type(iter(set())),
)


def loop_reads(it: object) -> list[object]:
    """The container a loop over ``it`` reads at each turn (none once it is exhausted)."""
    if type(it) is enumerate:
        inner = [ref for ref in gc.get_referents(it) if type(ref) in _LOOPED]
        it = inner[0] if inner else None
    if type(it) not in _LOOPED:
        return []
    return [ref for ref in gc.get_referents(it) if type(ref) in (list, dict, set)][:1]
