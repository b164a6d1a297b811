"""The state fingerprint's seeded objects: those that existed before the search, written by
reference in every dump, and their readings re-checked at C speed before each (``encoder.py``).

*Seeded objects.* An object that existed before the search began (``begin_search``) and whose
reading is a function of a few attributes (a function, a class of code under test, a plain
instance, a cell, a descriptor, ...) is entered, the first time it is met, in ``_Seeds``: every
later dump starts with it in the pickler's memo at a fixed index, so the C pickler writes a
reference to it without calling back into Python, and the dump begins with the *static
section*: the current reduce tuple of every seeded object, by index. Before each dump
``_Seeds.refresh`` checks, at C speed (``attrgetter`` and ``operator.is_`` over flat lists; dict
version numbers for classes and modules), that each seeded object's reduce tuple would still
be the same objects, and recomputes the ones that changed. The contents of the containers in
those tuples (a module's data, a function's defaults, an instance's ``__dict__``) are not
cached: the C pickler serialises them again in every dump. Objects created during the search
are never seeded, so two executions reaching one state write the same bytes.
"""

from __future__ import annotations

import ctypes
import gc
import itertools
import operator
from typing import TYPE_CHECKING, Any

from model_checks.harness.rt.dict_versions import (
    _MODULE_DATA,
    _dict_of,
    _value,
    _version_of,
    _view_of,
    same_versions,
)
from model_checks.harness.rt.native import NATIVE
from model_checks.harness.rt.object_kinds import _BASE, _names, field_reader
from model_checks.harness.rt.reducers import (
    _CLASSES,
    _K,
    Reduce,
    _r_atom,
    _r_builtin,
    _r_cell,
    _r_class,
    _r_function,
    _r_instance,
    _r_method,
    _r_module,
    _r_property,
    _r_static,
    _reducer,
)

if TYPE_CHECKING:
    from model_checks.harness.rt.encoder import _Section

# How a seeded object's reduce tuple is checked: ``_CONSTANT`` (it reads only attributes that
# cannot be written), ``_CLASS`` (a class: its dict's version), or a getter of the attributes it
# reads (two or more, so it returns a tuple), compared by identity.
_CONSTANT = "constant"
_CLASS = "class"
_FUNCTION_INPUTS = operator.attrgetter(
    "__code__", "__defaults__", "__kwdefaults__", "__closure__", "__dict__", "__globals__"
)
_INSTANCE_INPUTS = operator.attrgetter("__class__", "__dict__")  # (a module's too)
_CELL_INPUTS = operator.attrgetter("__class__", "cell_contents")
_STATIC_INPUTS = operator.attrgetter("__class__", "__func__")  # (``__init__`` can be called again)
_PROPERTY_INPUTS = operator.attrgetter("__class__", "fget", "fset", "fdel")
_ARITY = {_FUNCTION_INPUTS: 6, _INSTANCE_INPUTS: 2, _CELL_INPUTS: 2, _STATIC_INPUTS: 2, _PROPERTY_INPUTS: 4}
_SEEDABLE: dict[Any, Any] = {
    _r_atom: _CONSTANT,
    _r_method: _CONSTANT,
    _r_builtin: _CONSTANT,
    _r_module: _INSTANCE_INPUTS,  # its data object is refreshed in place (``_ModuleData``)
    _r_static: _STATIC_INPUTS,
    _r_property: _PROPERTY_INPUTS,
    _r_class: _CLASS,
    _r_function: _FUNCTION_INPUTS,
    _r_cell: _CELL_INPUTS,
}


def _seed_check(t: type, r: Any) -> Any:
    """How a seeded object of type ``t`` read by ``r`` is checked (None: never seeded)."""
    check = _SEEDABLE.get(r)
    if check is None and r is _r_instance:
        check = _INSTANCE_CHECKS.get(t)
        if check is None and _BASE[t] in (None, int, str, bytes, float, tuple, frozenset):
            # an instance read by its class, its slots and its ``__dict__`` (its built-in base,
            # if any, is an immutable value, read once)
            names = ("__class__", *_names(t), *(("__dict__",) if t.__dictoffset__ else ()))
            if len(names) == 1:
                # no slots and no ``__dict__`` (``__slots__ = ()``): a getter of one name returns
                # the value itself, not a tuple, so the class is read twice
                names = ("__class__", "__class__")
            check = _INSTANCE_CHECKS[t] = field_reader(t, names)
            _ARITY[check] = len(names)
    return check


_INSTANCE_CHECKS: dict[type, Any] = {}


class _Seeds:
    """The objects seeded in this search's dumps (the module's docstring)."""

    def __init__(self, pre_existing: list[object]) -> None:
        self.keep = pre_existing  # alive, so that no object of the search reuses their ids
        self.pre = {id(x) for x in pre_existing}
        # the tag function first: written by reference, not looked up by name in every dump
        self.memo: dict[int, tuple[int, object]] = {id(_K): (0, _K)}
        self.static: list[object] = [None]  # by memo index: the object's reading now (``_entry``)
        self.classes: list[tuple[int, type]] = []
        self.class_objects: list[type] = []  # (the classes of ``classes``, for ``same_versions``)
        self.class_versions: list[int] = []
        self.class_views: list[ctypes.c_uint64] = []
        # the objects checked by attribute getters: each one's getter, memo index, and (flat)
        # the identities its getter read when its reading was taken
        self.checked: list[object] = []
        self.getters: list[Any] = []
        self.indexes: list[int] = []
        self.flat: list[object] = []
        self.generation = 0  # counts the changes of ``memo`` and ``static``
        self.section: _Section | None = None  # the static section last written

    def add(self, x: object, r: Reduce, check: Any) -> None:
        inputs = () if check is _CONSTANT or check is _CLASS else _inputs(check, x)
        if inputs and inputs[0] is _NEVER:
            return  # an empty cell, a slot not set: read in every dump instead
        i = len(self.memo)
        self.memo[id(x)] = (i, x)
        self.static.append(_entry(r))
        self.generation += 1
        if check is _CLASS:
            view = _CLASSES[x][0]  # type: ignore[index]
            if view is not None:
                self.classes.append((i, x))  # type: ignore[arg-type]
                self.class_objects.append(x)  # type: ignore[arg-type]
                self.class_views.append(view)
                self.class_versions.append(_CLASSES[x][1])  # type: ignore[index]
        elif check is not _CONSTANT:
            self.checked.append(x)
            self.getters.append(check)
            self.indexes.append(i)
            self.flat.extend(inputs)

    def refresh(self) -> None:
        """Bring every seeded object's reduce tuple up to date (see ``_K``'s comment)."""
        modules = list(_MODULE_DATA.values())
        module_versions = list(map(_version_of, modules))
        if not same_versions(list(map(_dict_of, modules)), list(map(_view_of, modules)), module_versions):
            for m in modules:
                m.refresh()
        if not same_versions(self.class_objects, self.class_views, self.class_versions):
            versions = list(map(_value, self.class_views))
            for k, (i, c) in enumerate(self.classes):
                if versions[k] != self.class_versions[k]:
                    self.static[i] = _entry(_r_class(c))
            self.class_versions = versions
            self.generation += 1
        if not _same_readings(self.getters, self.checked, self.flat):
            self.generation += 1
            fresh: list[object] = []  # (kept whole: ``map`` stops at the shorter list)
            for x, check, i in zip(self.checked, self.getters, self.indexes, strict=True):
                inputs = _inputs(check, x)
                fresh.extend(inputs)
                self.static[i] = _entry(_reducer(type(x))(x))
            self.flat = fresh


def _same_readings_in_python(getters: list[Any], checked: list[object], flat: list[object]) -> bool:
    """Does every seeded object's getter still read the identities kept (``flat``)? One pass at
    C speed: every getter on its object, each identity against the one kept."""
    try:
        read = itertools.chain.from_iterable(map(operator.call, getters, checked))
        return all(map(operator.is_, read, flat))
    except (ValueError, AttributeError):  # an emptied cell, a slot not set
        return False


def _same_readings_in_c(getters: list[Any], checked: list[object], flat: list[object]) -> bool:
    """The same check in C (``_fingerprint_hot.c``), a function's inputs read from its struct."""
    return bool(NATIVE.same_readings(getters, checked, flat, _FUNCTION_INPUTS))  # type: ignore[union-attr]


_same_readings = _same_readings_in_python if NATIVE is None else _same_readings_in_c


def _entry(r: Reduce) -> object:
    """A seeded object's reduce tuple as its static section writes it: its tag and arguments
    followed by its state, in one tuple (the tag fixes the layout), or an atom's number."""
    args = r[1]
    if len(r) == 2:
        return args[1] if args[0] == "a" else args
    return args + r[2]


_NEVER = object()  # an attribute read that raised: never the same as any later read


def _inputs(check: Any, x: object) -> tuple[object, ...]:
    try:
        got: tuple[object, ...] = check(x)
    except (ValueError, AttributeError):  # an emptied cell, a slot not set
        return (_NEVER,) * _ARITY[check]
    return got


_SEEDS: list[_Seeds | None] = [None]


def begin_search() -> None:
    """A search begins: the objects alive now are its pre-existing ones (seedable); nothing
    seeded by an earlier search is kept."""
    _SEEDS[0] = _Seeds(_alive())


def _alive() -> list[object]:
    """Every object the collector tracks, including those a caller froze (``gc.freeze``), which
    ``gc.get_objects`` does not list: without them nothing would be seeded and every state would
    be written in full (about 1.5x the CPU of a search, measured on the work-stealing pools)."""
    if not gc.get_freeze_count():
        return gc.get_objects()
    gc.unfreeze()
    try:
        return gc.get_objects()
    finally:
        gc.collect()  # today's garbage is not frozen with the rest
        gc.freeze()


def end_search() -> None:
    _SEEDS[0] = None
