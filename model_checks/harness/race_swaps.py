"""Whole-object writes: ``obj.__dict__ = d`` and ``obj.__class__ = Other`` (session 40's review:
a config reloaded by swapping its fields while another thread read them, and a state machine
changing its class while another thread called its method, were each proved race free).

An object's attribute is the key of its ``__dict__`` (``race_attributes``), so swapping the dict
writes the old one whole (every field read or written before) and the new one whole (every field
read or written after). A class store writes the fields whole too, and the object's class; but a
method found as code in the class (``m.handle()``) is no read of the object, and recording it
as one would cost every method call of every program a call of the handler. So it is recorded
(as a read of the object's class, once a step per site and object, as a read of code is) only
once code under test that stores an object's ``__class__`` has been seen: ``note_code`` looks at
each traced code object when its access table is made, and at every code object of its module
the first time code of that file is tabled, so a class store anywhere in a program's module
turns the reads on before its threads run. Not seen before its reads: a class store in code of
another module none of whose code has run yet, or made by ``exec`` (the reads are on from then
on, for the rest of the process)."""

from __future__ import annotations

import dis
import sys
import types
from collections.abc import Iterator

from model_checks.harness.race_frames import NATIVE
from model_checks.harness.race_library import TRACED_FILES

WHOLE = frozenset({"__dict__", "__class__"})  # the attribute stores that write an object whole
CLASS_READS = [False]  # has code under test that stores an object's class been seen?
_SCANNED: set[str] = set()  # the files whose modules were looked at
_STORES = frozenset({"STORE_ATTR", "DELETE_ATTR"})


def note_code(code: types.CodeType) -> None:
    """``code`` is traced (its access table was just made): does it, or its module, store an
    object's ``__class__``?"""
    if CLASS_READS[0] or code.co_filename in TRACED_FILES:  # (the library's own: not the program's)
        return
    if _stores_class(code):
        read_classes()
        return
    file = code.co_filename
    if file in _SCANNED:
        return
    _SCANNED.add(file)
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == file and any(map(_stores_class, _codes(module))):
            read_classes()
            return


def read_classes() -> None:
    """From now on a method found in an object's class is a read of the object's class."""
    CLASS_READS[0] = True
    if NATIVE is not None:
        NATIVE.read_classes(True)


def _stores_class(code: types.CodeType) -> bool:
    """``x.__class__ = ...`` or ``setattr(x, "__class__", ...)`` in ``code`` or code inside it."""
    if "__class__" in code.co_consts:
        return True
    if "__class__" in code.co_names and any(
        ins.opname in _STORES and ins.argval == "__class__" for ins in dis.get_instructions(code)
    ):
        return True
    return any(_stores_class(c) for c in code.co_consts if isinstance(c, types.CodeType))


def _codes(module: types.ModuleType) -> Iterator[types.CodeType]:
    """The code of ``module``'s functions and of its classes' methods (and properties)."""
    # (kinds read from ``type(x)``: ``isinstance`` would ask a program's object its ``__class__``,
    # running its ``__getattribute__``, which may take a lock: seventh review, p095)
    for value in list(vars(module).values()):
        for item in (value, *(list(vars(value).values()) if issubclass(type(value), type) else ())):
            if type(item) in (staticmethod, classmethod):
                item = item.__func__
            for fn in (item.fget, item.fset) if type(item) is property else (item,):
                if type(fn) is types.FunctionType:
                    yield fn.__code__


__all__ = ["CLASS_READS", "WHOLE", "note_code", "read_classes"]
