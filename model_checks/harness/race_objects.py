"""Objects whose methods are accesses though they are no listed container (``race_sites.CONTAINERS``),
for the race detector (``races.py``): an ``mmap`` and the ``weakref`` mappings.

An outside review (thirteenth, F8) had two lost updates proved "exhaustive ... no data race": a
``WeakValueDictionary`` cache filled by check-then-insert (``cache.get(k)``, then ``cache[k] = o``)
by two threads with no lock (p05), and a counter kept in an ``mmap`` (``m.seek(0)``,
``m.read_byte()``, ``m.seek(0)``, ``m.write_byte(v + 1)``: p59). The subscripts were accesses
(``race_items``), the methods none: ``weakref``'s mappings are the standard library's Python,
untraced (their data is an inner dict, ``self.data``, the library's), and ``mmap``'s are C. Now a
call of one of their methods in code under test is an access, recorded at the program's line as a
container method's is (the C filter lets the call through by the object's exact type, ``TABLE``,
its module's ``CALLED_TYPES``; a subclass's own methods are traced code).

The locations are a subscript's (``race_items.key_of``), so a method and a subscript of one item
conflict: a mapping's keyed method (``get``, ``setdefault``, ``pop(k)``, ``in``, a ``WeakSet``'s
``add``) is an access of its key's item, the others (``keys()``, iteration, ``len``, ``update``,
``clear``) of the whole mapping, which conflicts with every key. An ``mmap`` has two: its content,
by position as a subscript's (``read_byte``/``write_byte`` the byte at the position, the other
reads and writes, ``find``, ``move``, ``resize``, the whole content), and its position
(``<position>``: ``seek`` and every read or write that moves it write it, ``tell`` reads it; a
content access of the whole conflicts with it too, as ``find`` and ``read`` start at it). Not
seen: a ``memoryview`` or ``numpy`` array over the ``mmap``'s memory (another object), the
entries a ``weakref`` mapping loses when a referent is freed (the collector's, in any thread). A
``WeakKeyDictionary``'s key and a ``WeakSet``'s item are located by their id (``race_items.WeakKey``),
not held: the detector keeping them alive would keep their entries (a later object given the
address is the same location: an unordered access of each is reported).
"""

from __future__ import annotations

import mmap
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from model_checks.harness.race_items import key_of
from model_checks.harness.race_sites import ALL, Where
from model_checks.harness.rt.native import NATIVE

if TYPE_CHECKING:
    from model_checks.harness.races import RaceDetector

POSITION = "<position>"
# a method's access: read, write; of its first argument's item (an ``mmap``'s: of the byte at its
# position); of an ``mmap``'s size alone (``len``: ``resize`` writes it, with the whole content)
_R, _W, _KEYED, _SIZE = 1, 2, 4, 8
SIZE = "<size>"
# (content access, position access): content ``_R``/``_W`` of the whole (``_KEYED``: of the byte at
# the position), position ``_R``/``_W``
_MMAP: dict[str, tuple[int, int]] = {
    "read": (_R, _W),
    "read_byte": (_R | _KEYED, _W),
    "readline": (_R, _W),
    "write": (_W, _W),
    "write_byte": (_W | _KEYED, _W),
    "seek": (0, _W),
    "tell": (0, _R),
    "find": (_R, _R),
    "rfind": (_R, _R),
    "size": (_SIZE, 0),
    "flush": (_R, 0),
    "move": (_W, 0),
    "resize": (_W, _W),
    "close": (_W, _W),
    "__len__": (_SIZE, 0),
    "__getitem__": (_R | _KEYED, 0),
    "__setitem__": (_W | _KEYED, 0),
}
# a ``weakref`` mapping's (and ``WeakSet``'s) methods: as a dict's and a set's (``race_sites.METHODS``)
_WEAK: dict[str, int] = {
    **dict.fromkeys(("get", "__getitem__", "__contains__"), _R | _KEYED),
    **dict.fromkeys(("__setitem__", "__delitem__", "setdefault", "add", "discard", "remove"), _W | _KEYED),
    **dict.fromkeys(
        (
            "keys",
            "values",
            "items",
            "keyrefs",
            "valuerefs",
            "itervaluerefs",
            "__iter__",
            "__len__",
            "__repr__",
            "copy",
            "__copy__",
            "__deepcopy__",
            "__eq__",
            "__or__",
            "__ror__",
            "union",
            "intersection",
            "difference",
            "symmetric_difference",
            "issubset",
            "issuperset",
            "isdisjoint",
            "__le__",
            "__lt__",
            "__ge__",
            "__gt__",
            "__and__",
            "__sub__",
            "__xor__",
        ),
        _R,
    ),
    **dict.fromkeys(
        (
            "update",
            "popitem",
            "clear",
            "__ior__",
            "__iand__",
            "__isub__",
            "__ixor__",
            "difference_update",
            "intersection_update",
            "symmetric_difference_update",
            "pop",  # (of its key's item where it names one: ``method``)
        ),
        _W,
    ),
}
TYPES: tuple[type, ...] = (mmap.mmap, weakref.WeakValueDictionary, weakref.WeakKeyDictionary, weakref.WeakSet)
# the C filter's table (type -> names); a plain dict where the C tracer is not built
TABLE: dict[type, dict[str, object]] = NATIVE.CALLED_TYPES if NATIVE is not None else {}
TABLE[mmap.mmap] = dict.fromkeys(_MMAP)
for _kind in TYPES[1:]:
    TABLE[_kind] = dict.fromkeys(_WEAK)


def method(
    detector: RaceDetector, tid: int, frame: Where, obj: Any, name: str, args: Sequence[object]
) -> None:
    """``obj.name(*args)`` by the program, ``obj`` of one of ``TABLE``'s types: its accesses."""
    names = TABLE.get(type(obj))
    if names is None or name not in names:
        return
    label = f"{type(obj).__name__}.{name}()"
    if type(obj) is mmap.mmap:
        _mmap(detector, tid, frame, obj, name, args, label)
        return
    how = _WEAK[name] | (_KEYED if name == "pop" and args else 0)
    key = key_of(obj, args[0]) if how & _KEYED and args else ALL
    detector._access(tid, obj, key, bool(how & _W), frame, label)


def _mmap(
    detector: RaceDetector, tid: int, frame: Where, m: Any, name: str, args: Sequence[object], label: str
) -> None:
    content, position = _MMAP[name]
    try:
        at = m.tell()  # (before the call: the byte it reads or writes)
    except ValueError:  # closed: the call raises
        return
    if content:
        if content & _KEYED and name in ("__getitem__", "__setitem__"):
            key = key_of(m, args[0]) if args else ALL
        elif content & _KEYED:
            key = at if at < len(m) else ALL
        elif content & _SIZE:
            key = SIZE
        else:
            key = ALL
        detector._access(tid, m, key, bool(content & _W), frame, label)
    if position:
        detector._access(tid, m, POSITION, bool(position & _W), frame, label)


def contains(detector: RaceDetector, tid: int, frame: Where, obj: Any, key: object) -> None:
    """``key in obj``, ``obj`` of ``TABLE``'s types (an ``mmap``: a byte string sought in its
    whole content)."""
    found = ALL if type(obj) is mmap.mmap else key_of(obj, key)
    detector._access(tid, obj, found, False, frame, "")


def whole(detector: RaceDetector, tid: int, frame: Where, obj: Any, length: bool) -> None:
    """A loop over ``obj`` (``length``: ``len(obj)``), ``obj`` of ``TABLE``'s types: a read of it
    whole (an ``mmap``'s length: of its size)."""
    found = SIZE if length and type(obj) is mmap.mmap else ALL
    detector._access(tid, obj, found, False, frame, "")


__all__ = ["POSITION", "SIZE", "TABLE", "TYPES", "contains", "method", "whole"]
