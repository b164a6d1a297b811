"""The ``warnings`` module's state in a controlled thread: an operation where it is used.

``warnings.filters``, ``showwarning`` and the registries of warnings shown are the process's:
``catch_warnings`` swaps them for its block (CPython documents it as not thread-safe), so another
thread's ``warn`` inside the block is filtered by it and, with ``record=True``, lands in the
other thread's list. Both sides were the standard library's code, neither an operation nor a
traced access, so the explorer ran one order and proved programs that fail in most real runs
(tenth review, session 42: t63, t63c). Where the program's modules name ``catch_warnings``,
``simplefilter``, ``filterwarnings`` or ``resetwarnings``, each of them (``catch_warnings``'s
entry and exit) in a controlled thread writes one location per execution, "the warnings state",
and ``warn``/``warn_explicit`` write it too (a warning shown is recorded in a registry, appended
to a recording list, or raised by the filter in force), made by the program or by library code it
called (``patch_shared._from_program``). Not seen: a warning issued from C (``PyErr_WarnEx``), or
by a library that imported ``warn`` by name, and a program's own assignment of
``warnings.showwarning`` or ``warnings.filters``.

Whatever the program names, every execution starts with the registries of warnings already shown
as they were at its check's start (``take_registries``, ``put_back``): a module's
``__warningregistry__`` (made by ``warnings`` in the globals of the frame a warning is charged to),
``warnings.onceregistry`` and the C module's filters version that makes a registry current. Kept,
a "default"-action warning shown in the first execution was silent in every later one, so no
later order could show what it does (eleventh review, row 2: u06 under ``--strategy dfs``); a
real run is a first run. Each execution's end moves the filters version (``_filters_mutated``, as
any ``catch_warnings`` does): every registry goes stale, so it is empty at its next use; one that
held entries and was current at the check's start gets them back, made current again.
"""

from __future__ import annotations

import _warnings
import sys
import warnings
from types import ModuleType
from typing import Any

from model_checks.harness.patch_shared import Rule, _always, _from_program, _wrapped, access
from model_checks.harness.patch_streams import module_names
from model_checks.harness.patch_threads import _controlled

_STATE = "the warnings state"
_SETTERS = frozenset({"catch_warnings", "simplefilter", "filterwarnings", "resetwarnings"})
_WRITE: list[Rule] = [(_STATE, "write", _always)]


_real_warn = warnings.warn
_C_WARNINGS: Any = _warnings


def _warn(message: Any, category: Any = None, stacklevel: int = 1, source: Any = None) -> None:
    """``warnings.warn``, one frame deeper: the warning is the caller's line still (its registry
    entry and what ``showwarning`` prints), as ``stacklevel`` counts from here."""
    if _controlled() is not None and _from_program(sys._getframe(1)):
        access(_STATE, "write")
    _real_warn(message, category, max(stacklevel, 1) + 1, source)  # (0 and below: the caller, as 1)


_warn.__name__ = _warn.__qualname__ = "warn"


def _names_setter(module: ModuleType) -> bool:
    held = any(v is getattr(warnings, n) for v in list(vars(module).values()) for n in _SETTERS)
    return held or module_names(module, _SETTERS)


def _taken() -> tuple[Any, ...]:
    w: Any = warnings  # (its private names: what ``catch_warnings`` saves and puts back)
    return (
        w.filters,
        list(w.filters),
        w.showwarning,
        w._showwarnmsg_impl,
        w.defaultaction,
        dict(w.onceregistry),
    )


# the state as patching found it, where the program names a setter: each execution starts from it
_FOUND: list[tuple[Any, ...]] = []


def _version() -> object:
    """The C module's filters version now: what ``warn_explicit`` writes into a registry it finds
    stale, learned from a private one, under a filter that ignores the probe (bound for the call:
    the C code reads ``warnings.filters`` afresh at each warning; the version does not move)."""
    w: Any = warnings
    filters = w.filters
    w.filters = [("ignore", None, Warning, None, 0)]
    probe: dict[Any, Any] = {}
    try:
        _C_WARNINGS.warn_explicit("lanecheck's probe", UserWarning, "<probe>", 0, registry=probe)
    finally:
        w.filters = filters
    return probe.get("version")


def _current(registry: object, version: object) -> bool:
    """Does ``registry`` (a dict with entries) count at the filters ``version``?"""
    return isinstance(registry, dict) and len(registry) > 1 and registry.get("version") == version


# the registries that held entries and were current at the check's start, with their entries
_REGISTRIES: list[tuple[dict[Any, Any], dict[Any, Any]]] = []


def take_registries() -> None:
    """A check's first execution begins: the registries each of its executions starts from."""
    _REGISTRIES.clear()
    version = _version()
    modules = [m for m in list(sys.modules.values()) if isinstance(m, ModuleType)]
    found = [m.__dict__.get("__warningregistry__") for m in modules]
    w: Any = warnings
    for registry in [*found, w.onceregistry]:
        if _current(registry, version):
            assert isinstance(registry, dict)
            _REGISTRIES.append((registry, dict(registry)))


def _put_back_registries() -> None:
    _C_WARNINGS._filters_mutated()  # (every registry stale: empty at its next use)
    if not _REGISTRIES:
        return
    version = _version()
    for registry, entries in _REGISTRIES:
        registry.clear()
        registry.update(entries)
        registry["version"] = version


def put_back() -> None:
    """An execution ends: the warnings state as patching found it, and the registries as at the
    check's start. Two threads' ``catch_warnings`` left in the wrong order keep the inner one's
    filters: the next execution's warnings (and what runs after the check) would be filtered by
    them."""
    if _FOUND and _taken() != _FOUND[0]:
        w: Any = warnings
        filters, items, w.showwarning, w._showwarnmsg_impl, w.defaultaction, once = _FOUND[0]
        filters[:] = items
        w.filters = filters
        w.onceregistry.clear()
        w.onceregistry.update(once)
    _put_back_registries()  # (after: putting the filters back moves the version too)


def at_patching(modules: tuple[ModuleType, ...]) -> list[tuple[Any, str, Any, Any]]:
    """``warnings``'s setters and ``warn`` where ``modules`` name a setter (elsewhere CPython's)."""
    _FOUND.clear()
    if not any(_names_setter(m) for m in modules):
        return []
    _FOUND.append(_taken())
    owners: list[tuple[Any, str]] = [
        (warnings.catch_warnings, "__enter__"),
        (warnings.catch_warnings, "__exit__"),
        *((warnings, n) for n in ("simplefilter", "filterwarnings", "resetwarnings", "warn_explicit")),
    ]
    return [(warnings, "warn", _real_warn, _warn), *(_wrapped(owner, name, _WRITE) for owner, name in owners)]
