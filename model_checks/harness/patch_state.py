"""Each execution starts from the program's modules as its check's first execution found them.

A program's function is explored by running it again and again in one process, where a real run
starts it once in a fresh interpreter. A module global it changes (``global total; total += 1``,
``RESULTS.append(...)``, ``Registry.count += 1``) would carry one execution's values into the
next: an outside review saw a correctly locked counter fail its ``assert total == 2`` at the
fourth execution (session 35). So ``patched(module)`` takes a ``Snapshot`` of the module's
globals, its classes' data and the attributes (and the class: ``m.__class__ = Busy``) of the
objects of its own classes it made at import, and every execution restores it: the bindings as
they were, the contents of lists, dicts, sets and deques as they were (copied, so an execution's
changes to them do not reach the snapshot), a counter (``itertools.count()``) or a
``random.Random`` replaced by a copy of it as it was, its functions' attributes, its functions'
(and its classes' methods') mutable default arguments and the variables its closures made at
import close over (``def once(done=[False])``, ``nonlocal done``: session 37, the first
execution's call hid the path of every later one), globals made since removed, its ``lru_cache``
functions emptied and the ``random`` module's state as it was. A tuple (a named tuple, a
function's defaults) cannot change, so what it holds is restored in place, each element as a
global bound to it would be (session 39: a dict inside a module's tuple kept the first execution's
write). Also the process's state a program changes, its environment and ``sys``'s attributes, and
``logging``'s configuration (``patch_logging``): both put back when each execution ends. Not
restored: other iterators, objects of other modules' classes made at import (but a namespace and
a ``Future``: ``_LIBRARY_STATE``), its own objects inside a tuple, and what is reached only
through them."""

from __future__ import annotations

import _random
import array
import builtins
import concurrent.futures
import copy
import ctypes
import gc
import io
import itertools
import os
import random
import signal
import struct
import sys
import tempfile
import types
from collections import deque
from collections.abc import Callable
from typing import Any, cast

from model_checks.harness import patch_logging, patch_mp_memory, signal_wakeup
from model_checks.harness.rt import dict_versions
from model_checks.harness.rt.dict_versions import Moved
from model_checks.harness.rt.heap_walk import _raw_getattr

_MUTABLE = (list, dict, set, deque, bytearray, array.array)
# objects of other modules' classes whose fields a module made at import is restored like its own
# objects': a namespace, and a ``Future`` used as a one-shot hand-off (seventh review, p172: the
# first execution's result was found set in the next, "the test is not deterministic")
_LIBRARY_STATE = (types.SimpleNamespace, concurrent.futures.Future)
_STREAMS = (io.StringIO, io.BytesIO)  # restored to their contents and position
_CODE = (
    types.ModuleType,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    classmethod,
    staticmethod,
    property,
)


class _Fresh:
    """A value restored by putting a copy of it, as it was, in its place: an object whose state
    cannot be put back in place (a counter's next number, a generator's draws)."""

    def __init__(self, value: object) -> None:
        self.value = copy.deepcopy(value)

    def make(self) -> object:
        return copy.deepcopy(self.value)


# iterators and generators of a module's own that copy (``ids = itertools.count()``)
_REPLACED = (itertools.count, itertools.cycle, itertools.repeat, random.Random)


class _Within:
    """A tuple's elements, each saved as ``_saved`` saves a value: a tuple (a named tuple, a
    function's defaults) cannot change, so what changes is the objects it holds, each restored in
    place as a global bound to it would be (``_state = ({"fresh": True},)``, sixth review: the dict
    kept the first execution's write, and a later execution took another path)."""

    def __init__(self, parts: list[tuple[object, object | None]]) -> None:
        self.parts = parts


# how many tuples deep the walk goes (a cons list of tuples, ``(1, (2, (3, ...)))``, is no state)
_TUPLES_DEEP = 8


def _saved(value: object, depth: int = 0) -> tuple[object, object | None]:
    """(the value, a copy of its contents to restore it from, or None when it is not restored)."""
    # (kinds read from ``type(value)``: ``isinstance`` would ask a program's object its
    # ``__class__``, running its ``__getattribute__``, which may take a lock: seventh review, p095,
    # whose first execution then took steps the later ones did not, "not deterministic")
    kind = type(value)
    if issubclass(kind, tuple):  # (its elements' own copies: a tuple holds no cycle by itself)
        if depth >= _TUPLES_DEEP:
            return value, None
        parts = [_saved(v, depth + 1) for v in cast(tuple[object, ...], value)]
        # an element replaced by a copy (a counter) cannot be put back inside it
        kept = [(v, c) for v, c in parts if c is not None and not isinstance(c, _Fresh)]
        return value, (_Within(kept) if kept else None)
    try:
        if issubclass(kind, _MUTABLE):
            return value, copy.deepcopy(value)
        if issubclass(kind, _REPLACED):
            return value, _Fresh(value)
        if issubclass(kind, _STREAMS):
            stream = cast(io.StringIO, value)
            return value, (stream.getvalue(), stream.tell())
        return value, patch_mp_memory.saved(value)  # ``RawValue``, a ``ctypes`` array ...
    except Exception:  # contents that cannot be copied are left as they are
        pass
    return value, None


def _restore(value: Any, contents: Any) -> None:
    """Put ``contents`` back into ``value`` in place (the objects that refer to it see it)."""
    if contents is None:
        return
    if isinstance(contents, _Within):
        for part, kept in contents.parts:
            _restore(part, kept)
        return
    if isinstance(contents, patch_mp_memory.Memory):
        contents.put_back(value)
        return
    if isinstance(value, _STREAMS):
        text, position = contents
        value.seek(0)
        value.truncate()
        value.write(text)
        value.seek(position)
        return
    fresh = copy.deepcopy(contents)
    if isinstance(value, dict):
        value.clear()
        value.update(fresh)
    elif isinstance(value, (list, bytearray, array.array)):
        value[:] = fresh
    elif isinstance(value, (set, deque)):
        value.clear()
        if isinstance(value, deque):
            value.extend(fresh)
        else:
            value.update(fresh)


# ``random``'s module generator, and its Mersenne Twister's state read in place: CPython's
# ``RandomObject`` after the object's head, ``int index`` then ``uint32_t state[624]``, one block
# of 2,500 bytes (copied by a ctypes array's ``raw``: no foreign call, which the process watch
# would take for one). Checked against ``getstate`` at import; None where the layout is another's
# (then the state is always set).
_MODULE_GENERATOR: Any = vars(random)["_inst"]
_MT_AT = object.__basicsize__
_MT_BLOCK = ctypes.c_char * (4 + 4 * 624)


def _mt_view(gen: random.Random) -> Any:
    """A live view of ``gen``'s state, if the layout is the one described above (else None)."""
    probe = random.Random.__new__(random.Random)
    _random.Random.seed(probe, 20261207)
    _random.Random.getrandbits(probe, 100)  # (an index other than the seed's)
    words = _random.Random.getstate(probe)
    raw = _MT_BLOCK.from_address(id(probe) + _MT_AT).raw
    if sys.implementation.name != "cpython" or struct.unpack(f"i{len(words) - 1}I", raw) != (
        words[-1],
        *words[:-1],
    ):
        return None
    return _MT_BLOCK.from_address(id(gen) + _MT_AT)


_MT_VIEW = _mt_view(_MODULE_GENERATOR)  # (valid while the module's generator lives: always)


def _mt_raw() -> bytes | None:
    """The module generator's Mersenne Twister state, as bytes (None: not readable here)."""
    return None if _MT_VIEW is None else _MT_VIEW.raw


def _moved_gauss(saved: object) -> bool:
    """Is the module generator's ``gauss_next`` (part of its state) another object than ``saved``?"""
    return _MODULE_GENERATOR.__dict__.get("gauss_next") is not saved


class Snapshot:
    """The globals of some modules, the data of their classes and of the objects they made at
    import, the caches of their functions and the ``random`` module's state, to start each
    execution from."""

    def __init__(self, modules: tuple[types.ModuleType, ...]) -> None:
        self.modules: list[tuple[dict[str, Any], dict[str, tuple[object, object | None]]]] = []
        self.classes: list[tuple[object, dict[str, tuple[object, object | None]]]] = []
        self.caches: list[Any] = []  # functools.lru_cache functions: emptied
        self.defaults: list[tuple[object, object | None]] = []  # functions' mutable defaults
        self.cells: list[tuple[types.CellType, object, object | None]] = []  # closures' variables
        # the objects of the module's own classes made at import, with their classes: a state
        # machine's ``m.__class__ = Busy`` in one execution made the next start from ``Busy``
        self.kinds: list[tuple[object, type]] = []
        self.random = random.getstate()
        self.random_raw = _mt_raw()
        self.bindings: list[list[Any]] | None = None  # (made at the first restore: ``restore``)
        self.held: list[list[tuple[str, object, object]]] = []
        self.process = _Process()
        self.logging = patch_logging.Config()
        for module in modules:
            space = vars(module)
            # ``__builtins__`` is the builtins module's own dict: restoring it in place would empty
            # every module's builtins for a moment (another thread met ``NameError: hasattr``).
            saved = {name: _saved(value) for name, value in space.items() if not _dunder(name)}
            self.modules.append((space, saved))
            for value in list(space.values()):
                # (looked up on the type: an object's own ``__getattr__`` may raise anything,
                # ``KeyError`` from a settings proxy's, and a cache's ``cache_clear`` is its type's)
                if callable(getattr(type(value), "cache_clear", None)) and callable(value):
                    self.caches.append(value)
                elif issubclass(type(value), type) and value.__module__ == module.__name__:
                    self._fields(value)
                    for method in list(vars(value).values()):
                        if type(method) is types.FunctionType:
                            self._function(method)
                elif (
                    type(value).__module__ == module.__name__ or type(value) in _LIBRARY_STATE
                ) and not issubclass(type(value), _CODE):
                    self._fields(value)  # an object of the module's own class, made at import
                    self.kinds.append((value, type(value)))
                elif type(value) is types.FunctionType and value.__module__ == module.__name__:
                    self._fields(value)  # its attributes (``bump.calls += 1``)
                    self._function(value)

    def _fields(self, owner: object) -> None:
        fields: Any = _raw_getattr(owner, "__dict__", None)
        if fields is None:
            return
        data = {
            name: _saved(v)
            for name, v in list(fields.items())
            if not _dunder(name) and not issubclass(type(v), _CODE)
        }
        if data:
            self.classes.append((owner, data))

    def _function(self, fn: types.FunctionType) -> None:
        """``fn``'s mutable default arguments and the variables it closes over, as they are."""
        for value in (*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values()):
            saved = _saved(value)
            if saved[1] is not None and not isinstance(saved[1], _Fresh):
                self.defaults.append(saved)
        for cell in fn.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # not bound yet
                continue
            if not isinstance(value, _CODE):
                self.cells.append((cell, *_saved(value)))

    def restore(self) -> None:
        if self.bindings is None:
            # each module dict's version (``_version_of``): its names are looked at only once the
            # dict was written since the last restore (every name, every execution: 2 µs); what
            # its values hold, each time
            self.bindings = [[_version_of(space), -1] for space, _ in self.modules]
            self.held = [
                [(n, v, c) for n, (v, c) in saved.items() if c is not None] for _, saved in self.modules
            ]
        for (space, saved), version, held in zip(self.modules, self.bindings, self.held, strict=True):
            read = version[0]
            if read is None or read() != version[1]:
                for name in [n for n in space if n not in saved and not _dunder(n)]:
                    del space[name]
                for name, (value, contents) in saved.items():
                    if space.get(name, _ABSENT) is not value and not isinstance(contents, _Fresh):
                        space[name] = value
            for name, value, contents in held:
                if isinstance(contents, _Fresh):
                    space[name] = contents.make()
                else:
                    _restore(value, contents)
            if read is not None:
                version[1] = read()
        for obj, kind in self.kinds:  # (before its fields: its class may say where they live)
            if type(obj) is not kind:
                object.__setattr__(obj, "__class__", kind)
        for owner, data in self.classes:
            fields: Any = _raw_getattr(owner, "__dict__", None)
            for name, (value, contents) in data.items():
                if isinstance(contents, _Fresh):
                    _put(owner, fields, name, contents.make())
                    continue
                if fields is None or fields.get(name, _ABSENT) is not value:
                    _put(owner, fields, name, value)
                _restore(value, contents)
        for value, contents in self.defaults:
            _restore(value, contents)
        for cell, value, contents in self.cells:
            cell.cell_contents = contents.make() if isinstance(contents, _Fresh) else value
            if not isinstance(contents, _Fresh):
                _restore(value, contents)
        for cached in self.caches:
            cached.cache_clear()
        # (only when it moved: a generator's ``setstate`` cost 5 µs an execution, and most
        # executions draw nothing from the module's generator)
        if self.random_raw is None or _mt_raw() != self.random_raw or _moved_gauss(self.random[2]):
            random.setstate(self.random)

    def leave(self) -> None:
        """The process's state and ``logging``'s configuration as the check's first execution
        found them, when each execution ends (``patch_threads.set_current``): the next starts
        from them, and no program's environment variable, ``sys`` flag or handler outlives its
        execution (what runs between two checks, or after, sees none)."""
        self.process.restore()
        self.logging.restore()


_ABSENT = object()


def _put(owner: object, fields: Any, name: str, value: object) -> None:
    """``owner.name = value`` as ``object.__setattr__`` would: into an object's or a function's
    own dict, past a program's ``__setattr__``; a class's through ``setattr``."""
    if isinstance(fields, dict):
        fields[name] = value
    else:
        setattr(owner, name, value)


# the handler each signal had before an execution's program first set one (``patch_process``'s
# ``signal.signal`` notes it): put back when the execution ends
SIGNALS: dict[int, Any] = {}
_real_signal = signal.signal


def _version_of(space: dict[str, Any]) -> Callable[[], int] | None:
    """A reader of ``space``'s version (PEP 509: any write of a dict moves it), to compare a dict
    with its copy only once it changed; None where the version cannot be trusted (only CPython
    3.11's layout and rule are: ``rt/dict_versions.py``, which the fingerprint reads too)."""
    if not dict_versions.SUPPORTED:
        return None
    view = dict_versions._version_view(space)
    return lambda: view.value


class _Process:
    """The process's state a program changes, as the check's first execution found it: the
    environment (``os.environ["STARTED"] = "1"``) and ``sys``'s attributes (``sys._flag = True``,
    ``sys.tracebacklimit = 0``): one set since is removed, one rebound put back. Kept, a program
    that checks on its start that it has not run yet failed at the second execution (sixth
    review). Since the eighth review also ``builtins``'s names (``builtins._started = True``),
    the working directory (``os.chdir``), the recursion limit and the handlers the program set
    (``signal.signal``): each kept failed a correct program at the second or third execution;
    since the ninth review the umask and the collector's switch (``gc.disable()``) too. Not
    restored here: what lives in ``sys``'s lists and dicts (``sys.path``, ``sys.modules``:
    ``patch`` forgets the modules an execution imported), and ``socket``'s default timeout, the
    collector's thresholds and the int digit limit, which the process watch sees change and puts
    back in any mode (``process_saved``: one restore each)."""

    def __init__(self) -> None:
        self.environ = dict(os.environ)
        self.data: dict[Any, Any] | None = getattr(os.environ, "_data", None)
        self.encoded = None if self.data is None else dict(self.data)  # compared in C
        self.sys = dict(vars(sys))
        self.builtins = dict(vars(builtins))
        self.cwd = _cwd()
        self.limit = sys.getrecursionlimit()
        # the umask, the collector's switch (review 9)
        self.umask = _umask()
        self.collector = gc.isenabled()
        self.lazy = [(m, n, getattr(m, n)) for m, n in _LAZY_LIBRARY]
        # the dicts that hold the environment, ``sys``'s and ``builtins``' names and the lazy
        # library names: compared with their copies only once one was written (PEP 509 versions,
        # one C call; comparing them cost about 14,000 instructions an execution: session 46)
        held = [vars(sys), vars(builtins), *{id(vars(m)): vars(m) for m, _, _ in self.lazy}.values()]
        self.written = Moved(held if self.data is None else [self.data, *held])

    def restore(self) -> None:
        if self.written.moved():
            self._names()
        if sys.getrecursionlimit() != self.limit:
            sys.setrecursionlimit(self.limit)
        if self.cwd is not None and _cwd() != self.cwd:
            os.chdir(self.cwd)
        # (one system call: setting the mask is the only way to read it, so it is set back to the
        # saved one outright, changed or not, where a read and a compare took two)
        _real_umask(self.umask)
        if gc.isenabled() is not self.collector:
            (_real_gc_enable if self.collector else _real_gc_disable)()
        signal_wakeup.put_back()
        if SIGNALS:
            for signalnum, handler in SIGNALS.items():
                if handler is not None and signal.getsignal(signalnum) is not handler:
                    _real_signal(signalnum, handler)
            SIGNALS.clear()

    def _names(self) -> None:
        """The environment, ``sys``'s and ``builtins``' names and the lazy library names as found."""
        if self.data is None or self.data != self.encoded:
            for name in [n for n in os.environ if n not in self.environ]:
                del os.environ[name]
            for name, value in self.environ.items():
                if os.environ.get(name) != value:
                    os.environ[name] = value
        _put_back(vars(sys), self.sys, sys)
        _put_back(vars(builtins), self.builtins, builtins)
        for module, name, value in self.lazy:
            if getattr(module, name) is not value:
                setattr(module, name, value)
        self.written.record()  # (after: putting back writes them)


# What the standard library makes on its first use, under a lock (``tempfile``'s folder and name
# sequence): kept, the first execution took that lock and the next did not, and the check stopped
# with "the test is not deterministic" (eighth review, r126: a ``mkdtemp()`` in the explored
# function). Put back to None, every execution made them again under ``tempfile``'s real lock,
# whose holder reached scheduling points (its name draws): a search that ran another thread's
# ``gettempdir()`` there blocked the one OS thread on that lock for ever (twelfth review, c12).
# So the folder is found before the check's first execution (``warm_library``), outside any
# controlled thread, and every execution starts with it found: none draws under that lock. The
# name sequence too, since review 12 (c11/r05): made again by each execution, it was a change of
# ``tempfile``'s names, process-wide state ordered both ways against every step of every other
# thread; a controlled thread's names come from its own entropy (``patch_random._next_name``),
# never from the sequence's generator. The check gives back what it found.
_LAZY_LIBRARY = [(tempfile, "tempdir"), (tempfile, "_name_sequence")]


def warm_library() -> list[tuple[Any, str, Any]]:
    """Find ``tempfile``'s folder and make its name sequence now, as its first use would; what to
    give back after the check."""
    found = [(tempfile, "tempdir", tempfile.tempdir), (tempfile, "_name_sequence", tempfile._name_sequence)]  # type: ignore[attr-defined]
    tempfile.gettempdir()
    tempfile._get_candidate_names()  # type: ignore[attr-defined]
    return found


def _put_back(space: dict[str, Any], saved: dict[str, Any], owner: types.ModuleType) -> None:
    """``owner``'s names as ``saved`` holds them: one set since removed, one rebound put back."""
    if space == saved:  # (in C, by identity first)
        return
    for name in [n for n in space if n not in saved]:
        delattr(owner, name)
    for name, value in saved.items():
        if space.get(name, _ABSENT) is not value:
            setattr(owner, name, value)


_real_umask = os.umask
_real_gc_enable, _real_gc_disable = gc.enable, gc.disable


def _umask() -> int:
    mask = _real_umask(0o022)  # (the only way to read it: set and put back)
    _real_umask(mask)
    return mask


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # (removed meanwhile: there is no folder to go back to)
        return None


def _dunder(name: str) -> bool:
    """The interpreter's names (``__builtins__``, ``__spec__``, ...), not the program's state."""
    return name.startswith("__") and name.endswith("__")
