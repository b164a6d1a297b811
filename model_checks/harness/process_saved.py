"""The process-wide state ``process_watch`` watches, as a check found it, put back after an
execution that changed it (docs/harness.md, "Process-wide state").

A check runs the program again and again in one process; a real run starts in a fresh one. An
execution that sets the locale, a resource limit or an environment variable with ``os.putenv``,
registers a codec or replaces ``sys.modules["json"]``, and does not undo it (it failed, deadlocked
or simply never meant to) would hand that to the next execution, and to the caller of the check.
Patch mode already puts back the program's modules, ``sys``'s and ``builtins``' names, the
environment mapping, the working directory, the umask and the collector's switch (``patch_state``);
this puts back the rest of what is watched, in any mode, and is the only one to: the interpreter's
settings (the int digit limit and the collector's thresholds among them), the library's C state
(``faulthandler``, ``tracemalloc``, ``socket``'s default timeout),
``decimal``'s context templates, the process's ids and the library classes' attributes written
(their values before, handed over by the C hook). It runs only after an execution whose steps
changed some of it, so a program that changes none pays nothing.
"""

from __future__ import annotations

import _tracemalloc
import codecs
import contextlib
import ctypes
import faulthandler
import gc
import locale
import operator
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

try:
    import resource
except ImportError:  # (not on Windows: no limits to put back)
    resource = None  # type: ignore[assignment]

_ABSENT = object()
_LIMITS = (
    [getattr(resource, n) for n in dir(resource) if n.startswith("RLIMIT_")] if resource is not None else []
)


# The interpreter's settings (``process_watch._SETTINGS``): how each is read and set.
_SETTINGS: list[tuple[Callable[[], Any], Callable[[Any], object]]] = [
    (sys.get_int_max_str_digits, sys.set_int_max_str_digits),
    (sys.getswitchinterval, sys.setswitchinterval),
    (lambda: threading.stack_size(), threading.stack_size),
    (sys.getdlopenflags, sys.setdlopenflags),
    (gc.get_threshold, lambda thresholds: gc.set_threshold(*thresholds)),
]


def _socket_timeout() -> tuple[Callable[[], Any], Callable[[Any], object]] | None:
    found = sys.modules.get("_socket")
    return None if found is None else (found.getdefaulttimeout, found.setdefaulttimeout)


def _tracing(on: tuple[bool, int]) -> None:
    if on[0]:
        _tracemalloc.start(on[1])
    else:
        _tracemalloc.stop()


# The library's C state (``process_watch.READERS``): how each is read and set.
_LIBRARY: list[Callable[[], tuple[Callable[[], Any], Callable[[Any], object]] | None]] = [
    lambda: (faulthandler.is_enabled, lambda on: faulthandler.enable() if on else faulthandler.disable()),
    lambda: ((lambda: (_tracemalloc.is_tracing(), _tracemalloc.get_traceback_limit())), _tracing),
    _socket_timeout,
]
_CONTEXT_FIELDS = ("prec", "rounding", "Emin", "Emax", "capitals", "clamp")
_ABSENT_ATTRIBUTE = Ellipsis  # (what the C hook hands over for an attribute the class did not have)


def context_settings(context: Any) -> tuple[Any, ...]:
    """A ``decimal`` context's settings (the C watch compares its C fields byte by byte)."""
    fields = [getattr(context, f) for f in _CONTEXT_FIELDS]
    return (*fields, tuple(dict(context.traps).items()), tuple(dict(context.flags).items()))


def ids() -> tuple[Any, ...]:
    """The process's user and group ids (none where they cannot be read)."""
    return (os.getresuid(), os.getresgid(), os.getgroups()) if hasattr(os, "getresuid") else ()


def _put_back_ids(saved: tuple[Any, ...]) -> None:
    # the user ids first (back to root, where the saved ones are: it may set the others)
    with contextlib.suppress(OSError):
        os.setresuid(*saved[0])
        os.setgroups(saved[2])
        os.setresgid(*saved[1])


def _c_environ() -> list[bytes]:
    """The C library's environment as it is now (``os.putenv`` changes it, not ``os.environ``)."""
    try:
        entries = ctypes.POINTER(ctypes.c_char_p).in_dll(ctypes.CDLL(None), "environ")
    except (OSError, ValueError):
        return []
    out: list[bytes] = []
    while entries[len(out)] is not None:
        out.append(entries[len(out)])
    return out


def _entry(line: bytes) -> tuple[bytes, bytes]:
    name, _, value = line.partition(b"=")
    return name, value


def _same(d: dict[Any, Any], saved: dict[Any, Any]) -> bool:
    # by identity: a value's ``__eq__`` may be anything (an array's raises)
    return len(d) == len(saved) and all(d.get(k, _ABSENT) is v for k, v in saved.items())


class Saved:
    """What the watched state was when the check started."""

    def __init__(
        self, dicts: tuple[dict[Any, Any], ...], lists: tuple[list[Any], ...], contexts: tuple[Any, ...] = ()
    ) -> None:
        self.dicts = [(d, dict(d)) for d in dicts]
        self.lists = [(items, list(items)) for items in lists]
        self.locale = locale.setlocale(locale.LC_ALL)
        self.environ = _c_environ()
        self.limits = {r: resource.getrlimit(r) for r in _LIMITS}
        self.settings = [(get(), put) for get, put in _SETTINGS]
        self.library = [(access[0](), access) for access in map(lambda make: make(), _LIBRARY) if access]
        self.contexts = [(c, context_settings(c)) for c in contexts]
        self.ids = ids()
        self.classes: dict[tuple[type, str], object] = {}

    def class_written(self, cls: type, name: str, old: object) -> None:
        """A library class's attribute was set or deleted: its first value is the one to put back."""
        self.classes.setdefault((cls, name), old)

    def put_back(self) -> None:
        for d, saved in self.dicts:
            if not _same(d, saved):
                _put_back_names(d, saved, keep_added=d is sys.modules)
        for items, saved_items in self.lists:
            same = len(items) == len(saved_items) and all(map(operator.is_, items, saved_items))
            if not same:
                _put_back_list(items, saved_items)
        if locale.setlocale(locale.LC_ALL) != self.locale:
            locale.setlocale(locale.LC_ALL, self.locale)
        self._environ()
        for (value, put), (get, _) in zip(self.settings, _SETTINGS, strict=True):
            if get() != value:
                put(value)
        for value, (get, put) in self.library:
            if get() != value:
                with contextlib.suppress(OSError, ValueError, RuntimeError):
                    put(value)
        for context, fields in self.contexts:
            if context_settings(context) != fields:
                for field, value in zip(_CONTEXT_FIELDS, fields, strict=False):
                    setattr(context, field, value)
                context.traps, context.flags = dict(fields[-2]), dict(fields[-1])
        if self.ids and ids() != self.ids:
            _put_back_ids(self.ids)
        self._classes()
        for r, limits in self.limits.items():
            if resource.getrlimit(r) != limits:
                # (a hard limit lowered without the right to raise it stays lowered)
                with contextlib.suppress(OSError, ValueError):
                    resource.setrlimit(r, limits)

    def _classes(self) -> None:
        written = list(self.classes.items())
        for (cls, name), old in reversed(written):
            if old is _ABSENT_ATTRIBUTE:
                if name in cls.__dict__:
                    delattr(cls, name)
            elif cls.__dict__.get(name, _ABSENT) is not old:
                setattr(cls, name, old)
        self.classes.clear()  # (putting them back was noted too)

    def _environ(self) -> None:
        now = _c_environ()
        if now == self.environ:
            return
        saved = dict(map(_entry, self.environ))
        for name, value in map(_entry, now):
            if name not in saved:
                os.unsetenv(name)
            elif saved[name] != value:
                os.putenv(name, saved[name])
        current = {name for name, _ in map(_entry, now)}
        for name, value in saved.items():
            if name not in current:
                os.putenv(name, value)


def _put_back_names(d: dict[Any, Any], saved: dict[Any, Any], keep_added: bool) -> None:
    """``d`` as ``saved``: names set since removed (but in ``sys.modules``, whose modules imported
    meanwhile stay loaded: ``patch`` unloads the program's own), names rebound or removed put back."""
    if not keep_added:
        for name in [n for n in d if n not in saved]:
            del d[name]
    for name, value in saved.items():
        if d.get(name, _ABSENT) is not value:
            d[name] = value


def _put_back_list(items: list[Any], saved: list[Any]) -> None:
    if sys.version_info >= (3, 10) and items and saved and _is_codec_path(items, saved):
        # the interpreter's own list: its functions are changed through ``codecs`` (which clears
        # the look-up cache a stale function would still answer from)
        for fn in [f for f in items if not any(f is g for g in saved)]:
            codecs.unregister(fn)
        for fn in [f for f in saved if not any(f is g for g in items)]:
            codecs.register(fn)
        return
    items[:] = saved


def _is_codec_path(items: list[Any], saved: list[Any]) -> bool:
    import encodings

    return saved[0] is encodings.search_function
