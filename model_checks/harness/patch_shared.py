"""The process's state every thread shares, in a controlled thread: an operation where it is used.

The working directory and the recursion limit are the process's, not a thread's: ``os.chdir`` in
one thread moves another thread's relative ``open``, and ``sys.setrecursionlimit`` in one thread
decides whether another thread's deep recursion fails. Neither was an operation, so the explorer
ran one order only and proved a program that fails in a third of its real runs (eighth review,
session 40: r121, r126). Where the program's modules name ``chdir``/``fchdir`` (their code, as
``patch_streams`` reads it), ``os.chdir``/``os.fchdir`` in a controlled thread are writes of one
location per execution, "the working directory", and ``os.getcwd`` and the calls given a relative
path (``open``, ``os.open``, ``os.stat``, ``os.lstat``, ``os.listdir``, ``os.scandir``,
``os.remove``, ``os.unlink``, ``os.mkdir``, ``os.rmdir``, ``os.rename``, ``os.replace``) reads of
it, each when the program's own code makes the call. Where they name ``setrecursionlimit``,
``sys.setrecursionlimit`` is a write of "the recursion limit", and ``sys.getrecursionlimit`` and
each controlled thread's start reads of it: the explorer runs a thread that recurses from its
start before and after the limit changes. Not seen: a recursion after the thread's first
operation (only its start reads the limit), another call given a relative path, a library's call
(``tempfile``'s first look for its folder, made once a process, made the first execution take a
step the later ones did not). A program that names neither keeps every one of these CPython's.
"""

from __future__ import annotations

import builtins
import io
import os
import sys
from types import ModuleType
from typing import Any

from model_checks.harness import patch_threads
from model_checks.harness.own_code import own
from model_checks.harness.patch_streams import module_names
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.race_sites import SKIP_FILES
from model_checks.harness.rt.objects import LocationState, Op
from model_checks.harness.runtime import ControlledRuntime

_CWD = "the working directory"
_LIMIT = "the recursion limit"


class _Locations:
    """One execution's locations of the process's state."""

    def __init__(self, rt: ControlledRuntime) -> None:
        self.ex = rt._ex
        self.of: dict[str, LocationState] = {}

    def location(self, name: str) -> LocationState:
        found = self.of.get(name)
        if found is None:
            made = self.ex.new_object(lambda oid: LocationState(oid, name))
            assert isinstance(made, LocationState)
            found = self.of[name] = made
        return found


_CURRENT: list[_Locations | None] = [None]


def access(name: str, kind: str) -> None:
    """A controlled thread reads or writes the process's ``name``."""
    rt = _controlled()
    if rt is None:
        return
    here = _CURRENT[0]
    if here is None or here.ex is not rt._ex:
        here = _CURRENT[0] = _Locations(rt)
    rt._ex.perform(Op(kind, here.location(name), read=kind == "read"))


def _program(filename: str) -> bool:
    """Is the call the program's own (not lanecheck's, the standard library's or a package's)?"""
    return not own(filename) and not filename.startswith(SKIP_FILES)


def _relative(path: object) -> bool:
    if isinstance(path, int):  # a file descriptor
        return False
    if not isinstance(path, (str, bytes, os.PathLike)):
        return False
    try:
        return not os.path.isabs(os.fspath(path))
    except TypeError:
        return False


def _writing(module: Any, name: str, location: str) -> tuple[Any, str, Any, Any]:
    real = getattr(module, name)

    def write(*args: Any, **kwargs: Any) -> Any:
        if _program(sys._getframe(1).f_code.co_filename):
            access(location, "write")
        return real(*args, **kwargs)

    write.__name__ = write.__qualname__ = name
    return module, name, real, write


def _reading(module: Any, name: str, location: str, paths: int) -> tuple[Any, str, Any, Any]:
    """``module.name`` a read of ``location`` (with ``paths``: only when one of its first
    ``paths`` arguments is a relative path; 0: always)."""
    real = getattr(module, name)

    def read(*args: Any, **kwargs: Any) -> Any:
        if _program(sys._getframe(1).f_code.co_filename):
            given = args[:paths]
            if not paths or not given or any(_relative(p) for p in given):
                access(location, "read")
        return real(*args, **kwargs)

    read.__name__ = read.__qualname__ = name
    return module, name, real, read


def _begin() -> None:
    access(_LIMIT, "read")


# ``os``'s calls given a path, each with how many of its first arguments are paths
_BY_PATH: tuple[tuple[str, int], ...] = (
    ("stat", 1),
    ("lstat", 1),
    ("listdir", 1),
    ("scandir", 1),
    ("remove", 1),
    ("unlink", 1),
    ("mkdir", 1),
    ("rmdir", 1),
    ("rename", 2),
    ("replace", 2),
    ("open", 1),
)


def at_patching(modules: tuple[ModuleType, ...]) -> list[tuple[Any, str, Any, Any]]:
    """The working directory's calls where ``modules`` name ``chdir``/``fchdir``, the recursion
    limit's where they name ``setrecursionlimit``."""
    out: list[tuple[Any, str, Any, Any]] = []
    if any(module_names(m, frozenset({"chdir", "fchdir"})) for m in modules):
        out += [_writing(os, "chdir", _CWD), _writing(os, "fchdir", _CWD), _reading(os, "getcwd", _CWD, 0)]
        out += [_reading(builtins, "open", _CWD, 1), _reading(io, "open", _CWD, 1)]
        out += [_reading(os, name, _CWD, n) for name, n in _BY_PATH]
    if any(module_names(m, frozenset({"setrecursionlimit"})) for m in modules):
        out += [_writing(sys, "setrecursionlimit", _LIMIT), _reading(sys, "getrecursionlimit", _LIMIT, 0)]
        # (the "real" is no object a program holds: ``patch`` rebinds a global found to be it)
        out.append((patch_threads, "THREAD_BEGINS", object(), (_begin,)))
    return out
