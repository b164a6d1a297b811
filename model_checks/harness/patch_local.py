"""``threading.local`` in patch mode: attributes of one controlled thread, not of the OS thread.

The greenlet back end runs every controlled thread on one OS thread, so the real
``threading.local`` would give them all one namespace, and the race detector would see every
thread writing the same attribute. Here each controlled thread of an execution has its own
namespace, as each real thread has: made on the thread's first access, by calling the class's
``__init__`` with the arguments of its creation (as ``threading.local`` does for a subclass).

An instance's ``__dict__`` is the namespace of the thread touching it: every attribute access
first puts that thread's namespace in place. A controlled thread is switched only at a
controlled operation, never inside an attribute access, so no other thread can see it in
between. Namespaces belong to one execution: the next execution starts with none but the
one the program began with (``initial``: what the creating OS thread had set, which the
program's main thread sees, as at import time).

The class lives in the harness, so the race detector does not track its attributes
(``race_sites.harness_owned``, which also takes its subclasses).
"""

from __future__ import annotations

import _thread
from collections.abc import Callable
from typing import Any

_real_get_ident = _thread.get_ident

# (execution, controlled thread id) of the controlled thread running here, or None: set by
# ``patch.py``, which knows the running execution (a function, so that this module imports none)
running: list[Callable[[], tuple[object, int] | None]] = [lambda: None]


class _Namespaces:
    """One ``local``'s namespaces: by controlled thread for the running execution, by OS
    thread outside controlled threads."""

    __slots__ = ("args", "execution", "initial", "of_os_thread", "of_thread")

    def __init__(self, args: tuple[tuple[Any, ...], dict[str, Any]], initial: dict[str, Any] | None) -> None:
        self.args = args
        self.initial = initial  # what the program's main thread starts with (see the docstring)
        self.execution: object = None
        self.of_thread: dict[int, dict[str, Any]] = {}
        self.of_os_thread: dict[int, dict[str, Any]] = {}


class local:
    """``threading.local`` whose namespaces are per controlled thread (module docstring)."""

    __slots__ = ("__dict__", "__weakref__", "_local__spaces")

    def __new__(cls, *args: Any, **kwargs: Any) -> local:
        if (args or kwargs) and cls.__init__ is object.__init__:
            raise TypeError("Initialization arguments are not supported")
        self = object.__new__(cls)
        spaces = _Namespaces((args, kwargs), None)
        object.__setattr__(self, "_local__spaces", spaces)
        # the creating thread's namespace is made now; ``__init__`` then runs in it as usual
        object.__setattr__(self, "__dict__", _namespace(spaces, self, fresh=False))
        return self

    def __getattribute__(self, name: str) -> Any:
        if name == "__class__":
            # ``isinstance`` asks it (the race detector's handler too): not a thread's first touch,
            # which runs ``__init__`` and must run as the program's code, traced
            return type(self)
        _enter(self)
        return object.__getattribute__(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "__dict__":
            raise AttributeError(f"{type(self).__name__!r} object attribute '__dict__' is read-only")
        _enter(self)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name == "__dict__":
            raise AttributeError(f"{type(self).__name__!r} object attribute '__dict__' is read-only")
        _enter(self)
        object.__delattr__(self, name)


def replacing(real: object) -> local:
    """A ``local`` standing in for a real ``threading.local`` made before patching (a module's
    ``_tls = threading.local()``): its namespaces start with what ``real`` holds for this OS
    thread, which is what the program's main thread reads."""
    made = local()
    spaces: _Namespaces = object.__getattribute__(made, "_local__spaces")
    spaces.initial = dict(getattr(real, "__dict__", {}))
    object.__getattribute__(made, "__dict__").update(spaces.initial)
    return made


def _enter(self: local) -> None:
    spaces: _Namespaces = object.__getattribute__(self, "_local__spaces")
    object.__setattr__(self, "__dict__", _namespace(spaces, self, fresh=True))


def _namespace(spaces: _Namespaces, self: local, *, fresh: bool) -> dict[str, Any]:
    """The namespace of the thread running now; a new one is made (and, if ``fresh``, the
    class's ``__init__`` run in it) on the thread's first access."""
    where = running[0]()
    if where is None:
        table, key = spaces.of_os_thread, _real_get_ident()
    else:
        execution, key = where
        if spaces.execution is not execution:  # a new execution: no thread has touched it yet
            spaces.execution, spaces.of_thread = execution, {}
        table = spaces.of_thread
    found = table.get(key)
    if found is not None:
        return found
    main = where is not None and key == 0
    made: dict[str, Any] = dict(spaces.initial) if main and spaces.initial is not None else {}
    table[key] = made
    if fresh:
        object.__setattr__(self, "__dict__", made)
        cls = type(self)
        if cls.__init__ is not object.__init__:
            args, kwargs = spaces.args
            cls.__init__(self, *args, **kwargs)
    return made


__all__ = ["local", "replacing", "running"]
