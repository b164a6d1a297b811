"""The state fingerprint's walk in Python (``_Canon``): the reading that ``fingerprint.py``'s
docstring describes, as nested tuples. The encoder (``encoder.py``) reads the same and is what
``fingerprint`` uses; the walk is its reference in the tests and its fallback for a heap nested
deeper than the C pickler may recurse (``walk_fingerprint``)."""

from __future__ import annotations

import _random
import _thread
import functools
import gc
import itertools
import random
import re
import sys
import types
import weakref
from collections import deque
from collections.abc import Hashable, Mapping
from typing import Any

from model_checks.harness.rt import frames
from model_checks.harness.rt.object_kinds import (
    _BASE,
    _HEAPTYPE,
    ATOM,
    BUILTIN,
    CLASS,
    EXCEPTION,
    HARNESS,
    ITERATOR,
    OPAQUE,
    Opaque,
    _atom,
    _kind,
    _names,
    hooked,
)
from model_checks.harness.rt.objects import ObjState, Op
from model_checks.harness.rt.under_test import _program_file, _program_module

_SCALARS = (int, str, bytes, type(None), type(Ellipsis))


# A dict's or a set's iterator (a thread in ``for k in d`` or ``for t in threads``, a pool's
# shutdown among them): its state is its container, what is left of it (the list its
# ``__reduce__`` makes from a copy of it) and the count it keeps of that (``__length_hint__``).
# The size its container had when it began is not shown; it is the size now unless the container
# changed size since, and then ``__reduce__`` raises: such a state is refused.
_SAMPLE_CONTAINER_ITERATORS: tuple[Any, ...] = (
    iter({}),
    iter({}.values()),
    iter({}.items()),
    reversed({}),
    reversed({}.values()),
    reversed({}.items()),
    iter(set()),
)
CONTAINER_ITERATORS: frozenset[type] = frozenset(type(i) for i in _SAMPLE_CONTAINER_ITERATORS)


def container_iterator_state(x: Any) -> tuple[object, list[object], int]:
    referents = gc.get_referents(x)  # (its container first: CPython's traverse visits it first)
    container = referents[0] if referents and isinstance(referents[0], (dict, set, frozenset)) else None
    try:
        rest: list[object] = x.__reduce__()[1][0]
    except RuntimeError:  # ("changed size during iteration")
        t = type(x)
        raise Opaque(f"{t.__module__}.{t.__qualname__} of a container changed during the iteration") from None
    return container, rest, x.__length_hint__()


def machinery_class(c: type) -> bool:
    """``c`` is a class of the standard library, a package or the harness's machinery, read as an
    atom (by the walk and the encoder alike); a class of a module with no file (``__main__`` under
    ``python -c``) is code under test."""
    module_file = getattr(sys.modules.get(c.__module__), "__file__", None)
    return isinstance(module_file, str) and not _program_file(module_file)


def class_data(namespace: Mapping[str, object]) -> list[tuple[str, object]]:
    """The state of a class of the code under test: its data attributes, as (name, value) in the
    namespace's order (methods by identity: the class outlives the execution, or is new in each and
    then never equal; ``_abc_impl``: the ABC machinery's cache of subclass checks)."""
    return [
        (k, val)
        for k, val in namespace.items()
        if not (k.startswith("__") or k == "_abc_impl" or isinstance(val, types.FunctionType))
    ]


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
        if issubclass(t, types.ModuleType):
            # (a module whose class was swapped is still that module: patch mode's ``sys``)
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
        if issubclass(t, ObjState):  # (not ``isinstance``: it would ask a program's hook for ``__class__``)
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
        if t is functools.partial:  # its whole state: the function, arguments and attributes
            return ("P", v(x.func), v(x.args), v(x.keywords), v(x.__dict__))
        if t is staticmethod or t is classmethod:
            return ("sm", t is staticmethod, v(x.__func__))
        if t is property:
            return ("p", v(x.fget), v(x.fset), v(x.fdel))
        if t is itertools.count:  # its repr is its whole state (start and step), on every version
            return ("n", repr(x))
        if t is _thread.LockType:  # a real lock (``reducers._r_real_lock``): held or not
            return ("rl", x.locked())
        if t is random.Random:  # its state, past patch mode's wrappers (``reducers._r_random``)
            return ("rnd", _random.Random.getstate(x), vars(x).get("gauss_next"))
        if t in CONTAINER_ITERATORS:  # (``reducers._r_container_iterator``)
            return ("ci", _atom(t), *[v(part) for part in container_iterator_state(x)])
        if t is weakref.ReferenceType or t is weakref.KeyedRef:  # (``reducers._r_weakref``)
            return ("wr", v(x()), v(x.__callback__), v(getattr(x, "key", None)))
        if t is re.Pattern:  # immutable: its source and flags say it all
            return ("re", v(x.pattern), x.flags)
        kind = _kind(t)
        if kind == BUILTIN:
            return ("B", x.__qualname__, v(x.__self__))
        if kind == ATOM:
            return ("a", _atom(x))
        if kind == ITERATOR:  # the iterable (walked, so its identity is kept) and the position
            return ("i", _atom(t), v(x.__reduce__()))
        if kind == CLASS:
            return self._class(x)
        if kind == HARNESS:
            return ("H", t.__name__)
        if kind == EXCEPTION:
            return (
                "E",
                _atom(t),
                v(x.args),
                v(x.__cause__),
                v(x.__context__),
                x.__suppress_context__,
                self._fields(x),
            )
        if kind == OPAQUE:
            raise Opaque(f"{t.__module__}.{t.__qualname__}")
        base = _BASE[t]
        return ("o", _atom(t), () if base is None else v(base(x)), self._fields(x))

    def _fields(self, x: object) -> Hashable:
        out: list[Hashable] = []
        read = _raw_getattr if hooked(type(x)) else getattr  # (not the program's hook)
        for name in _names(type(x)):
            out.append((name, self.value(read(x, name, frames.NULL))))
        d = read(x, "__dict__", None)
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
        if not c.__flags__ & _HEAPTYPE or machinery_class(c):
            return ("T", _atom(c))  # a static C type: its attributes cannot change
        return ("T", _atom(c), tuple((k, self.value(val)) for k, val in class_data(c.__dict__)))

    def op(self, op: Op | None) -> Hashable:
        if op is None:
            return None
        obj = op.obj.oid if isinstance(op.obj, ObjState) else -1
        return (op.kind, obj, self.value(op.args), op.timeout, op.deadline, self.value(op.result))

    def model(self, obj: ObjState) -> Hashable:
        return (obj.oid, _atom(type(obj)), self._fields(obj))


def _raw_getattr(x: object, name: str, default: object) -> object:
    """``getattr(x, name, default)`` as ``object.__getattribute__`` reads it."""
    try:
        return object.__getattribute__(x, name)
    except AttributeError:
        return default
