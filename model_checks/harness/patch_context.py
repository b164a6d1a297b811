"""A ``contextvars.Context`` entered in a controlled thread: its "entered" flag is an operation.

CPython lets one thread at a time inside a ``Context``: ``ctx.run(job)`` while another thread is
inside the same object raises ``RuntimeError: cannot enter context: ... is already entered``.
The flag is the object's own C state, neither an operation nor a traced access, so the explorer
took the second thread's ``ctx.run`` to commute with the first's whole ``run`` and proved a
program that fails in every real run (tenth review, session 42: t60, t60c). Where the program's
modules name ``copy_context`` or ``Context``, ``Context.run`` in a controlled thread writes one
location per context object at its start (entering reads and sets the flag) and again at its end
(leaving clears it), so the explorer runs another thread's entry inside a ``run``. ``Context`` is
a static C type, so ``run`` is put in (and taken back out of) its type's dict (``TypeSlots``).

A context made at import (``CTX = copy_context()``, entered through ``CTX.run`` by the program's
functions, which then name neither) is the same object in every execution: since the eleventh
review (row 3: u05, u05c proved, every real run failing) a module of the program that holds one,
as a global or one step further (in a container, a field of one of its objects or classes), turns
the operation on too. And what ``run`` leaves in it, the values its variables were set to, is put
back when each execution ends (``put_back``: the context as the execution's first ``run`` of it
found it), so every execution starts as the check's first, as a real run does; its variables
live in a C field (``ctx_vars``, an immutable map) no method writes, so it is set through
``ctypes`` (``_Layout``: the field's place checked once against CPython's behaviour; where it does
not hold, nothing is put back). A context still entered when its execution ends (a thread that did
not unwind) keeps its variables.
"""

from __future__ import annotations

import contextvars
import ctypes
import gc
from types import MappingProxyType, ModuleType
from typing import Any

from model_checks.harness import per_execution
from model_checks.harness.patch_streams import module_refers
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.rt.heap_walk import _raw_getattr

_NAMES = frozenset({"copy_context", "Context"})
_HELD = (contextvars.Context, contextvars.copy_context)
_Modified = ctypes.pythonapi.PyType_Modified
_Modified.argtypes = [ctypes.py_object]
_Modified.restype = None


class TypeSlots:
    """The attributes of a C type whose class refuses ``setattr`` (``cannot set 'run' attribute of
    immutable type``), set and read through its dict, for ``patch``'s ``(target, name, real,
    fake)`` and its undo: the type's method cache and specialised calls are told (``PyType_Modified``)."""

    def __init__(self, cls: type) -> None:
        object.__setattr__(self, "_cls", cls)
        object.__setattr__(self, "_dict", gc.get_referents(cls.__dict__)[0])

    def __getattr__(self, name: str) -> Any:
        return self._dict[name]

    def __setattr__(self, name: str, value: Any) -> None:
        self._dict[name] = value
        _Modified(self._cls)


CONTEXT = TypeSlots(contextvars.Context)
_real_run = contextvars.Context.__dict__["run"]


def _location(ctx: contextvars.Context) -> str:
    return f"the context {id(ctx):#x}"  # (an id reused in one execution: one location, no less)


def _run(self: contextvars.Context, callable: Any, /, *args: Any, **kwargs: Any) -> Any:
    rt = _controlled()
    if rt is None:
        return _real_run(self, callable, *args, **kwargs)
    name = _location(self)
    per_execution.access(rt, name, "write")
    if id(self) not in _FOUND:  # (the context as this execution found it: ``put_back``)
        _FOUND[id(self)] = (self, self.copy())

    def inside() -> Any:
        # (the leaving write is made inside the context, before CPython clears the flag: made
        # after ``run`` returned, the clearing was the previous step's and ran before it)
        try:
            result = callable(*args, **kwargs)
        except Exception:
            _leave(name)
            raise
        _leave(name)
        return result

    return _real_run(self, inside)


def _leave(name: str) -> None:
    rt = _controlled()
    if rt is not None:
        per_execution.access(rt, name, "write")


_run.__name__ = _run.__qualname__ = "run"


class _Context(ctypes.Structure):
    """CPython's ``PyContext`` (``Include/internal/pycore_context.h``, 3.7 on)."""

    _pointers = ("ob_type", "ctx_prev", "ctx_vars", "ctx_weakreflist")
    _fields_ = [
        ("ob_refcnt", ctypes.c_ssize_t),
        *((n, ctypes.c_void_p) for n in _pointers),
        ("ctx_entered", ctypes.c_int),
    ]


def _view(ctx: contextvars.Context) -> _Context:
    return _Context.from_address(id(ctx))


def _layout_holds() -> bool:
    """Is ``_Context`` where this interpreter keeps a context's fields? A copy shares the
    variables' map, a variable set inside one makes it another, ``run`` sets the flag."""
    ctx = contextvars.Context()
    copy = ctx.copy()
    var: contextvars.ContextVar[int] = contextvars.ContextVar("lanecheck's probe")
    if _view(ctx).ob_type != id(contextvars.Context) or _view(ctx).ctx_vars != _view(copy).ctx_vars:
        return False
    if _view(ctx).ctx_entered != 0 or ctx.run(lambda: _view(ctx).ctx_entered) != 1:
        return False
    ctx.run(var.set, 1)
    return bool(_view(ctx).ctx_vars != _view(copy).ctx_vars and _view(ctx).ctx_entered == 0)


_SWAPPABLE = _layout_holds()
_IncRef = ctypes.pythonapi.Py_IncRef
_DecRef = ctypes.pythonapi.Py_DecRef
_IncRef.argtypes = _DecRef.argtypes = [ctypes.py_object]
_IncRef.restype = _DecRef.restype = None

# the contexts a controlled thread ran in the running execution, by id, each with a copy of it as
# it was at that execution's first ``run`` of it (the copy shares its variables' map)
_FOUND: dict[int, tuple[contextvars.Context, contextvars.Context]] = {}


def _set_vars(ctx: contextvars.Context, like: contextvars.Context) -> None:
    """``ctx``'s variables as ``like``'s: its map replaced by ``like``'s, counted as CPython would."""
    view, new = _view(ctx), _view(like).ctx_vars
    old = view.ctx_vars
    if old == new:
        return
    new_map = ctypes.cast(new, ctypes.py_object).value
    old_map = ctypes.cast(old, ctypes.py_object).value
    _IncRef(new_map)
    view.ctx_vars = new
    _DecRef(old_map)


def put_back() -> None:
    """An execution ends: each context its threads ran, as the execution's first ``run`` of it
    found it (a context made in the execution goes with it; one made at import is the next
    execution's too)."""
    if not _FOUND:
        return
    found = list(_FOUND.values())
    _FOUND.clear()
    if not _SWAPPABLE:
        return
    for ctx, was in found:
        if _view(ctx).ctx_entered == 0:
            _set_vars(ctx, was)


def _holds_context(module: ModuleType) -> bool:
    """Does ``module`` hold a context made at import: a global, or one step further (in a
    container, a field of an object or class of its own)?"""
    for value in list(vars(module).values()):
        kind = type(value)
        if kind is contextvars.Context:
            return True
        inside: list[object] = []
        if kind in (list, tuple, set, frozenset):
            inside = list(value)
        elif kind is dict:
            inside = list(value.values())
        elif kind.__module__ == module.__name__ or (
            isinstance(value, type) and value.__module__ == module.__name__
        ):
            fields = _raw_getattr(value, "__dict__", None)  # (past a program's ``__getattr__``)
            inside = list(fields.values()) if isinstance(fields, (dict, MappingProxyType)) else []
        if any(type(v) is contextvars.Context for v in inside):
            return True
    return False


def at_patching(modules: tuple[ModuleType, ...]) -> list[tuple[Any, str, Any, Any]]:
    """``Context.run`` where ``modules`` name ``copy_context`` or ``Context``, or hold a context
    made at import (elsewhere CPython's)."""
    _FOUND.clear()
    if not any(module_refers(m, _NAMES, _HELD) or _holds_context(m) for m in modules):
        return []
    return [(CONTEXT, "run", _real_run, _run)]
