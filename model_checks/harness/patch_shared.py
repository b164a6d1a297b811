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
it. Where they name ``setrecursionlimit``,
``sys.setrecursionlimit`` is a write of "the recursion limit", and ``sys.getrecursionlimit`` and
each controlled thread's start reads of it: the explorer runs a thread that recurses from its
start before and after the limit changes. Since the ninth review (session 41) the umask
(``os.umask``; a call that may create a file reads it), the collector (``gc.disable``/``enable``/
``collect``; ``isenabled`` reads) and the int digit limit (``sys.set_int_max_str_digits``; its
getter and each thread's start read it) are the same, and since the tenth review (session 42, t78)
socket's default timeout (``socket.setdefaulttimeout``; ``getdefaulttimeout`` and every
``socket.socket`` made, by ``socketpair``, ``create_connection``, ``fromfd``, ``accept``, read it),
each where the program names its setter,
and a call counts when a library makes it for the program too: pathlib's ``io.open``,
``os.path.exists``'s ``os.stat``, ``contextlib.chdir``'s ``os.chdir`` (s42, s43: one order only).
It was the program's own calls only because ``tempfile``'s first look for its folder, made once a
process, took a step the later executions did not; ``patch_state`` now makes it again each
execution. Lanecheck's own calls never count. Not seen: a recursion or an int's conversion after
the thread's first operation (only its start reads the limit), a collection the allocator starts,
a relative path reaching the OS from C (``sqlite3.connect``). A program that names none of the
setters keeps every one of these CPython's.
"""

from __future__ import annotations

import builtins
import contextlib
import gc
import io
import os
import socket
import sys
from collections.abc import Callable
from types import CodeType, FrameType, ModuleType
from typing import Any

from model_checks.harness import patch_threads, per_execution
from model_checks.harness.own_code import own
from model_checks.harness.patch_streams import module_names, module_refers
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.race_sites import SKIP_FILES

_CWD = "the working directory"
_LIMIT = "the recursion limit"
_UMASK = "the umask"
_GC = "the collector"
_DIGITS = "the int digit limit"
_TIMEOUT = "socket's default timeout"


def access(name: str, kind: str) -> None:
    """A controlled thread reads or writes the process's ``name``."""
    rt = _controlled()
    if rt is None:
        return
    per_execution.access(rt, name, kind)


def _from_program(frame: FrameType | None) -> bool:
    """Is the call the program's, made by its own code or by library code it called (pathlib's
    ``io.open``, ``os.path.exists``'s ``os.stat``, ``contextlib.chdir``'s ``os.chdir``), not by
    lanecheck's? The nearest frame outside the standard library and the packages decides."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if frame.f_code in _THREAD_STARTS:
            return True  # (a thread's target is a library's function: ``Thread(target=os.chdir)``)
        if own(filename):
            return False
        if not filename.startswith(SKIP_FILES):
            return True
        frame = frame.f_back
    return False


# where a controlled thread starts its target (``threading``'s ``run``, or ``start_new_thread``'s
# function): below it is lanecheck's, the thread's code is the program's
_BODIES = patch_threads._start_new.__code__.co_consts
_THREAD_STARTS = frozenset(
    [patch_threads._bootstrap.__code__, patch_threads.Thread.run.__code__, patch_threads.Timer.run.__code__]
    + [c for c in _BODIES if isinstance(c, CodeType) and c.co_name == "body"]
)


def _relative(path: object) -> bool:
    if isinstance(path, int):  # a file descriptor
        return False
    if not isinstance(path, (str, bytes, os.PathLike)):
        return False
    try:
        return not os.path.isabs(os.fspath(path))
    except TypeError:
        return False


# when a call reads or writes a location: from its positional and keyword arguments
When = Callable[[tuple[Any, ...], dict[str, Any]], bool]
Rule = tuple[str, str, When]  # (location, "read" or "write", when)


def _always(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    return True


def _paths(count: int) -> When:
    """When one of the first ``count`` arguments is a relative path (or none is given)."""

    def relative(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        given = args[:count]
        return not given or any(_relative(p) for p in given)

    return relative


def _creates_file(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """``open``'s mode, ``os.open``'s flags: may the call create a file (whose mode the umask
    decides)?"""
    flags = args[1] if len(args) > 1 else kwargs.get("mode", kwargs.get("flags", "r"))
    if isinstance(flags, int):
        return bool(flags & os.O_CREAT)
    return not isinstance(flags, str) or any(c in flags for c in "wax")


def _wrapped(module: Any, name: str, rules: list[Rule]) -> tuple[Any, str, Any, Any]:
    real = getattr(module, name)

    def call(*args: Any, **kwargs: Any) -> Any:
        if _controlled() is not None and _from_program(sys._getframe(1)):
            for location, kind, when in rules:
                if when(args, kwargs):
                    access(location, kind)
        return real(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return module, name, real, call


def _begin() -> None:
    for location in _BEGIN_READS:
        access(location, "read")


# the locations each controlled thread's start reads (set at patching)
_BEGIN_READS: list[str] = []

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
    ("access", 1),
    ("chmod", 1),
    ("utime", 1),
    ("readlink", 1),
    ("truncate", 1),
    ("link", 2),
    ("symlink", 2),
    ("mkfifo", 1),
)
_CREATING = ((builtins, "open"), (io, "open"), (os, "open"))
_GC_WRITES = ("disable", "enable", "collect", "set_threshold", "freeze", "unfreeze")
_GC_READS = ("isenabled", "get_threshold")


def _names_gc(module: ModuleType) -> bool:
    held = any(id(v) in _GC_FUNCTIONS for v in list(vars(module).values()))
    return module_names(module, _GC_SETTERS) and (held or module_names(module, frozenset({"gc"})))


_CONTEXT_CHDIR = getattr(contextlib, "chdir", None)
_GC_FUNCTIONS = frozenset(id(getattr(gc, n)) for n in _GC_WRITES + _GC_READS)
_GC_SETTERS = frozenset(("disable", "enable", "set_threshold", "freeze"))


def at_patching(modules: tuple[ModuleType, ...]) -> list[tuple[Any, str, Any, Any]]:
    """The working directory's calls where ``modules`` name ``chdir``/``fchdir`` (or hold
    ``contextlib.chdir``), the recursion limit's where they name ``setrecursionlimit``, the
    umask's, the collector's, the int digit limit's and socket's default timeout's where they name
    their setters."""
    rules: dict[tuple[Any, str], list[Rule]] = {}

    def add(module: Any, name: str, location: str, kind: str, when: When = _always) -> None:
        if hasattr(module, name):
            rules.setdefault((module, name), []).append((location, kind, when))

    _BEGIN_READS.clear()
    if any(module_refers(m, frozenset({"chdir", "fchdir"}), (_CONTEXT_CHDIR,)) for m in modules):
        add(os, "chdir", _CWD, "write")
        add(os, "fchdir", _CWD, "write")
        add(os, "getcwd", _CWD, "read")
        add(os, "getcwdb", _CWD, "read")
        add(builtins, "open", _CWD, "read", _paths(1))
        add(io, "open", _CWD, "read", _paths(1))
        for name, count in _BY_PATH:
            add(os, name, _CWD, "read", _paths(count))
    if any(module_names(m, frozenset({"setrecursionlimit"})) for m in modules):
        add(sys, "setrecursionlimit", _LIMIT, "write")
        add(sys, "getrecursionlimit", _LIMIT, "read")
        _BEGIN_READS.append(_LIMIT)
    if any(module_names(m, frozenset({"umask"})) for m in modules):
        add(os, "umask", _UMASK, "write")  # (it returns the old mask: a read too)
        for module, name in _CREATING:
            add(module, name, _UMASK, "read", _creates_file)
        for name in ("mkdir", "mkfifo", "mknod"):
            add(os, name, _UMASK, "read")
    if any(_names_gc(m) for m in modules):
        for name in _GC_WRITES:
            add(gc, name, _GC, "write")
        for name in _GC_READS:
            add(gc, name, _GC, "read")
    if any(module_names(m, frozenset({"set_int_max_str_digits"})) for m in modules):
        add(sys, "set_int_max_str_digits", _DIGITS, "write")
        add(sys, "get_int_max_str_digits", _DIGITS, "read")
        _BEGIN_READS.append(_DIGITS)
    if any(module_names(m, frozenset({"setdefaulttimeout"})) for m in modules):
        add(socket, "setdefaulttimeout", _TIMEOUT, "write")
        add(socket, "getdefaulttimeout", _TIMEOUT, "read")
        add(socket.socket, "__init__", _TIMEOUT, "read")  # (``socketpair``, ``accept``, ``fromfd``...)
    out = [_wrapped(module, name, found) for (module, name), found in rules.items()]
    if _BEGIN_READS:
        # (the "real" is no object a program holds: ``patch`` rebinds a global found to be it)
        out.append((patch_threads, "THREAD_BEGINS", object(), (_begin,)))
    return out
