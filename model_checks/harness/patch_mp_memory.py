"""``multiprocessing``'s shared memory made at import (``RawValue``, ``RawArray``,
``Value(lock=False)``, a ``Value``/``Array``'s with its lock), and a program's own ``ctypes``
data: put back as each check's first execution found it, before every later execution
(``patch_state``).

``COUNT = multiprocessing.RawValue("i", 0)`` at a module's top level is a ``ctypes`` object whose
memory no snapshot of the module's globals copied: one execution's writes reached the next, and a
correct program asserting an absolute count failed at the fourth execution (session 42). Its bytes
are saved when the snapshot is taken and copied back in place (the objects holding it see them).
Only memory of plain data: numbers, characters, arrays and structures of them. A pointer (to
Python objects kept alive by the ``ctypes`` object, a ``c_char_p``'s bytes) put back would point
at what may be gone; memory the object does not own (``from_address``, ``in_dll``: a library's)
is not the program's to restore, but ``multiprocessing``'s blocks are.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

from model_checks.harness.patch_imported import StandIn

# ``_type_`` codes of plain data: bool, characters, integers, floating point
_PLAIN = frozenset("?cubBhHiIlLqQfdg")


class Memory:
    """The bytes a ``ctypes`` object held, to put back in place."""

    def __init__(self, memory: ctypes._CData) -> None:
        self.contents = ctypes.string_at(ctypes.addressof(memory), ctypes.sizeof(memory))

    def put_back(self, value: object) -> None:
        """Into ``value``: the ``ctypes`` object saved, or the ``Value`` holding it."""
        memory: Any = _memory(value)
        ctypes.memmove(ctypes.addressof(memory), self.contents, len(self.contents))


def saved(value: object, snapshot: bool = True) -> Memory | None:
    """``value``'s memory if it is plain data the program's modules own, else None (``snapshot``:
    saved by a snapshot of the modules, which puts it back before each execution)."""
    memory = _memory(value)
    if memory is None:
        return None
    kind = type(memory)
    if not issubclass(kind, (ctypes._SimpleCData, ctypes.Array, ctypes.Structure, ctypes.Union)):
        return None
    if not _plain(kind) or not (_owned(memory) or _shared(memory)):
        return None
    if snapshot:
        _SNAPSHOT[id(memory)] = memory
    return Memory(memory)  # type: ignore[arg-type]


# the memory a snapshot of the program's modules saved (``patch_state`` puts it back before each
# execution): a ``Value`` made at import reached only inside a list or dict is not, and its
# stand-in puts it back itself (``restored_by_snapshot``). (Kept alive: an id is not reused.)
_SNAPSHOT: dict[int, object] = {}


def restored_by_snapshot(value: object) -> bool:
    return id(_memory(value)) in _SNAPSHOT


def _memory(value: object) -> object | None:
    """The ``ctypes`` object ``value`` is or holds: a ``Value``/``Array`` made at import keeps its
    memory inside a synchronised wrapper (``sharedctypes.Synchronized``), stood in for while
    patched (``patch_mp_imported``: only its lock has a twin)."""
    if issubclass(type(value), StandIn):
        value = _raw(value, "_real", None)
    shared = sys.modules.get("multiprocessing.sharedctypes")
    if shared is not None and issubclass(type(value), shared.SynchronizedBase):
        return _raw(value, "_obj", None)
    return value


def _plain(kind: type) -> bool:
    if issubclass(kind, ctypes._SimpleCData):
        return getattr(kind, "_type_", None) in _PLAIN
    if issubclass(kind, ctypes.Array):
        element: type = getattr(kind, "_type_", type(None))
        return _plain(element)
    if issubclass(kind, (ctypes.Structure, ctypes.Union)):
        fields = getattr(kind, "_fields_", ())
        return all(_plain(field[1]) for field in fields)
    return False


# (read as ``object.__getattribute__`` does: a program's subclass may define its own lookup)
def _owned(value: object) -> bool:
    return bool(_raw(value, "_b_needsfree_", 0))


def _shared(value: object) -> bool:
    """Made by ``sharedctypes`` (from a ``multiprocessing.heap`` block it keeps alive)."""
    heap = sys.modules.get("multiprocessing.heap")
    wrapper = _raw(value, "_wrapper", None) if heap else None
    return heap is not None and isinstance(wrapper, heap.BufferWrapper)


def _raw(value: object, name: str, default: object) -> object:
    try:
        return object.__getattribute__(value, name)
    except AttributeError:
        return default
