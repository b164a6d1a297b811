"""Each execution starts from the program's modules as they were when patching began.

A program's function is explored by running it again and again in one process, where a real run
starts it once in a fresh interpreter. A module global it changes (``global total; total += 1``,
``RESULTS.append(...)``, ``Registry.count += 1``) would carry one execution's values into the
next: an outside review saw a correctly locked counter fail its ``assert total == 2`` at the
fourth execution (session 35). So ``patched(module)`` takes a ``Snapshot`` of the module's
globals and its classes' data, and every execution restores it: the bindings as they were, the
contents of lists, dicts, sets and deques as they were (copied, so an execution's changes to them
do not reach the snapshot), and globals made since removed."""

from __future__ import annotations

import copy
import types
from collections import deque
from typing import Any

_MUTABLE = (list, dict, set, deque, bytearray)
_CODE = (
    types.ModuleType,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    classmethod,
    staticmethod,
    property,
)


def _saved(value: object) -> tuple[object, object | None]:
    """(the value, a copy of its contents to restore it from, or None when it is not restored)."""
    if isinstance(value, _MUTABLE):
        try:
            return value, copy.deepcopy(value)
        except Exception:  # contents that cannot be copied are left as they are
            return value, None
    return value, None


def _restore(value: Any, contents: Any) -> None:
    """Put ``contents`` back into ``value`` in place (the objects that refer to it see it)."""
    if contents is None:
        return
    fresh = copy.deepcopy(contents)
    if isinstance(value, dict):
        value.clear()
        value.update(fresh)
    elif isinstance(value, (list, bytearray)):
        value[:] = fresh
    elif isinstance(value, (set, deque)):
        value.clear()
        if isinstance(value, deque):
            value.extend(fresh)
        else:
            value.update(fresh)


class Snapshot:
    """The globals of some modules and the data of their classes, to start each execution from."""

    def __init__(self, modules: tuple[types.ModuleType, ...]) -> None:
        self.modules: list[tuple[dict[str, Any], dict[str, tuple[object, object | None]]]] = []
        self.classes: list[tuple[type, dict[str, tuple[object, object | None]]]] = []
        for module in modules:
            space = vars(module)
            self.modules.append((space, {name: _saved(value) for name, value in space.items()}))
            for value in list(space.values()):
                if isinstance(value, type) and value.__module__ == module.__name__:
                    data = {
                        name: _saved(v)
                        for name, v in vars(value).items()
                        if not name.startswith("__") and not isinstance(v, _CODE)
                    }
                    if data:
                        self.classes.append((value, data))

    def restore(self) -> None:
        for space, saved in self.modules:
            for name in [n for n in space if n not in saved]:
                del space[name]
            for name, (value, contents) in saved.items():
                if space.get(name, _ABSENT) is not value:
                    space[name] = value
                _restore(value, contents)
        for cls, data in self.classes:
            for name, (value, contents) in data.items():
                if cls.__dict__.get(name, _ABSENT) is not value:
                    setattr(cls, name, value)
                _restore(value, contents)


_ABSENT = object()
