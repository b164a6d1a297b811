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
"""

from __future__ import annotations

import contextvars
import ctypes
import gc
from types import ModuleType
from typing import Any

from model_checks.harness import per_execution
from model_checks.harness.patch_streams import module_refers
from model_checks.harness.patch_threads import _controlled

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


def at_patching(modules: tuple[ModuleType, ...]) -> list[tuple[Any, str, Any, Any]]:
    """``Context.run`` where ``modules`` name ``copy_context`` or ``Context`` (elsewhere CPython's)."""
    if not any(module_refers(m, _NAMES, _HELD) for m in modules):
        return []
    return [(CONTEXT, "run", _real_run, _run)]
