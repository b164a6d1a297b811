"""The abstract state of an execution at a scheduling point, as one hashable value (issue 16).

State-hash pruning (``strategies/stateful.py``) stops an execution at a state it has already
explored, so two states with equal fingerprints must have the same futures. The fingerprint is
generic, computed by the harness (no promise asked of the program), and *refuses* rather than
guesses: ``fingerprint`` returns None — "do not prune here" — whenever it meets something whose
state Python does not show.

What it holds:

* the model of every controlled object (lock owner and count, condition waiters, queue items,
  event flag, atomic value, ...), its fields read generically; the virtual clock and each
  thread's spurious/timeout counters (they bound its future alternatives);
* per thread: born/finished, its pending operation (kind, object, arguments, timeout, deadline),
  and every frame of the code under test on its stack, outermost first: code object, instruction
  offset, fast locals (with cells) and **value stack** (``rt/frames.py``: loop iterators, ``with``
  exits and call arguments live only there);
* the data of the modules of code under test that those frames run in or that the walk reaches
  (a function's ``__globals__``, a module object: their globals, except ``__dunder__`` names),
  and the test's hooks (invariants, final checks, pending-work predicates: their closures reach
  what the test records);
* everything reachable from the above, as a graph numbered in visiting order (``_Canon``): equal
  fingerprints mean isomorphic reachable heaps, so object identity (``is``, aliasing) is kept.

The frames of the harness's *machinery* (``own_code.py``, named file by file: the harness
package also holds programs under test) are skipped: a controlled thread's harness-side state is
its pending operation (the primitives keep none across a scheduling point but ``wait_for``'s deadline, which
the pending wait's deadline carries), and compiled, they have no frames at all.

Refused (the state is not fingerprinted): generators and coroutines, iterators and other C
objects whose state is hidden (``random.Random``, files, sockets, real locks), instances of
classes with such a base, and any frame whose value stack cannot be read. Not seen (documented
limit): state kept in standard-library or third-party *modules*' globals, and the traceback of
an exception object.
"""

from __future__ import annotations

import collections
import functools
import itertools
import logging
import os
import re
import sys
import types
from collections import deque
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from model_checks.harness import own_code
from model_checks.harness.rt import frames
from model_checks.harness.rt.objects import ObjState, Op

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution

_BACKENDS = own_code.HARNESS + os.path.join("rt", "backends.py")
_STDLIB = tuple(
    {os.path.dirname(os.__file__) + os.sep}
    | {p + os.sep for p in sys.path if p.endswith(("site-packages", "dist-packages"))}
)
_SCALARS = (int, str, bytes, type(None), type(Ellipsis))
# objects of the harness that stand for the whole execution: atoms, never walked
_OPAQUE_HARNESS = frozenset(
    {
        "Execution",
        "ControlledRuntime",
        "GreenletBackend",
        "ThreadBackend",
        "ThreadInfo",
        "RaceDetector",
        "Hooks",
    }
)


class Opaque(Exception):
    """Something whose state the fingerprint cannot see: refuse the whole state."""


# Long-lived objects (code, classes, module-level functions) are named by a small number; the
# object is kept alive here so that its id is never reused for another.
_ATOMS: dict[int, int] = {}
_KEEP: list[object] = []


def _atom(x: object) -> int:
    n = _ATOMS.get(id(x))
    if n is None:
        n = _ATOMS[id(x)] = len(_KEEP)
        _KEEP.append(x)
    return n


_PY_CLASS: dict[type, bool] = {}
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE
_MANAGED_DICT = 1 << 4  # Py_TPFLAGS_MANAGED_DICT (3.11)
_BUILTIN_BASES = (list, dict, set, frozenset, deque, tuple, int, str, bytes, float, BaseException)


def _python_class(cls: type) -> bool:
    """Is every class of ``cls``'s MRO one whose instance state Python shows (defined in Python,
    compiled by mypyc, or a container the walk reads)?"""
    known = _PY_CLASS.get(cls)
    if known is not None:
        return known
    ok = True
    for c in cls.__mro__:
        if c is object or c in _BUILTIN_BASES or hasattr(c, "__mypyc_attrs__"):
            continue
        if not _python_layout(c):
            ok = False
            break
    _PY_CLASS[cls] = ok
    return ok


def _python_layout(c: type) -> bool:
    """Does ``c`` add to its base's instance layout only what a class statement adds (its
    ``__slots__``, a weak-reference slot, a dict)? A C type — static like ``functools.partial``
    or an extension's heap type like ``_random.Random`` — adds fields no attribute shows."""
    if not c.__flags__ & _HEAPTYPE:
        return False
    base = c.__base__
    if base is None:
        return False
    slots = c.__dict__.get("__slots__", ())
    if isinstance(slots, str):
        slots = (slots,)
    extra = 8 * len([n for n in slots if n not in ("__dict__", "__weakref__")])
    if c.__weakrefoffset__ and not base.__weakrefoffset__:
        extra += 8
    if c.__dictoffset__ and not base.__dictoffset__ and not c.__flags__ & _MANAGED_DICT:
        extra += 8  # a dict pointer in the object (a managed dict lives before it)
    return c.__basicsize__ == base.__basicsize__ + extra


def _program_module(m: types.ModuleType) -> bool:
    """Is ``m`` code under test? A module with no file is only if it is ``__main__``
    (``python -c``); the others (``sys``, ``builtins``, ...) are C modules."""
    name = getattr(m, "__file__", None)
    if not isinstance(name, str):
        return m.__name__ == "__main__"
    return _program_file(name)


# The harness's machinery keeps nothing across a scheduling point that the pending operation does
# not say: its frames are skipped (``own_code.py`` names it).
_machinery = own_code.machinery


def _program_file(name: str) -> bool:
    """Is ``name`` the file of code under test (its globals and class attributes are state)?
    Not the standard library, installed packages, frozen modules or the harness's own code (its
    machinery, and ``patch.py``'s wrappers: their frames are walked, but their globals are the
    harness's bookkeeping, the real ``threading`` objects and the table of wrapped threads); code
    compiled from a string (``<string>``, ``<stdin>``) is code under test."""
    return (
        not name.startswith((*_STDLIB, "<frozen")) and not _machinery(name) and name not in own_code.WRAPPERS
    )


class _Canon:
    """Serialises a reachable object graph; objects with identity are numbered as first met."""

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}
        self.alive: list[object] = []  # keeps walked objects (and so their ids) for the walk

    def value(self, x: Any) -> Hashable:
        t = type(x)
        if t in _SCALARS:
            scalar: Hashable = x
            return scalar
        if t is bool:
            return ("b", x)
        if t is float:
            return ("f", float.hex(x))
        if t is tuple:
            return ("t", *[self.value(v) for v in x])
        if t is types.CodeType:
            return ("a", _atom(x))
        if t is types.ModuleType:
            if not _program_module(x):
                return ("a", _atom(x))
            return ("M", _atom(x), self.module_data(x.__dict__))
        if x is frames.NULL:
            return ("null",)
        n = self.seen.get(id(x))
        if n is not None:
            return ("@", n)
        self.seen[id(x)] = len(self.seen)
        self.alive.append(x)
        return self._walk(x, t)

    def _walk(self, x: Any, t: type) -> Hashable:
        v = self.value
        if isinstance(x, ObjState):
            return ("O", x.oid)
        if t is list:
            return ("l", *[v(i) for i in x])
        if t is dict:
            return ("d", *[(v(k), v(i)) for k, i in x.items()])
        if t is set or t is frozenset:
            return ("s", t is set, *[v(i) for i in x])
        if t is deque:
            return ("q", x.maxlen, *[v(i) for i in x])
        if t is bytearray:
            return ("ba", bytes(x))
        if t is range or t is slice:
            return ("r", t is range, v(x.start), v(x.stop), v(x.step))
        if t is complex:
            return ("c", float.hex(x.real), float.hex(x.imag))
        if t is types.FunctionType:
            return self._function(x)
        if t is types.CellType:
            try:
                return ("C", v(x.cell_contents))
            except ValueError:  # an empty cell
                return ("C",)
        if t is types.MethodType:
            return ("m", v(x.__func__), v(x.__self__))
        if t is types.BuiltinFunctionType or t is _BUILTIN_METHOD:
            owner = x.__self__
            return ("B", x.__qualname__, v(owner))
        if t is functools.partial:  # its whole state: the function, arguments and attributes
            return ("P", v(x.func), v(x.args), v(x.keywords), v(x.__dict__))
        if t is staticmethod or t is classmethod:
            return ("sm", t is staticmethod, v(x.__func__))
        if t is property:
            return ("p", v(x.fget), v(x.fset), v(x.fdel))
        if isinstance(x, (types.GenericAlias, types.UnionType)):  # ``list[int]``, ``int | None``: immutable
            return ("a", _atom(x))
        if t is itertools.count:  # its repr is its whole state (start and step), on every version
            return ("n", repr(x))
        if isinstance(x, _LOGGING):
            # the logging machinery is no state of the program: under pytest the root logger
            # holds a capture handler with a real lock, which would refuse every state
            return ("a", _atom(x))
        if t is re.Pattern:  # immutable: its source and flags say it all
            return ("re", v(x.pattern), x.flags)
        if t in _DESCRIPTORS:
            return ("a", _atom(x))  # descriptors of C types: immutable
        if t in _ITERATORS:
            # their whole state is what they reduce to: the iterable (walked, so its identity
            # is kept) and the position
            return ("i", _atom(t), v(x.__reduce__()))
        if isinstance(x, type):
            return self._class(x)
        if t.__name__ in _OPAQUE_HARNESS and t.__module__.startswith("model_checks.harness"):
            return ("H", t.__name__)
        if isinstance(x, BaseException):
            return (
                "E",
                _atom(t),
                v(x.args),
                v(x.__cause__),
                v(x.__context__),
                x.__suppress_context__,
                self._fields(x),
            )
        if not _python_class(t):
            raise Opaque(f"{t.__module__}.{t.__qualname__}")
        base: Hashable = ()
        b: Any
        for b in (list, dict, set, frozenset, deque, tuple, int, str, bytes, float):
            if isinstance(x, b):
                base = v(b(x))
                break
        return ("o", _atom(t), base, self._fields(x))

    def _fields(self, x: object) -> Hashable:
        out: list[Hashable] = []
        names: list[str] = []
        for c in type(x).__mro__:
            attrs = getattr(c, "__mypyc_attrs__", None)
            if attrs is None:
                attrs = c.__dict__.get("__slots__", ())
                if isinstance(attrs, str):
                    attrs = (attrs,)
            names.extend(a for a in attrs if a not in ("__dict__", "__weakref__"))
        for name in names:
            out.append((name, self.value(getattr(x, name, frames.NULL))))
        d = getattr(x, "__dict__", None)
        if isinstance(d, dict):
            out.append(self.value(d))
        return tuple(out)

    def _function(self, f: types.FunctionType) -> Hashable:
        v = self.value
        return (
            "F",
            _atom(f.__code__),
            v(f.__defaults__),
            v(f.__kwdefaults__),
            v(f.__closure__),
            v(f.__dict__) if f.__dict__ else (),
            # the globals of code under test: what its calls read and write (a helper module's
            # counter is state even when none of its frames is on a stack)
            self.module_data(f.__globals__) if _program_file(f.__code__.co_filename) else (),
        )

    def module_data(self, d: dict[str, Any]) -> Hashable:
        """A module's globals but its ``__dunder__`` names (``__builtins__`` among them)."""
        n = self.seen.get(id(d))
        if n is not None:
            return ("@", n)
        self.seen[id(d)] = len(self.seen)
        self.alive.append(d)
        return ("g", *[(k, self.value(x)) for k, x in d.items() if not k.startswith("__")])

    def _class(self, c: type) -> Hashable:
        module_file = getattr(sys.modules.get(c.__module__), "__file__", None)
        if not c.__flags__ & _HEAPTYPE or (isinstance(module_file, str) and not _program_file(module_file)):
            # a static C type (its attributes cannot change), or a class of the standard library,
            # a package or the harness's machinery; a class of a module with no file (``__main__``
            # under ``python -c``) is code under test
            return ("T", _atom(c))
        # a class of the code under test: its data attributes are state (methods by identity:
        # the class outlives the execution, or is new in each and then never equal)
        data = []
        for k, val in c.__dict__.items():
            if k.startswith("__") or k == "_abc_impl" or isinstance(val, types.FunctionType):
                continue  # (``_abc_impl``: the ABC machinery's cache of subclass checks)
            data.append((k, self.value(val)))
        return ("T", _atom(c), tuple(data))

    def op(self, op: Op | None) -> Hashable:
        if op is None:
            return None
        obj = op.obj.oid if isinstance(op.obj, ObjState) else -1
        return (op.kind, obj, self.value(op.args), op.timeout, op.deadline, self.value(op.result))

    def model(self, obj: ObjState) -> Hashable:
        return (obj.oid, _atom(type(obj)), self._fields(obj))


# C iterators whose ``__reduce__`` is their whole state (not dict and set iterators: they also
# keep the size they started with, to raise when it changes)
_SAMPLE_ITERATORS: tuple[Any, ...] = (
    iter(range(1)),
    iter(range(1 << 70)),
    iter([]),
    iter(()),
    reversed([]),
    iter(""),
    iter("\u20ac"),
    iter(b""),
    enumerate(()),
    zip(),
    map(len, ()),
    filter(None, ()),
    reversed(range(1)),
)
_ITERATORS: frozenset[type] = frozenset(type(i) for i in _SAMPLE_ITERATORS)

_LOGGING = (logging.Logger, logging.Handler, logging.Manager, logging.PlaceHolder)

# a method of a C class defined with ``METH_METHOD`` (``re.Pattern.match``): like a builtin
# function, its state is its name and the object it is bound to
_BUILTIN_METHOD = type(re.compile("").match)
_DESCRIPTORS = (
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
    types.MethodWrapperType,
    type(collections.namedtuple("_T", "a").a),  # type: ignore[attr-defined]  # a named tuple's field (``_tuplegetter``)
)


def _below_chooser(ex: Execution) -> types.FrameType | None:
    """The running thread's frame that called into the scheduler: the caller of the chooser's
    ``choose`` (which called whatever computes the fingerprint). Everything above it is the
    search's, not the thread's: a fingerprint function of a test, say, whose globals change."""
    choose = getattr(type(ex.chooser), "choose", None)
    code = getattr(choose, "__code__", None)
    f: types.FrameType | None = sys._getframe(2)
    while f is not None and f.f_code is not code:
        f = f.f_back
    if f is None:
        raise frames.Unreadable(
            "the chooser has no Python frame: the running thread's frames are not told from it"
        )
    return f.f_back


def _stack_of(ex: Execution, tid: int) -> list[types.FrameType]:
    """The thread's frames of code under test, outermost first (empty: not started, or over)."""
    f = _below_chooser(ex) if ex.backend.current() == tid else ex.backend.frame(tid)
    out: list[types.FrameType] = []
    while f is not None:
        code = f.f_code
        if code.co_filename == _BACKENDS and code.co_name in ("_loop", "main"):
            break  # below this is the backend's own loop (or an OS thread's bootstrap)
        if not _machinery(code.co_filename):
            out.append(f)
        f = f.f_back
    out.reverse()
    return out


def fingerprint(ex: Execution) -> Hashable | None:
    """The abstract state of ``ex`` now (at a scheduling point); None if it cannot be taken."""
    if not frames.readable():
        return None
    c = _Canon()
    limit = sys.getrecursionlimit()
    # the walk recurses once per level of the heap (Python-to-Python calls: no C stack)
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        parts: list[Hashable] = [
            ("clock", float.hex(ex.clock)),
            ("spurious", tuple(sorted(ex.spurious_used.items()))),
            ("timeouts", tuple(sorted(ex.timeouts_used.items()))),
        ]
        parts.extend(c.model(obj) for obj in ex.objects)
        modules: dict[str, dict[str, object]] = {}
        for t in ex.threads:
            frame_parts: list[Hashable] = []
            for f in _stack_of(ex, t.tid):
                local, stack = frames.contents(f)
                frame_parts.append(
                    (_atom(f.f_code), frames.position(f), c.value(tuple(local)), c.value(tuple(stack)))
                )
                if _program_file(f.f_code.co_filename):
                    name = str(f.f_globals.get("__name__", "?"))
                    modules.setdefault(name, f.f_globals)
            parts.append((t.tid, t.born, t.finished, c.op(t.pending), tuple(frame_parts)))
        for name in sorted(modules):
            parts.append((name, c.module_data(modules[name])))
        hooks = ex.hooks
        parts.append(c.value(([fn for _, fn in hooks.invariants], hooks.final, hooks.pending_work)))
    except (Opaque, frames.Unreadable, RecursionError):
        return None
    finally:
        sys.setrecursionlimit(limit)
    return tuple(parts)
