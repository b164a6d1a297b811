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
(``_SETTINGS``), the library's C state read by its own C readers (``READERS``: ``faulthandler``,
``tracemalloc``, ``socket``'s default timeout), ``decimal``'s context templates (their C fields,
byte by byte), and the audit events of calls that change the environment, the file system's
names or a resource limit (``WRITES``, and ``open`` of a new name). What no cheap reading finds
is caught where it is made (C only, the hooks of ``_process_hooks.c``): a foreign call through
``ctypes``, an attribute of a class the library publishes set or deleted (``_library_class``), a
call of one of the C setters of the process's ids (``ID_SETTERS``). A list: what is not on it is
not seen (docs/harness.md says what is known missing).
"""

from __future__ import annotations

import _tracemalloc  # noqa: F401 (built in: loaded, its reader is watched before the program imports it)
import faulthandler  # noqa: F401 (the same)
import functools
import gc
import locale
import os
import sys
import sysconfig
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

from model_checks.harness.own_code import own
from model_checks.harness.process_saved import Saved, context_settings, ids
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
    "linecache",
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
    ("linecache", "cache"),
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
        "ctypes.call_function",
    }
)

# The library's C state that a call changes for every thread, read by its own C function: (module,
# reader, name). No audit event shows ``faulthandler.enable`` or ``socket.setdefaulttimeout``, and
# ``getattr(socket, "setdefaulttimeout")`` reaches the setter by no name a patch could wrap.
READERS = (
    ("faulthandler", "is_enabled", "faulthandler (enable, disable)"),
    ("_tracemalloc", "is_tracing", "tracemalloc (start, stop)"),
    ("_socket", "getdefaulttimeout", "socket's default timeout (setdefaulttimeout)"),
)

# ``decimal``'s context templates: a new context (a thread's first ``getcontext()``, ``Context()``)
# copies ``DefaultContext``, which ``DefaultContext.prec = 5`` changes in place.
TEMPLATES = ("DefaultContext", "BasicContext", "ExtendedContext")

# The C setters of the process's ids, wrapped where the C watch is (reading the ids takes three
# system calls, about 0.3 us a step; the Python watch reads them).
ID_SETTERS = (
    "setuid",
    "seteuid",
    "setgid",
    "setegid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setgroups",
    "initgroups",
)
IDS = "the process's user and group ids (os.setuid, os.setegid, ...)"


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


Watched = tuple[
    tuple[dict[str, Any], ...], tuple[list[Any], ...], tuple[str, ...], tuple[Any, ...], tuple[Any, ...]
]


def _watched() -> Watched:
    """The dicts, the lists, the names of all, the readers and the raws (``decimal``'s templates)."""
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
    readers = [(getattr(sys.modules[m], f), name) for m, f, name in READERS if m in sys.modules]
    c_decimal = sys.modules.get("_decimal")
    # (a template rebound to another object is not compared byte by byte: only a C context)
    context = getattr(c_decimal, "Context", None)
    raws = [
        (getattr(c_decimal, t), f"decimal.{t}'s settings")
        for t in TEMPLATES
        if context is not None and type(getattr(c_decimal, t, None)) is context
    ]
    every = names + list_names + [name for _, name in readers] + [name for _, name in raws]
    return (
        tuple(dicts),
        tuple(lists),
        tuple(every),
        tuple(read for read, _ in readers),
        tuple(template for template, _ in raws),
    )


_LIBRARY_FOLDERS = tuple(
    {
        os.path.realpath(sysconfig.get_paths()[k]) + os.sep
        for k in ("stdlib", "platstdlib", "purelib", "platlib")
    }
)
_LIBRARY_MODULES: dict[str, bool] = {}


def _library_module(name: str) -> bool:
    """Is module ``name`` the standard library's or an installed package's (not the program's, not
    the harness's)? Its code is not traced: no access shows what it reads of its classes."""
    known = _LIBRARY_MODULES.get(name)
    if known is None:
        top = name.partition(".")[0]
        where = getattr(sys.modules.get(name), "__file__", None)
        known = top != "model_checks" and (
            top in sys.stdlib_module_names
            or (isinstance(where, str) and os.path.realpath(where).startswith(_LIBRARY_FOLDERS))
        )
        _LIBRARY_MODULES[name] = known
    return known


def _library_class(cls: type) -> bool:
    """Does the library publish ``cls`` by its name (``json.decoder.JSONDecoder``)? A write to it is a
    write of process state: every thread reaches it by that name. A class made for one object
    (``MagicMock``'s class of each mock, a ``namedtuple`` made in a function) is not published."""
    module = getattr(cls, "__module__", None)  # (a static type's: from its C name)
    if not isinstance(module, str) or not _library_module(module):
        return False
    found: Any = sys.modules.get(module)
    for part in cls.__qualname__.split("."):
        found = getattr(found, part, None)
    return found is cls


def _class_written(cls: type, name: str, old: object) -> bool:
    """The C hook's question, a class's attribute set or deleted while the watch is armed: is it
    process state (then its value before is kept, to put back)? Not when the harness made the
    write (``patch_local`` hooks a library's ``threading.local`` subclass, and undoes it itself)."""
    caller = sys._getframe(0).f_back  # (None: a C module's code set it, at its import)
    if (caller is not None and own(caller.f_code.co_filename)) or not _library_class(cls):
        return False
    saved = _SAVED[0]
    if saved is not None:
        saved.class_written(cls, name, old)
    return True


def _install_hooks() -> None:
    """The C hooks (``_process_hooks.c``), once a process: a foreign call, a library class's
    attribute, an id setter's call."""
    if NATIVE is None or _HOOKED:
        return
    import _ctypes

    NATIVE.watch_hook_foreign(_ctypes.CFuncPtr)
    NATIVE.watch_hook_classes(_class_written)
    NATIVE.watch_hook_setters(tuple((IDS, getattr(os, n)) for n in ID_SETTERS if hasattr(os, n)))
    _HOOKED.append(True)


_HOOKED: list[bool] = []


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
        self.readers: list[tuple[str, Callable[[], object]]] = []
        self.answers: list[object] = []

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

    def _read(self) -> str | None:
        for (name, read), value in zip(self.readers, self.answers, strict=True):
            if read() != value:
                return name
        return None

    def arm(
        self,
        dicts: tuple[Any, ...],
        lists: tuple[Any, ...],
        names: tuple[str, ...],
        readers: tuple[Any, ...] = (),
        raws: tuple[Any, ...] = (),
    ) -> None:
        if not self.hooked:
            sys.addaudithook(self._audit)
            self.hooked = True
        self.dicts, self.lists, self.names = dicts, lists, names[: len(dicts) + len(lists)]
        others = names[len(self.names) :]
        contexts = [functools.partial(context_settings, c) for c in raws]
        # (the ids read: the C watch wraps their setters, which Python cannot)
        self.readers = [*zip(others, [*readers, *contexts], strict=True), (IDS, ids)]
        self.armed = True
        self.reset()

    def reset(self) -> None:
        self._take()
        self.gc = gc.isenabled()
        self.recursion = sys.getrecursionlimit()
        self.locale = locale.setlocale(locale.LC_ALL)
        self.settings = [read() for _, read in _SETTINGS]
        self.answers = [read() for _, read in self.readers]

    def changed(self) -> str | None:
        if not self.armed:
            return None
        found = next((self.names[i] for i in range(len(self.dicts)) if self._dict_changed(i)), None)
        if found is None:
            now = [[id(x) for x in items] for items in self.lists]
            found = next(
                (self.names[len(self.dicts) + i] for i, a in enumerate(now) if a != self.readings[i]), None
            )
        found = found or self._read() or self._others()
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
        _install_hooks()
        dicts, lists, names, readers, raws = _watched()
        if _SAVED[0] is None:
            _SAVED[0] = Saved(dicts, lists, raws)
        _arm(dicts, lists, names, readers, raws)
    else:
        _reset()


__all__ = ["ID_SETTERS", "READERS", "WATCHED", "WRITES", "changed", "new_check", "put_back", "reset"]
