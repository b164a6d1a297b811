"""Other ways to the locations the bytecode reaches, for the race detector: a closure's variable
through its cell (``cell.cell_contents``, read or written, is ``LOAD_DEREF``/``STORE_DEREF``'s
location: the cell's variable, by name) and a slot through its descriptor, called (``C.n.__get__(c,
C)``, ``C.n.__set__(c, v)``, ``__delete__``: ``c.n``). Review 13's F6: either path against the
plain one was proved race free while a real run lost updates (p134, p141)."""

from __future__ import annotations

import gc
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from model_checks.harness.race_sites import Where

if TYPE_CHECKING:
    from model_checks.harness.races import RaceDetector

CELL_CONTENTS = "cell_contents"
_SLOT_CALLS = frozenset({"__get__", "__set__", "__delete__"})
# a cell's variable, found once: id -> (the cell, kept so that its id names it, its name)
_NAMES: dict[int, tuple[types.CellType, str]] = {}
_KEPT = 4096  # cells whose names are remembered, at most (then forgotten all, and found again)


def variable(cell: types.CellType) -> str:
    """The name of the variable ``cell`` holds, as ``LOAD_DEREF`` names it: found through a
    function whose closure holds it (which is how a program reaches a cell); ``cell_contents``
    where none does (no ``LOAD_DEREF`` of it is left to race with)."""
    known = _NAMES.get(id(cell))
    if known is not None and known[0] is cell:
        return known[1]
    name = CELL_CONTENTS
    for closure in gc.get_referrers(cell):
        if type(closure) is not tuple:
            continue
        index = next(i for i, item in enumerate(closure) if item is cell)
        for fn in gc.get_referrers(closure):
            if type(fn) is types.FunctionType and fn.__closure__ is closure:
                name = fn.__code__.co_freevars[index]
                break
        if name != CELL_CONTENTS:
            break
    if len(_NAMES) >= _KEPT:
        _NAMES.clear()
    _NAMES[id(cell)] = (cell, name)
    return name


def cell_contents(detector: RaceDetector, tid: int, cell: types.CellType, write: bool, frame: Where) -> None:
    """``cell.cell_contents`` read or written (or deleted): the cell's variable."""
    detector._access(tid, cell, variable(cell), write, frame, "")


def is_slot_call(descriptor: object, method: object) -> bool:
    """Is ``method`` (a name) a slot descriptor's ``__get__``, ``__set__`` or ``__delete__``?"""
    return issubclass(type(descriptor), types.MemberDescriptorType) and method in _SLOT_CALLS


def slot_call(
    detector: RaceDetector, tid: int, frame: Where, descriptor: Any, method: object, args: Sequence[object]
) -> None:
    """``descriptor.method(*args)``: ``__get__(obj, cls)`` reads ``obj``'s slot, ``__set__(obj,
    value)`` and ``__delete__(obj)`` write it (``__get__(None, cls)`` is the descriptor itself)."""
    if not args or args[0] is None:
        return
    obj, name = args[0], descriptor.__name__
    if method == "__get__":
        detector._load_attr(tid, obj, name, frame)
    else:
        detector._store_attr(tid, obj, name, frame)
