"""Dict versions (PEP 509) for the state fingerprint's encoder: a live view of a dict's version
number, and each module's data (its globals but ``__dunder__`` names) kept as one dict object
refreshed only when the module's dict is written. CPython 3.11's object layout."""

from __future__ import annotations

import ctypes
import operator
import sys
from typing import Any

from model_checks.harness.rt.native import NATIVE

_VERSION_AT = 24  # PyDictObject.ma_version_tag (CPython 3.11): a new global number at each write
_PROXIED_AT = 16  # mappingproxyobject.mapping
_value = operator.attrgetter("value")
# The offsets are 3.11's, and from 3.12 on a write no longer always changes the tag (PEP 699):
# the fingerprint runs only where ``frames.readable()`` says so (3.11), and this says why too.
SUPPORTED = sys.version_info[:2] == (3, 11)


def _version_view(d: dict[Any, Any]) -> ctypes.c_uint64:
    """A live view of ``d``'s version (PEP 509: every write to a dict gives it a new number from
    one global counter, so an unchanged number is an unchanged dict). Valid while ``d`` lives:
    the caller keeps it."""
    if not SUPPORTED:
        raise RuntimeError("dict versions are read with CPython 3.11's layout only")
    return ctypes.c_uint64.from_address(id(d) + _VERSION_AT)


def _same_versions_in_python(objects: list[Any], views: list[ctypes.c_uint64], versions: list[int]) -> bool:
    """Is each dict (or class namespace) of ``objects`` at its version in ``versions``? Read
    through ``views``, their version views."""
    return list(map(_value, views)) == versions


def _same_versions_in_c(objects: list[Any], views: list[ctypes.c_uint64], versions: list[int]) -> bool:
    """The same, each version read from the dict's struct (``_fingerprint_hot.c``)."""
    return bool(NATIVE.same_versions(objects, versions))  # type: ignore[union-attr]


same_versions = _same_versions_in_python if NATIVE is None else _same_versions_in_c


class _ModuleData:
    """A module's data but ``__dunder__`` names, as one dict object refreshed in place when the
    module's dict is written: every reading that reaches the module holds the same object."""

    __slots__ = ("data", "module_dict", "version", "view")

    def __init__(self, d: dict[str, Any]) -> None:
        self.module_dict = d
        self.view = _version_view(d)
        self.version = -1
        self.data: dict[str, Any] = {}
        self.refresh()

    def refresh(self) -> None:
        version = self.view.value
        if version != self.version:
            self.version = version
            self.data.clear()
            self.data.update((k, x) for k, x in self.module_dict.items() if not k.startswith("__"))


_MODULE_DATA: dict[int, _ModuleData] = {}  # by id of the module's dict (kept alive in the entry)
_view_of = operator.attrgetter("view")
_version_of = operator.attrgetter("version")
_dict_of = operator.attrgetter("module_dict")


def _module_data(d: dict[str, Any]) -> dict[str, Any]:
    known = _MODULE_DATA.get(id(d))
    if known is None or known.module_dict is not d:
        known = _MODULE_DATA[id(d)] = _ModuleData(d)
    else:
        known.refresh()
    return known.data


class Moved:
    """Has any of some dicts been written since ``record``? One C call while none was (their PEP 509
    versions), where comparing what they hold with a copy cost a few thousand instructions an
    execution (session 46: ``patch_state``'s process state, ``patch_logging``'s settings). Always
    True where versions cannot be read."""

    def __init__(self, dicts: list[dict[Any, Any]]) -> None:
        self.dicts = dicts
        self.views = [_version_view(d) for d in dicts] if SUPPORTED else None
        self.versions: list[int] = []
        self.record()

    def record(self) -> None:
        """Their versions now: what ``moved`` compares with."""
        if self.views is not None:
            self.versions = list(map(_value, self.views))

    def moved(self) -> bool:
        return self.views is None or not same_versions(self.dicts, self.views, self.versions)
