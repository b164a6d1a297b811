"""The process-state watch: did a step's code change state every thread of the process shares,
though no traced access and no operation showed it? (docs/harness.md, "Process-wide state")

A program's threads share more than its objects: the C locale, the collector's switch, the
environment, resource limits, the file names of the file system, and the names the standard
library's modules keep (``threading.excepthook``, ``tempfile.tempdir``, ``sys.modules``,
``builtins``, ``warnings.showwarning``...). The code that reads them is the interpreter's or the
library's, never traced, so no access of the race detector and no operation of the scheduler
shows a read; DPOR would order two steps that touch them in one way only, and "exhaustive"
would be claimed of a program whose bug needs the other order (eleventh outside review: twelve
such programs). So the scheduler asks ``changed()`` at the end of every step, and DPOR and the
state search take a step that changed any of them as dependent with every step of every other
thread (``strategies/search.py``): both orders of it and each other step are explored. A read
needs no hook; the write is seen whoever made it (the program, a library it called, the C code
under that). After an execution that changed any of it, it is put back (``process_saved``).

What is watched: each module dict of ``WATCHED`` and registry of ``REGISTRIES``, the lists the
interpreter reads (``sys.path``, ``sys.meta_path``, ``sys.path_hooks``, ``gc.callbacks``, the
codec search functions), the C locale, the collector's switch, the interpreter's settings
(``_SETTINGS``), and the audit events of calls that change the environment, the file system's
names or a resource limit (``WRITES``, and ``open`` of a new name). A list: what is not on it
is not seen (docs/harness.md says what the twelfth review found missing).
"""

from __future__ import annotations

import gc
import locale
import os
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

from model_checks.harness.process_saved import Saved
from model_checks.harness.rt.dict_versions import SUPPORTED as VERSIONS_READABLE
from model_checks.harness.rt.dict_versions import _version_view
from model_checks.harness.rt.native import NATIVE

# The modules whose names configure the process for every thread: a rebinding of one of their
# names is a write of process state. Those imported when a check starts (or later: ``reset``
# looks again while ``sys.modules`` grows) are watched.
WATCHED = (
    "builtins",
    "sys",
    "os",
    "threading",
    "warnings",
    "tempfile",
    "time",
    "locale",
    "codecs",
    "socket",
    "logging",
    "copyreg",
    "mimetypes",
    "shutil",
    "asyncio.events",
    "urllib.request",
    "posixpath",
    "ssl",
    "email.charset",
)

# The registries the standard library keeps in a dict or list (or an object's fields) that its
# functions change in place, for every thread: (module, attribute path).
REGISTRIES = (
    ("copyreg", "dispatch_table"),
    ("copyreg", "_extension_registry"),
    ("copyreg", "_inverted_registry"),
    ("warnings", "filters"),
    ("mimetypes", "types_map"),
    ("mimetypes", "types_map_inv"),
    ("shutil", "_ARCHIVE_FORMATS"),
    ("shutil", "_UNPACK_FORMATS"),
    ("logging", "_levelToName"),
    ("logging", "_nameToLevel"),
    ("logging", "root.manager"),
    ("email.charset", "CHARSETS"),
    ("email.charset", "ALIASES"),
    ("email.charset", "CODEC_MAP"),
)

# The audit events of calls that change what every thread sees (the C hook's list is the same).
WRITES = frozenset(
    {
        "os.putenv",
        "os.unsetenv",
        "os.chdir",
        "os.rename",
        "os.remove",
        "os.rmdir",
        "os.mkdir",
        "os.link",
        "os.symlink",
        "os.chmod",
        "os.chown",
        "os.truncate",
        "os.utime",
        "os.setxattr",
        "os.removexattr",
        "os.chflags",
        "resource.setrlimit",
        "resource.prlimit",
    }
)


_SEARCHERS: list[list[Any] | None] = []


def _codec_search_path() -> list[Any] | None:
    """The interpreter's list of codec search functions (``codecs.register`` appends to it): the
    list the interpreter holds (C), or (Python) the one list holding ``encodings.search_function``,
    which the interpreter registers first, at its head. Looked for once (in Python a walk of the
    heap): the interpreter keeps that list for its life."""
    if not _SEARCHERS and NATIVE is not None:
        _SEARCHERS.append(NATIVE.watch_codec_search_path())
    if not _SEARCHERS:
        import encodings

        found = [
            holder
            for holder in gc.get_referrers(encodings.search_function)
            if type(holder) is list and holder and holder[0] is encodings.search_function
        ]
        _SEARCHERS.append(found[0] if len(found) == 1 else None)
    return _SEARCHERS[0]


def _watched() -> tuple[tuple[dict[str, Any], ...], tuple[list[Any], ...], tuple[str, ...]]:
    dicts: list[dict[str, Any]] = [sys.modules]
    names = ["sys.modules"]
    for name in WATCHED:
        module = sys.modules.get(name)
        if isinstance(module, ModuleType):
            dicts.append(vars(module))
            names.append(f"module {name}'s names")
    lists: list[list[Any]] = [sys.path, sys.meta_path, sys.path_hooks, gc.callbacks]
    list_names = ["sys.path", "sys.meta_path", "sys.path_hooks", "gc.callbacks"]
    for module_name, path in REGISTRIES:
        found: Any = sys.modules.get(module_name)
        for part in path.split("."):
            found = getattr(found, part, None)
        if type(found) is dict:
            dicts.append(found)
            names.append(f"{module_name}.{path}")
        elif type(found) is list:
            lists.append(found)
            list_names.append(f"{module_name}.{path}")
        elif found is not None and type(getattr(found, "__dict__", None)) is dict:
            dicts.append(vars(found))  # (an object's fields: logging's manager, its ``disable``)
            names.append(f"{module_name}.{path}'s fields")
    searchers = _codec_search_path()
    if searchers is not None:
        lists.append(searchers)
        list_names.append("the codec search functions (codecs.register)")
    return tuple(dicts), tuple(lists), tuple(names + list_names)


def _creates(args: tuple[Any, ...]) -> bool:
    """Does ``open``'s audit (path, mode, flags) make a new name (a path not there yet, opened to
    create: a mode with w, x or a, or flags with ``O_CREAT``)?"""
    if len(args) < 3 or not isinstance(args[0], (str, bytes)):
        return False
    path, mode, flags = args[:3]
    creating = (
        bool(set(mode) & set("wxa"))
        if isinstance(mode, str)
        else isinstance(flags, int) and bool(flags & os.O_CREAT)
    )
    return creating and not os.path.lexists(path)


# The interpreter's settings a setter changes for every thread (the C watch reads its state).
_SETTINGS: list[tuple[str, Callable[[], object]]] = [
    ("the int digit limit (sys.set_int_max_str_digits)", sys.get_int_max_str_digits),
    ("the switch interval (sys.setswitchinterval)", sys.getswitchinterval),
    ("the threads' stack size (threading.stack_size)", lambda: threading.stack_size()),
    ("the dlopen flags (sys.setdlopenflags)", sys.getdlopenflags),
    ("the collector's thresholds (gc.set_threshold)", gc.get_threshold),
]


class _InPython:
    """The watch where the C module is not built: the same readings, made by Python calls."""

    def __init__(self) -> None:
        self.dicts: tuple[dict[str, Any], ...] = ()
        self.lists: tuple[list[Any], ...] = ()
        self.names: tuple[str, ...] = ()
        self.readings: list[list[int]] = []
        self.versions: list[int] = []
        self.items: list[dict[Any, int]] = []
        self.event: str | None = None
        self.armed = False
        self.hooked = False
        self.gc = True
        self.recursion = 0
        self.locale = ""
        self.settings: list[object] = []

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.armed or self.event is not None:
            return
        if event == "open":
            if _creates(args):
                self.event = "open (a new file)"
            return
        if event not in WRITES:
            return
        if event == "resource.prlimit" and (len(args) < 3 or args[2] is None):
            return  # prlimit(pid, resource) reads
        self.event = event

    def _take(self) -> None:
        # each dict's version where it can be read (a fast test) and its items by identity (a
        # name rebound and put back within a step is no change); each list's items by identity
        self.versions = [_version_view(d).value if VERSIONS_READABLE else -1 for d in self.dicts]
        self.items = [{k: id(v) for k, v in d.items()} for d in self.dicts]
        self.readings = [[id(x) for x in items] for items in self.lists]
        self.event = None

    def _dict_changed(self, i: int) -> bool:
        d = self.dicts[i]
        if VERSIONS_READABLE:
            version = _version_view(d).value
            if version == self.versions[i]:
                return False
            self.versions[i] = version
        return {k: id(v) for k, v in d.items()} != self.items[i]

    def _others(self) -> str | None:
        if self.event is not None:
            return self.event
        if gc.isenabled() != self.gc:
            return "the garbage collector's switch"
        if sys.getrecursionlimit() != self.recursion:
            return "the recursion limit"
        if locale.setlocale(locale.LC_ALL) != self.locale:
            return "the C locale"
        for (name, read), value in zip(_SETTINGS, self.settings, strict=True):
            if read() != value:
                return name
        return None

    def arm(self, dicts: tuple[Any, ...], lists: tuple[Any, ...], names: tuple[str, ...]) -> None:
        if not self.hooked:
            sys.addaudithook(self._audit)
            self.hooked = True
        self.dicts, self.lists, self.names = dicts, lists, names
        self.armed = True
        self.reset()

    def reset(self) -> None:
        self._take()
        self.gc = gc.isenabled()
        self.recursion = sys.getrecursionlimit()
        self.locale = locale.setlocale(locale.LC_ALL)
        self.settings = [read() for _, read in _SETTINGS]

    def changed(self) -> str | None:
        if not self.armed:
            return None
        found = next((self.names[i] for i in range(len(self.dicts)) if self._dict_changed(i)), None)
        if found is None:
            now = [[id(x) for x in items] for items in self.lists]
            found = next(
                (self.names[len(self.dicts) + i] for i, a in enumerate(now) if a != self.readings[i]), None
            )
        found = found or self._others()
        if found is not None:
            self.reset()
        return found


_PY = _InPython()
if NATIVE is not None:
    _arm: Callable[..., None] = NATIVE.watch_arm
    _reset: Callable[[], None] = NATIVE.watch_reset
    changed: Callable[[], str | None] = NATIVE.watch_changed
else:
    _arm, _reset, changed = _PY.arm, _PY.reset, _PY.changed

_ARMED_WITH: list[int] = [-1]  # the number of modules when the watch was last armed
_SAVED: list[Saved | None] = [None]


def new_check() -> None:
    """A check starts: its first execution's ``reset`` watches what exists then (and looks again
    when modules were added), and keeps it to put back after an execution that changed it (then:
    after patch mode made what every execution starts with, ``patch_state.warm_library``)."""
    _ARMED_WITH[0] = -1
    _SAVED[0] = None


def put_back() -> None:
    """An execution changed the process's state (``Execution.process_dirty``): put back what the
    check started with, so the next execution starts where the first did, as a real run starts
    in a fresh process (and the caller of the check goes on with its own state)."""
    saved = _SAVED[0]
    if saved is not None:
        saved.put_back()


def reset() -> None:
    """An execution starts: the state now is the one its steps are compared with."""
    if len(sys.modules) != _ARMED_WITH[0]:
        _ARMED_WITH[0] = len(sys.modules)
        dicts, lists, names = _watched()
        if _SAVED[0] is None:
            _SAVED[0] = Saved(dicts, lists)
        _arm(dicts, lists, names)
    else:
        _reset()


__all__ = ["WATCHED", "WRITES", "changed", "new_check", "put_back", "reset"]
