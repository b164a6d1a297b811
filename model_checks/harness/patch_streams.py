"""``contextlib.redirect_stdout``/``redirect_stderr`` in a controlled thread: process-wide.

CPython's ``redirect_stdout`` rebinds ``sys.stdout`` for the whole process, so another thread's
``print`` while it is in force lands in the redirecting thread's buffer (seventh review, session
40: every real run of such a program may fail; the check said "exhaustive": a ``print`` was no
operation, so no schedule put one inside another thread's redirection). Where the program's
modules use either (their code names ``redirect_stdout`` or ``redirect_stderr``), entering and
leaving one in a controlled thread is a write of the stream (``sys.stdout`` or ``sys.stderr``, one
location each per execution) and each ``print`` of a controlled thread a read of the stream it
writes to, so the explorer runs another thread's ``print`` inside the redirection. Not seen: a
write through ``sys.stdout.write`` or a stream object taken earlier. A ``print(..., file=buf)``
is still read by the race detector as a write of ``buf`` (``_written``). A program that never
names either keeps ``print`` the builtin (no step).
"""

from __future__ import annotations

import builtins
import contextlib
import sys
from types import CodeType, FunctionType, ModuleType
from typing import Any

from model_checks.harness.patch_threads import _controlled
from model_checks.harness.rt.objects import LocationState, Op
from model_checks.harness.runtime import ControlledRuntime

_NAMES = frozenset({"redirect_stdout", "redirect_stderr"})


def _names_redirect(code: CodeType) -> bool:
    if _NAMES.intersection(code.co_names):
        return True
    return any(isinstance(c, CodeType) and _names_redirect(c) for c in code.co_consts)


def _code_of(value: object) -> CodeType | None:
    """The code of a function (or of a method's function), without asking the object itself (a
    module global's ``__getattr__`` may raise anything: a settings proxy not yet configured)."""
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    return value.__code__ if isinstance(value, FunctionType) else None


def _module_names_redirect(module: ModuleType) -> bool:
    for value in list(vars(module).values()):
        if value is contextlib.redirect_stdout or value is contextlib.redirect_stderr:
            return True
        code = _code_of(value)
        if code is not None and _names_redirect(code):
            return True
        if isinstance(value, type) and vars(value).get("__module__") == module.__name__:
            for member in list(vars(value).values()):
                code = _code_of(member)
                if code is not None and _names_redirect(code):
                    return True
    return False


class _Streams:
    """One execution's ``sys.stdout`` and ``sys.stderr`` locations."""

    def __init__(self, rt: ControlledRuntime) -> None:
        self.ex = rt._ex
        self.of: dict[str, LocationState] = {}

    def location(self, stream: str) -> LocationState:
        found = self.of.get(stream)
        if found is None:
            made = self.ex.new_object(lambda oid: LocationState(oid, f"sys.{stream}"))
            assert isinstance(made, LocationState)
            found = self.of[stream] = made
        return found


_CURRENT: list[_Streams | None] = [None]


def _access(stream: str, kind: str) -> None:
    """A controlled thread of the explored code reads or writes ``sys.<stream>``."""
    rt = _controlled()
    if rt is None:
        return
    streams = _CURRENT[0]
    if streams is None or streams.ex is not rt._ex:
        streams = _CURRENT[0] = _Streams(rt)
    rt._ex.perform(Op(kind, streams.location(stream), read=kind == "read"))


_real_print = builtins.print
_real_enter = contextlib._RedirectStream.__enter__
_real_exit = contextlib._RedirectStream.__exit__


def _print(*args: Any, **kwargs: Any) -> None:
    out = kwargs.get("file")
    _access("stderr" if out is not None and out is sys.stderr else "stdout", "read")
    if out is not None:
        _written(out, args, kwargs)
    _real_print(*args, **kwargs)


def _written(out: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """``print(..., file=buf)``: the race detector reads the builtin's call (a write of ``buf``)
    at the program's line, as it does where ``print`` is not replaced (review 8, r071: the two
    threads' prints to one buffer were no access, and DPOR ran one order of them only)."""
    rt = _controlled()
    calls = None if rt is None else getattr(rt._ex.race, "calls", None)  # (the race detector's)
    tid = None if rt is None else rt._ex.running_thread()
    if calls is not None and tid is not None:
        calls.handed(tid, sys._getframe(2), _real_print, args, kwargs)


def _enter(self: Any) -> Any:
    _access(self._stream, "write")
    return _real_enter(self)


def _exit(self: Any, *exc: Any) -> None:
    _access(self._stream, "write")
    _real_exit(self, *exc)


_print.__name__ = _print.__qualname__ = "print"
_enter.__name__ = "__enter__"
_exit.__name__ = "__exit__"


def at_patching(modules: tuple[ModuleType, ...]) -> list[tuple[Any, str, Any, Any]]:
    """``print`` and the redirections' entry and exit, where ``modules`` name either redirection
    (elsewhere ``print`` stays the builtin, which the race detector reads as a write of its
    ``file``: a function of ours in its place hides that)."""
    if not any(_module_names_redirect(module) for module in modules):
        return []
    return [
        (builtins, "print", _real_print, _print),
        (contextlib._RedirectStream, "__enter__", _real_enter, _enter),
        (contextlib._RedirectStream, "__exit__", _real_exit, _exit),
    ]
