"""``contextlib.redirect_stdout``/``redirect_stderr`` in a controlled thread: process-wide.

CPython's ``redirect_stdout`` rebinds ``sys.stdout`` for the whole process, so another thread's
``print`` while it is in force lands in the redirecting thread's buffer (seventh review, session
40: every real run of such a program may fail; the check said "exhaustive": a ``print`` was no
operation, so no schedule put one inside another thread's redirection). Where the program's
modules use either (their code names ``redirect_stdout`` or ``redirect_stderr``), entering and
leaving one in a controlled thread is a write of the stream (``sys.stdout`` or ``sys.stderr``, one
location each per execution) and each ``print`` of a controlled thread a write of the stream it
writes to (a write, not a read, since the eighth review: two prints into one capture were taken
to commute, r071), so the explorer runs another thread's ``print`` inside the redirection. Since
the eighth review's r029 a program's read of ``sys.stdout``/``sys.stderr`` in a controlled thread
is a read of the stream, and a write where it writes through it (``sys.stdout.write(...)``,
``.writelines``, ``.buffer``): ``sys``'s class holds them as properties over its dict. Not seen: a
later write through a stream object taken earlier (its taking is ordered). A
``print(..., file=buf)`` is still read by the race detector as a write of ``buf`` (``_written``).
Since the eighth review (r125) a program that assigns ``sys.stdout`` or ``sys.stderr`` itself
(``sys.stdout = buf``: its code stores the attribute) is treated alike, the assignment in a
controlled thread a write of the stream (``sys``'s class, while patched, sees it). A program that
does neither keeps ``print`` the builtin (no step) until a controlled thread rebinds a stream by
any code (a library's: ``mock.patch("sys.stdout")``, a helper's ``redirect_stdout``, review 9's
s44): ``_SysWatch`` sees it, the streams become operations, and the search starts again
(``take_switched``, read by ``searching.Search``).
"""

from __future__ import annotations

import builtins
import contextlib
import dis
import itertools
import sys
import types
import weakref
from collections.abc import Callable, Iterator
from types import CodeType, FrameType, FunctionType, ModuleType
from typing import Any

from model_checks.harness import per_execution
from model_checks.harness.own_code import own
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.race_sites import SKIP_FILES

_NAMES = frozenset({"redirect_stdout", "redirect_stderr"})
_STREAM_NAMES = frozenset({"stdout", "stderr"})


def _names(code: CodeType, names: frozenset[str]) -> bool:
    if names.intersection(code.co_names):
        return True
    return any(isinstance(c, CodeType) and _names(c, names) for c in code.co_consts)


def _assigns_stream(code: CodeType) -> bool:
    """Does ``code`` (or a function inside it) assign ``<something>.stdout``/``.stderr``?"""
    if _STREAM_NAMES.intersection(code.co_names) and any(
        i.opname == "STORE_ATTR" and i.argval in _STREAM_NAMES for i in dis.get_instructions(code)
    ):
        return True
    return any(isinstance(c, CodeType) and _assigns_stream(c) for c in code.co_consts)


def _code_of(value: object) -> CodeType | None:
    """The code of a function (or of a method's function), without asking the object itself (a
    module global's ``__getattr__`` may raise anything: a settings proxy not yet configured)."""
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    return value.__code__ if isinstance(value, FunctionType) else None


def _module_codes(module: ModuleType) -> Iterator[CodeType]:
    """The code of the module's functions and of its own classes' methods."""
    for value in list(vars(module).values()):
        code = _code_of(value)
        if code is not None:
            yield code
        if isinstance(value, type) and vars(value).get("__module__") == module.__name__:
            for member in list(vars(value).values()):
                code = _code_of(member)
                if code is not None:
                    yield code


def module_names(module: ModuleType, names: frozenset[str]) -> bool:
    """Does the code of ``module``'s functions or of its classes' methods name one of ``names``?"""
    return any(_names(code, names) for code in _module_codes(module))


def module_refers(module: ModuleType, names: frozenset[str], objects: tuple[object, ...]) -> bool:
    """Does ``module`` hold one of ``objects`` among its globals (``from time import tzset``), or
    its code name one of ``names``?"""
    held = any(v is o for v in list(vars(module).values()) for o in objects)
    return held or module_names(module, names)


def _module_names_redirect(module: ModuleType) -> bool:
    for value in list(vars(module).values()):
        if value is contextlib.redirect_stdout or value is contextlib.redirect_stderr:
            return True
    return module_names(module, _NAMES) or any(_assigns_stream(code) for code in _module_codes(module))


# Are the streams operations in this patching (from its start where the program's modules name a
# redirection or assign a stream; from the first rebinding ``_SysWatch`` sees otherwise)? And the
# rebinding that made them so, not yet told to the search (``take_switched``).
_LIVE: list[bool] = [False]
_SWITCHED: list[str] = []


def _access(stream: str, kind: str) -> None:
    """A controlled thread of the explored code reads or writes ``sys.<stream>``."""
    rt = _controlled()
    if rt is None or not _LIVE[0]:
        return
    per_execution.access(rt, f"sys.{stream}", kind)


_real_print = builtins.print
_real_enter = contextlib._RedirectStream.__enter__
_real_exit = contextlib._RedirectStream.__exit__


def _print(*args: Any, **kwargs: Any) -> None:
    out = kwargs.get("file")
    # (a write: two prints to one stream are ordered, their output's order is an outcome; as reads
    # DPOR took them to commute and ran one order of two prints into a capture: review 8, r071)
    _access("stderr" if out is not None and out is sys.stderr else "stdout", "write")
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


_SYS = vars(sys)  # (``sys``'s dict: what CPython's own reads of ``sys.stdout`` look in)
# the attributes of a stream that write it (``sys.stdout.write(...)``, ``.buffer.write(...)``)
_WRITING = frozenset({"write", "writelines", "buffer"})
_WRITES_AT: weakref.WeakKeyDictionary[CodeType, frozenset[int]] = weakref.WeakKeyDictionary()


def _writes_at(code: CodeType) -> frozenset[int]:
    """The offsets in ``code`` of the reads of ``<x>.stdout``/``.stderr`` whose next instruction
    takes one of ``_WRITING`` from the stream read."""
    found = _WRITES_AT.get(code)
    if found is None:
        ins = list(dis.get_instructions(code))
        found = frozenset(
            i.offset
            for i, after in itertools.pairwise(ins)
            if i.opname == "LOAD_ATTR"
            and i.argval in _STREAM_NAMES
            and after.opname in ("LOAD_ATTR", "LOAD_METHOD")
            and after.argval in _WRITING
        )
        _WRITES_AT[code] = found
    return found


def over_dict(space: dict[str, Any], owner: str, name: str, seen: Callable[[FrameType], None]) -> property:
    """A module attribute ``name`` held in ``space`` (the module's dict, where C code stores it),
    for the module's class while patched: ``seen(caller's frame)`` at each read by a controlled
    thread."""

    def get(module: Any) -> Any:
        try:
            value = space[name]
        except KeyError:
            raise AttributeError(f"module '{owner}' has no attribute '{name}'") from None
        if _controlled() is not None:
            seen(sys._getframe(1))
        return value

    def put(module: Any, value: Any) -> None:
        space[name] = value

    def remove(module: Any) -> None:
        del space[name]

    return property(get, put, remove)


def _stream(name: str) -> property:
    """``sys.<name>`` while patched: a program's read of it in a controlled thread is a read of
    the stream, or a write where it writes through it (``sys.stdout.write("x")``), so the explorer
    runs it inside and outside another thread's redirection (eighth review, r029: "exhaustive",
    the worker's write never put inside main's ``redirect_stdout``). The value is ``sys``'s dict's,
    which CPython's own reads (``print``'s) look in."""

    def seen(frame: FrameType) -> None:
        code = frame.f_code
        if not own(code.co_filename) and not code.co_filename.startswith(SKIP_FILES):
            _access(name, "write" if frame.f_lasti in _writes_at(code) else "read")

    return over_dict(_SYS, "sys", name, seen)


class _Sys(types.ModuleType):
    """``sys``'s class while patched, where the program assigns ``sys.stdout`` or ``sys.stderr``
    or names a redirection: the assignment in a controlled thread is a write of the stream, as a
    redirection's entry is (eighth review, r125: ``sys.stdout = buf`` with another thread's
    ``print``, "exhaustive"), and a read of it a read, or a write where it writes (``_stream``)."""

    stdout = _stream("stdout")
    stderr = _stream("stderr")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _STREAM_NAMES and not own(sys._getframe(1).f_code.co_filename):
            _access(name, "write")
        super().__setattr__(name, value)


class _SysWatch(types.ModuleType):
    """``sys``'s class while patched where the program's modules neither name a redirection nor
    assign a stream: ``print`` stays the builtin (no step), and a rebinding of ``sys.stdout`` or
    ``sys.stderr`` in a controlled thread, by any code (``mock.patch("sys.stdout", ...)``,
    ``patch.object(sys, "stdout")``, a helper library's ``redirect_stdout``, pytest's capture:
    review 9's s44, "exhaustive" where a third of the real runs failed), makes the streams
    operations from then on (``_go_live``) and has the search start again (``take_switched``)."""

    # (``ModuleType``'s own, not ``super()``'s: a rebinding makes ``sys`` a ``_Sys`` on the way)
    def __setattr__(self, name: str, value: Any) -> None:
        if name in _STREAM_NAMES:
            _rebinding(sys._getframe(1))
        types.ModuleType.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in _STREAM_NAMES:
            _rebinding(sys._getframe(1))
        types.ModuleType.__delattr__(self, name)


def _rebinding(caller: types.FrameType) -> None:
    if _LIVE[0] or _controlled() is None or own(caller.f_code.co_filename):
        return
    _go_live()
    _SWITCHED.append(f"{caller.f_code.co_filename}:{caller.f_lineno}")


def _go_live() -> None:
    """The streams become operations: ``print`` ours, ``sys``'s class ``_Sys`` (the patching's
    undo puts back the builtin and ``sys``'s own class)."""
    _LIVE[0] = True
    builtins.print = _print
    sys.__class__ = _Sys


def start_execution() -> None:
    """An execution begins, ``builtins`` put back as its check's first execution found them: a
    rebinding seen since made ``print`` ours (``_go_live``), and it stays so."""
    if _LIVE[0] and builtins.print is not _print:
        builtins.print = _print


def take_switched() -> str | None:
    """Where the last execution first rebound a stream while the streams were no operations (the
    search restarts: its executions so far ran every ``print`` as no step), or None."""
    if not _SWITCHED:
        return None
    where = _SWITCHED[0]
    _SWITCHED.clear()
    return where


_print.__name__ = _print.__qualname__ = "print"
_enter.__name__ = "__enter__"
_exit.__name__ = "__exit__"


def at_patching(modules: tuple[ModuleType, ...]) -> list[tuple[Any, str, Any, Any]]:
    """``print`` and the redirections' entry and exit, where ``modules`` name either redirection
    (elsewhere ``print`` stays the builtin, which the race detector reads as a write of its
    ``file``: a function of ours in its place hides that)."""
    _SWITCHED.clear()
    _LIVE[0] = any(_module_names_redirect(module) for module in modules)
    return [
        # (without a redirection named, the builtin until a rebinding is seen: ``_go_live``)
        (builtins, "print", _real_print, _print if _LIVE[0] else _real_print),
        # (the "real" is no object a program holds: ``patch`` rebinds a global found to be it)
        (sys, "__class__", object(), _Sys if _LIVE[0] else _SysWatch),
        (contextlib._RedirectStream, "__enter__", _real_enter, _enter),
        (contextlib._RedirectStream, "__exit__", _real_exit, _exit),
    ]
