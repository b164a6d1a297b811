"""The synchronisation objects a program made at import that only a walk of its data finds.

``patched(module)`` stands in (``patch_imported``) for a lock, condition, event, queue, ... made at
import in the module's globals, its classes' attributes and the attributes of its module-level
objects. An outside review (session 35) found the same objects one step further away, where a
real lock was then taken for the program's: a false race, or the process blocked on it.

    LOCKS = {"a": threading.Lock()}          PAIR = (threading.Lock(), threading.Event())
    def f(lock=threading.Lock()): ...        g = functools.partial(work, threading.Lock())
    def make(): lock = ...; return inner     (a closure made at import)
    Slotted().lock, Outer().inner.lock       (``__slots__``; an object inside another)

So ``stand_in_reached`` walks what a module's globals reach: lists, dicts, deques, tuples (and
named tuples), sets and frozensets (session 41), the defaults, keyword defaults and closure of the
program's functions, a ``partial``'s arguments, and the fields (``__dict__`` and ``__slots__``) of
objects of the program's classes (since session 41 any module's of the program, not only this
one's) and of a ``SimpleNamespace``, ``DEPTH`` levels deep. Each synchronisation object found, and
each ``threading.local`` (``patch_local``), is replaced by its stand-in where it is: in place in a
mutable container, field or cell; an immutable one (a tuple, a frozenset, the defaults, a
partial) is rebuilt and put in its parent's place. Every change is undone when patching ends
(``put_back``: also in the copies each execution put in its place). A ``threading.local`` found
further down (a bounded look past ``DEPTH`` into containers) is refused by name.
"""

from __future__ import annotations

import _thread
import functools
import sys
import types
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

from model_checks.harness import own_code, patch_local
from model_checks.harness.race_sites import SKIP_FILES
from model_checks.harness.rt.scheduler import UsageError

# (value, its name in words) -> its stand-in, or None when it is no synchronisation object
StandInFor = Callable[[object, str], object | None]
Undo = list[Callable[[], None]]
Factory = Callable[[object], object | None]  # a real object ``patched`` replaced by name -> its replacement

# How deep the walk goes below a module's global. Each container is walked once (``seen``), so
# the depth bounds the walk's recursion, not its cost; 4 left a ``threading.local`` five dicts
# down real (eighth review, r032: the threads saw each other's values, a false alarm).
DEPTH = 16
_DEEPER = 10_000  # how many values below ``DEPTH`` are looked at for a ``threading.local``


def stand_in_reached(
    module: types.ModuleType, stand_in_for: StandInFor, undo: Undo, factory: Factory = lambda _: None
) -> None:
    """Stand-ins for the synchronisation objects that ``module``'s globals reach (not the globals
    themselves, nor its classes' attributes and its objects' own: ``patched`` does those), and for
    the factories among its classes' attributes (``factory``: a replaced name's replacement)."""
    walk = _Walk(module.__name__, stand_in_for, undo, factory=factory)
    for name, value in list(vars(module).items()):
        if not name.startswith("__"):
            walk.set_field(module, name, value, f"{module.__name__}.{name}", DEPTH + 1, stand_in=False)
    for name, tls in walk.too_deep:
        if not patch_local.made_per_thread(tls):  # (not reached on a shorter path either)
            raise UsageError(
                f"{name} is a threading.local made at import more than {DEPTH} levels below a "
                "module global: the explorer does not look that deep, so every controlled thread "
                "would share its one namespace; keep it nearer a global, or make it inside the "
                "explored function"
            )


def put_back(module: types.ModuleType, real_of: StandInFor) -> None:
    """Put the real object back in place of each stand-in ``module``'s globals reach
    (``real_of``: a stand-in's real object, else None), when patching ends. The undo of
    ``stand_in_reached`` puts it back into the container it was found in, but each execution
    restores a module's dict with copies of the lists and dicts inside it (``patch_state``), so
    one two containers down was left in place: the program kept a stand-in after patching."""
    walk = _Walk(module.__name__, real_of, [], putting_back=True)
    for name, value in list(vars(module).items()):
        if not name.startswith("__"):
            walk.set_field(module, name, value, name, DEPTH + 1, stand_in=False)


class _Walk:
    def __init__(
        self,
        module: str,
        stand_in_for: StandInFor,
        undo: Undo,
        putting_back: bool = False,
        factory: Factory = lambda _: None,
    ) -> None:
        self.module = module
        self.factory = factory
        self.stand_in_for = stand_in_for
        self.undo = undo
        self.putting_back = putting_back
        self.seen: set[int] = set()
        self.programs: dict[str | None, bool] = {}  # (``_programs``, by module name)
        self.too_deep: list[tuple[str, object]] = []  # (``look_deeper``)

    def own(self, value: object) -> bool:
        """An object of the program's classes (this module's, or another module's of the
        program's code: not a library's) or a ``SimpleNamespace``, or one of its functions."""
        if isinstance(value, types.SimpleNamespace):
            return True
        module = value.__module__ if isinstance(value, types.FunctionType) else type(value).__module__
        if module == self.module:
            return True
        found = self.programs.get(module)
        if found is None:
            found = self.programs[module] = _programs(module)
        return found

    def replaced(self, value: object, name: str, depth: int) -> object | None:
        """``value``'s stand-in, or ``value`` rebuilt with stand-ins inside (an immutable
        container), or None when it stays as it is (after stand-ins were put inside it)."""
        fake = self.stand_in_for(value, name)
        if fake is not None:
            return fake
        return self.inside(value, name, depth)

    def inside(self, value: object, name: str, depth: int) -> object | None:
        """Put stand-ins inside ``value``; an immutable value with one inside comes back rebuilt."""
        if id(value) in self.seen:
            return None
        if isinstance(value, _thread._local) and self.putting_back:
            return None
        if type(value) is _thread._local:  # a plain ``threading.local()``: one namespace a thread
            return patch_local.replacing(value)
        if depth <= 0:
            if not self.putting_back:
                self.look_deeper(value, name)
            return None
        if isinstance(value, (list, deque)):
            self.seen.add(id(value))
            for i, item in enumerate(list(value)):
                self.put(value, i, item, f"{name}[{i}]", depth)
        elif isinstance(value, dict):
            self.seen.add(id(value))
            if isinstance(value, defaultdict):  # ``defaultdict(threading.Lock)``
                factory = value.default_factory
                self.set_field(value, "default_factory", factory, f"{name}'s default_factory", depth)
            for key, item in list(value.items()):
                self.put(value, key, item, f"{name}[{key!r}]", depth)
        elif isinstance(value, set):
            self.seen.add(id(value))
            for item in list(value):
                self.put_in_set(value, item, f"an item of {name}", depth)
        elif type(value) is frozenset:
            self.seen.add(id(value))
            found = {item: self.replaced(item, f"an item of {name}", depth - 1) for item in value}
            if any(new is not None for new in found.values()):
                return frozenset(old if new is None else new for old, new in found.items())
        elif type(value) is tuple or (isinstance(value, tuple) and hasattr(value, "_fields")):
            self.seen.add(id(value))
            items = [self.replaced(item, f"{name}[{i}]", depth - 1) for i, item in enumerate(value)]
            if any(item is not None for item in items):
                new = [item if item is not None else old for item, old in zip(items, value, strict=True)]
                rebuild: Any = type(value)  # a named tuple takes its fields one by one
                return rebuild(*new) if hasattr(value, "_fields") else tuple(new)
        elif isinstance(value, functools.partial):
            self.seen.add(id(value))
            self.partial(value, name, depth)
        elif isinstance(value, _thread._local):
            # a program's subclass of ``threading.local``: its object's namespaces made per
            # controlled thread in place (no stand-in: its class is the program's, and its layout
            # the C type's)
            self.seen.add(id(value))
            undo = patch_local.per_thread(value)
            if undo is not None:
                self.undo.append(undo)
        elif isinstance(value, type) and value.__module__ == self.module:
            self.seen.add(id(value))  # its own attributes are ``patched``'s: what they hold
            for field, item in list(vars(value).items()):
                if not field.startswith("__") or isinstance(item, types.FunctionType):  # __init__
                    self.class_field(value, field, item, f"{name}.{field}", depth)
            for spec in vars(value).get("__dataclass_fields__", {}).values():
                factory = spec.default_factory  # (what ``dataclasses.fields`` tells; ``__init__``
                # holds its own reference in a closure cell)
                self.set_field(spec, "default_factory", factory, f"{name}.{spec.name}'s factory", depth)
        elif self.own(value):
            self.seen.add(id(value))
            if isinstance(value, types.FunctionType):
                self.function(value, name, depth)
            else:
                self.fields(value, name, depth)
        return None

    def look_deeper(self, value: object, name: str) -> None:
        """Below ``DEPTH``: note each ``threading.local`` found in the containers (a bounded look,
        not a walk), refused at the end unless a shorter path reached it."""
        stack, looked = [(value, name)], 0
        while stack and looked < _DEEPER:
            value, name = stack.pop()
            looked += 1
            if isinstance(value, _thread._local):
                self.too_deep.append((name, value))
            elif isinstance(value, dict):
                stack += [(item, f"{name}[{key!r}]") for key, item in value.items()]
            elif isinstance(value, (list, tuple, deque)):
                stack += [(item, f"{name}[{i}]") for i, item in enumerate(value)]
            elif isinstance(value, (set, frozenset)):
                stack += [(item, f"an item of {name}") for item in value]

    def put(self, container: Any, key: object, item: object, name: str, depth: int) -> None:
        new = self.replaced(item, name, depth - 1)
        if new is not None:
            container[key] = new
            self.undo.append(lambda: container.__setitem__(key, item))

    def put_in_set(self, container: set[Any], item: object, name: str, depth: int) -> None:
        """A set's item (eighth review, r031: a ``threading.local`` in a module's set stayed real)."""
        new = self.replaced(item, name, depth - 1)
        if new is not None:
            container.discard(item)
            container.add(new)
            self.undo.append(functools.partial(_swap, container, new, item))

    def set_field(
        self, owner: object, field: str, value: object, name: str, depth: int, stand_in: bool = True
    ) -> None:
        """``owner.field``, ``value``: its stand-in (unless not ``stand_in``: ``patched`` decided
        on it already) or, rebuilt with stand-ins inside, put in its place."""
        new = (self.replaced if stand_in else self.inside)(value, name, depth - 1)
        if new is not None:
            setattr(owner, field, new)
            self.undo.append(lambda: setattr(owner, field, value))

    def class_field(self, cls: type, field: str, value: object, name: str, depth: int) -> None:
        """A class's attribute: a factory (``lock_factory = threading.Lock``) is replaced, binding as
        the real one did (a builtin function stored on a class does not bind, a Python one does:
        ``self.lock_factory()`` passes no ``self`` to ``allocate_lock``); anything else is
        ``patched``'s, so only what it holds is walked."""
        fake = None if self.putting_back else self.factory(value)
        if fake is None:
            self.set_field(cls, field, value, name, depth, stand_in=False)
            return
        if isinstance(fake, types.FunctionType) and not isinstance(value, types.FunctionType):
            fake = staticmethod(fake)
        setattr(cls, field, fake)
        self.undo.append(lambda: setattr(cls, field, value))

    def fields(self, obj: object, name: str, depth: int) -> None:
        """An object of the module's class: its ``__dict__`` and its slots."""
        for field, value in list(getattr(obj, "__dict__", {}).items()):
            self.set_field(obj, field, value, f"{name}.{field}", depth)
        for cls in type(obj).__mro__:
            slots = cls.__dict__.get("__slots__", ())
            for field in (slots,) if isinstance(slots, str) else slots:
                if field not in ("__dict__", "__weakref__") and hasattr(obj, field):
                    self.set_field(obj, field, getattr(obj, field), f"{name}.{field}", depth)

    def function(self, fn: types.FunctionType, name: str, depth: int) -> None:
        """The module's function: its defaults, keyword defaults and closure cells."""
        defaults = fn.__defaults__
        if defaults:
            new = self.inside(defaults, f"{name} (a default)", depth)
            if isinstance(new, tuple):
                fn.__defaults__ = new
                self.undo.append(lambda: setattr(fn, "__defaults__", defaults))
        if fn.__kwdefaults__:
            self.inside(fn.__kwdefaults__, f"{name} (a keyword default)", depth)
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
            try:
                value = cell.cell_contents
            except ValueError:  # not bound yet
                continue
            new = self.replaced(value, f"{name}'s {var}", depth - 1)
            if new is not None:
                cell.cell_contents = new
                self.undo.append(functools.partial(setattr, cell, "cell_contents", value))

    def partial(self, p: functools.partial[Any], name: str, depth: int) -> None:
        """A ``partial``'s function, arguments and keywords (set together: its one setter)."""
        state: Any = p.__reduce__()[2]
        func, args, keywords, fields = state
        new_args = self.inside(args, f"{name}'s arguments", depth)
        self.inside(keywords or {}, f"{name}'s keywords", depth)
        new_func = self.replaced(func, f"{name}'s function", depth)  # ``partial(threading.Thread)``
        if isinstance(new_args, tuple) or new_func is not None:
            setstate: Any = p.__setstate__  # type: ignore[attr-defined]  # (C partial's, untyped)
            new_func = func if new_func is None else new_func
            setstate((new_func, args if new_args is None else new_args, keywords, fields))
            self.undo.append(lambda: setstate(state))


def _swap(container: set[Any], new: object, old: object) -> None:
    """Put ``old`` back in place of ``new`` (if the program has not taken it out)."""
    if new in container:
        container.discard(new)
        container.add(old)


def _programs(module: str | None) -> bool:
    """Is ``module`` (by name) the program's code: a file neither a library's nor lanecheck's?"""
    found = sys.modules.get(module or "")
    path = getattr(found, "__file__", None)
    return isinstance(path, str) and not path.startswith(SKIP_FILES) and not own_code.own(path)
