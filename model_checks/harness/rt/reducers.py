"""What the state fingerprint's encoder (``encoder.py``) writes of each object the C pickler does
not serialise itself: a reduce tuple ``(_K, (tag, ...), state)`` holding what ``_Canon._walk``
(``heap_walk.py``) reads of it, chosen by type alone (``_reducer``)."""

from __future__ import annotations

import _random
import _thread
import ctypes
import functools
import itertools
import operator
import random
import re
import types
import weakref
from collections import deque
from typing import Any

from model_checks.harness.rt import frames
from model_checks.harness.rt.dict_versions import _PROXIED_AT, _VERSION_AT, _module_data
from model_checks.harness.rt.heap_walk import (
    CONTAINER_ITERATORS,
    _raw_getattr,
    class_data,
    container_iterator_state,
    machinery_class,
)
from model_checks.harness.rt.object_kinds import (
    _BASE,
    _HEAPTYPE,
    ATOM,
    BUILTIN,
    CLASS,
    EXCEPTION,
    HARNESS,
    INSTANCE,
    ITERATOR,
    OPAQUE,
    Opaque,
    _atom,
    _kind,
    _names,
    field_reader,
    hooked,
)
from model_checks.harness.rt.objects import ObjState
from model_checks.harness.rt.under_test import _program_file, _program_module


def _K(*tag: object) -> None:
    """The name under which every reduce tuple is written (never called: nothing is loaded)."""
    raise AssertionError("fingerprints are never unpickled")


# per class (kept alive here): its dict's version view (None: a static C type, which cannot
# change), the version read, and the class's reduce tuple
_CLASSES: dict[type, tuple[ctypes.c_uint64 | None, int, tuple[Any, ...]]] = {}


def _r_class(c: Any) -> tuple[Any, ...]:
    known = _CLASSES.get(c)
    if known is not None:
        view = known[0]
        if view is None or view.value == known[1]:
            return known[2]
    r: Reduce
    if not c.__flags__ & _HEAPTYPE:
        r = (_K, ("a", _atom(c)))  # a static C type: its attributes cannot change
        _CLASSES[c] = (None, 0, r)
        return r
    proxy = c.__dict__
    real = ctypes.c_void_p.from_address(id(proxy) + _PROXIED_AT).value
    assert real is not None  # (a class's dict is never replaced: the view stays valid)
    view = ctypes.c_uint64.from_address(real + _VERSION_AT)
    version = view.value
    if machinery_class(c):
        r = (_K, ("a", _atom(c)))  # (``__module__`` is in the dict: its version)
    else:
        data = tuple(kv for pair in class_data(proxy) for kv in pair)  # name, value, name, value, ...
        r = (_K, ("T", _atom(c)), data)
    _CLASSES[c] = (view, version, r)
    return r


def _fields_of(x: object) -> tuple[object, ...]:
    """``_Canon._fields``'s reading: the slots and compiled attributes (``NULL`` if not set),
    then the ``__dict__``."""
    t = type(x)
    getter = _GETTERS.get(t)
    if getter is None:
        getter = _GETTERS[t] = _getter(t)
    try:
        return getter(x)  # type: ignore[no-any-return]
    except AttributeError:  # a slot not set
        null = frames.NULL
        read = _raw_getattr if hooked(t) else getattr  # (not the program's hook: ``hooked``)
        out: list[object] = [read(x, name, null) for name in _names(t)]
        d = read(x, "__dict__", None)
        if isinstance(d, dict):
            out.append(d)
        return tuple(out)


def _getter(t: type) -> Any:
    """A C-speed reader of ``t``'s fields, as a tuple (raises AttributeError if a slot is not
    set, or the instance has no dict)."""
    names = _names(t)
    if t.__dictoffset__:
        names = (*names, "__dict__")
    if not names:
        return lambda x: ()
    if len(names) == 1:
        one = field_reader(t, names)
        return lambda x: (one(x),)
    return field_reader(t, names)


_GETTERS: dict[type, Any] = {}


Reduce = tuple[Any, ...]


# The heads of the reduce tuples that name no state of the object: one object each (per type where
# they name it), shared by these reducers and the C reducer (``_fingerprint_hot.c``), which must
# write the same bytes (the pickler memoises a head by identity: a shared one is written once a
# dump, then referred to).
_NULL_HEAD = ("null",)
_CELL_HEAD = ("C",)
_EMPTY_CELL_HEAD = ("C0",)
_METHOD_HEAD = ("m",)
_PARTIAL_HEAD = ("P",)
_MODEL_LETTER = "O"
_UNBOUNDED_DEQUE_HEAD = ("q", None)
_METHOD_READ = operator.attrgetter("__func__", "__self__")
_PARTIAL_READ = operator.attrgetter("func", "args", "keywords", "__dict__")  # its whole state
_HEADS: dict[type, tuple[str, object]] = {}  # per type: an instance's or a harness object's head


def _head(letter: str, t: type) -> tuple[str, object]:
    known = _HEADS.get(t)
    if known is None:
        known = _HEADS[t] = (letter, _atom(t) if letter == "o" else t.__name__)
    return known


def _r_atom(x: Any) -> Reduce:
    return (_K, ("a", _atom(x)))


def _r_module(x: Any) -> Reduce:
    if not _program_module(x):
        return (_K, ("a", _atom(x)))
    return (_K, ("M", _atom(x)), (_module_data(x.__dict__),))


def _r_null(x: Any) -> Reduce:
    return (_K, _NULL_HEAD)


def _r_model(x: Any) -> Reduce:
    return (_K, (_MODEL_LETTER, x.oid))


def _r_deque(x: Any) -> Reduce:
    maxlen = x.maxlen
    return (_K, _UNBOUNDED_DEQUE_HEAD if maxlen is None else ("q", maxlen), (list(x),))


def _r_range(x: Any) -> Reduce:
    return (_K, ("r", type(x) is range), (x.start, x.stop, x.step))


def _r_complex(x: Any) -> Reduce:
    return (_K, ("c", x.real, x.imag))


def _r_function(f: Any) -> Reduce:
    head, reads_globals = _function_head(f.__code__)
    # the globals of code under test: what its calls read and write (a helper module's counter
    # is state even when none of its frames is on a stack)
    g = _module_data(f.__globals__) if reads_globals else None
    return (_K, head, (f.__defaults__, f.__kwdefaults__, f.__closure__, f.__dict__, g))


# per code object: its functions' head and whether they read their globals (code under test);
# emptied when what is code under test changes (``fingerprint._forget_if_machinery_changed``)
_CODE_HEADS: dict[types.CodeType, tuple[tuple[str, int], bool]] = {}


def _function_head(code: types.CodeType) -> tuple[tuple[str, int], bool]:
    known = _CODE_HEADS.get(code)
    if known is None:
        known = _CODE_HEADS[code] = (("F", _atom(code)), _program_file(code.co_filename))
    return known


def _r_cell(x: Any) -> Reduce:
    try:
        return (_K, _CELL_HEAD, (x.cell_contents,))
    except ValueError:  # an empty cell
        return (_K, _EMPTY_CELL_HEAD)


def _r_method(x: Any) -> Reduce:
    return (_K, _METHOD_HEAD, _METHOD_READ(x))


def _r_builtin(x: Any) -> Reduce:
    return (_K, ("B", x.__qualname__), (x.__self__,))


def _r_partial(x: Any) -> Reduce:
    return (_K, _PARTIAL_HEAD, _PARTIAL_READ(x))


def _r_static(x: Any) -> Reduce:
    return (_K, ("sm", type(x) is staticmethod), (x.__func__,))


def _r_property(x: Any) -> Reduce:
    return (_K, ("p",), (x.fget, x.fset, x.fdel))


def _r_count(x: Any) -> Reduce:  # its repr is its whole state (start and step), on every version
    return (_K, ("n", repr(x)))


def _r_pattern(x: Any) -> Reduce:  # immutable: its source and flags say it all
    return (_K, ("re", x.pattern, x.flags))


def _r_iterator(x: Any) -> Reduce:
    # its whole state is what it reduces to: the iterable (identity kept) and the position
    return (_K, ("i", _atom(type(x))), (x.__reduce__(),))


def _r_harness(x: Any) -> Reduce:
    return (_K, _head("H", type(x)))


def _r_exception(x: Any) -> Reduce:
    state = (x.args, x.__cause__, x.__context__, x.__suppress_context__, _fields_of(x))
    return (_K, ("E", _atom(type(x))), state)


def _r_instance(x: Any) -> Reduce:
    t = type(x)
    base = _BASE[t]
    return (_K, _head("o", t), (None if base is None else base(x), _fields_of(x)))


def _r_real_lock(x: Any) -> Reduce:
    # a real lock (one the harness does not control: a module's outside the program's, reached
    # through the explored function's globals): whether it is held is its whole state
    return (_K, ("rl",), (x.locked(),))


def _r_random(x: Any) -> Reduce:
    # a generator's state is its C state and the Python-level ``gauss_next``, read past patch
    # mode's wrappers of ``random.Random``'s methods (a program's generator, or one of patch
    # mode's own held in a frame the walk reads)
    return (_K, ("rnd",), (_random.Random.getstate(x), vars(x).get("gauss_next")))


def _r_container_iterator(x: Any) -> Reduce:
    # its container (identity kept), what is left and its count (``container_iterator_state``)
    return (_K, ("ci", _atom(type(x))), container_iterator_state(x))


def _r_weakref(x: Any) -> Reduce:
    # a weak reference's future is what it returns (its referent, or None once that died) and the
    # callback it will call; a ``KeyedRef`` (a ``WeakValueDictionary``'s) also holds its key.
    # ``concurrent.futures`` hands its workers one (session 44: every state with a pool was refused)
    return (_K, ("wr",), (x(), x.__callback__, getattr(x, "key", None)))


def _r_opaque(x: Any) -> Reduce:
    t = type(x)
    raise Opaque(f"{t.__module__}.{t.__qualname__}")


_EXACT: dict[type, Any] = {
    types.CodeType: _r_atom,
    type(Ellipsis): _r_atom,
    types.ModuleType: _r_module,
    frames._Null: _r_null,
    deque: _r_deque,
    range: _r_range,
    slice: _r_range,
    complex: _r_complex,
    types.FunctionType: _r_function,
    types.CellType: _r_cell,
    types.MethodType: _r_method,
    functools.partial: _r_partial,
    staticmethod: _r_static,
    classmethod: _r_static,
    property: _r_property,
    itertools.count: _r_count,
    _thread.LockType: _r_real_lock,
    random.Random: _r_random,
    weakref.ReferenceType: _r_weakref,
    weakref.KeyedRef: _r_weakref,
    re.Pattern: _r_pattern,
    **dict.fromkeys(CONTAINER_ITERATORS, _r_container_iterator),
}


# what each kind of object (``object_kinds._kind``) is written as
_BY_KIND: dict[str, Any] = {
    BUILTIN: _r_builtin,
    ATOM: _r_atom,
    ITERATOR: _r_iterator,
    CLASS: _r_class,
    HARNESS: _r_harness,
    EXCEPTION: _r_exception,
    OPAQUE: _r_opaque,
    INSTANCE: _r_instance,
}


def _reducer(t: type) -> Any:
    """How objects of type ``t`` are read: the same as ``_Canon.value`` and ``_Canon._walk`` (each
    depends on the type alone): the exact types each reads, then the kinds both share."""
    r = _EXACT.get(t)
    if r is not None:
        return r
    if issubclass(t, ObjState):
        return _r_model
    if issubclass(t, types.ModuleType):
        # a module whose class was swapped is still that module (patch mode's ``sys``, whose
        # class watches its streams: without this every state reaching ``sys`` was refused)
        return _r_module
    return _BY_KIND[_kind(t)]


_REDUCERS: dict[type, Any] = {}


# The C reducer's entry kinds (``_fingerprint_hot.c``; its ``REDUCER_KINDS`` names them in this
# order, which a test compares).
INSTANCE_ENTRY, ATTRS_ENTRY, CONST_ENTRY, CELL_ENTRY, MODEL_ENTRY, DEQUE_ENTRY, FUNCTION_ENTRY = range(7)


def native_entry(t: type, r: Any) -> tuple[Any, ...] | None:
    """What the C reducer needs to reduce objects of type ``t`` exactly as ``r`` (their Python
    reducer) does, or None where it leaves them to ``r``: the objects an execution creates most
    (docs/performance.md, session 19), each by the same head object and the same reading."""
    if r is _r_instance:
        # its slots by one getter, then its ``__dict__`` read apart: a compiled class's instance
        # has none until an attribute outside its slots is set, where ``_fields_of``'s getter
        # would raise at every object
        names = _names(t)
        slots = field_reader(t, names) if names else None
        dict_name = "__dict__" if t.__dictoffset__ else None
        return (INSTANCE_ENTRY, _head("o", t), slots, _BASE[t], len(names) == 1, dict_name)
    if r is _r_method:
        return (ATTRS_ENTRY, _METHOD_HEAD, _METHOD_READ)
    if r is _r_partial:
        return (ATTRS_ENTRY, _PARTIAL_HEAD, _PARTIAL_READ)
    if r is _r_null:
        return (CONST_ENTRY, _NULL_HEAD)
    if r is _r_harness:
        return (CONST_ENTRY, _head("H", t))
    if r is _r_cell:
        return (CELL_ENTRY, _CELL_HEAD, _EMPTY_CELL_HEAD)
    if r is _r_model:
        return (MODEL_ENTRY, _MODEL_LETTER, "oid")
    if r is _r_deque:
        return (DEQUE_ENTRY, _UNBOUNDED_DEQUE_HEAD, "maxlen")
    if r is _r_function:
        return (FUNCTION_ENTRY, _CODE_HEADS, _module_data)
    return None
