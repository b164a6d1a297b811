"""What a call site accesses, for the race detector (``races.py``): a container's method, a
listed function handed containers, ``getattr``/``setattr`` by name, ``operator.setitem``, a
generator's ``send``. The call itself runs untraced (C code, or the standard library), so the
accesses it makes to the data it is handed are recorded at the call, as the caller's.

What a listed function reads of a container it is handed is the whole container and, for one that
formats, serialises or compares (``race_sites.DEEP``), the containers inside it a few levels down
(``str(outer)`` formats ``outer[0]``'s items too); a container's method that takes in another's
items reads it (``dst.update(src)``, ``ys.extend(xs)``: ``race_sites.READS_ARGUMENTS``); and a
container's method handed as an argument (``max(keys, key=d.get)``, ``map(xs.append, items)``)
is called by the function on that container (session 36: an outside review found each of these
proved race free).
"""

from __future__ import annotations

import operator
import types
from typing import TYPE_CHECKING, Any

from model_checks.harness.race_frames import stack_value
from model_checks.harness.race_sites import (
    ALL,
    ATTR_BUILTINS,
    CONTAINER_FUNCTIONS,
    CONTAINERS,
    DEEP,
    GENERATOR_METHODS,
    ITEM_FUNCTIONS,
    KEYED,
    METHODS,
    READS_ARGUMENTS,
    named_call,
)

if TYPE_CHECKING:
    from model_checks.harness.races import RaceDetector

# How deep a read of a handed container goes into the containers inside it, and how many items of
# each it looks at (a call that formats a big structure reads every item; its first ones are the
# ones a report needs).
NESTED_DEPTH = 3
NESTED_ITEMS = 64
# a container's method, unbound (``list.append``, ``list.__setitem__``) and bound (``xs.append``,
# ``xs.__setitem__``)
_METHOD_TYPES = (types.MethodDescriptorType, types.WrapperDescriptorType)
_BOUND_TYPES = (types.BuiltinMethodType, types.MethodWrapperType)


class CallSites:
    """The call sites of one execution's ``RaceDetector``: each decoded into the accesses it makes,
    handed to the detector."""

    def __init__(self, detector: RaceDetector) -> None:
        self.detector = detector

    def read_arguments(
        self,
        tid: int,
        frame: types.FrameType,
        argc: int,
        name: str,
        first_written: bool = False,
        deep: bool = False,
    ) -> None:
        """The containers among a call's ``argc`` arguments are read whole (``deep``: with the
        containers they hold, for a call that formats, serialises or compares them; a copy
        (``list(xs)``) reads only the outer one), the first one written for a function that
        changes it (``heappush``); a container's method among them is called on its container."""
        for depth in range(argc, 0, -1):  # the first argument is the deepest
            arg = stack_value(frame, depth)
            if isinstance(arg, CONTAINERS):
                label = f"{name}({type(arg).__name__})"
                if first_written and depth == argc:
                    self.detector._access(tid, arg, ALL, True, frame, label)
                else:
                    self.read_whole(tid, arg, frame, label, NESTED_DEPTH if deep else 1)
            elif isinstance(arg, _BOUND_TYPES):
                self._method_handed(tid, arg, frame, name)

    def read_whole(self, tid: int, container: Any, frame: types.FrameType, label: str, depth: int) -> None:
        """``container`` read whole, and the containers among its first items (its values, for a
        dict), ``depth`` levels down."""
        self.detector._access(tid, container, ALL, False, frame, label)
        if depth <= 1:
            return
        items = container.values() if isinstance(container, dict) else container
        for i, item in enumerate(items):
            if i >= NESTED_ITEMS:
                break
            if isinstance(item, CONTAINERS) and item is not container:
                self.read_whole(tid, item, frame, label, depth - 1)

    def _method_handed(self, tid: int, method: Any, frame: types.FrameType, by: str) -> None:
        """A container's method handed to a function that calls it (``key=d.get``): its access."""
        owner = method.__self__
        spec = METHODS.get(method.__name__)
        if spec is not None and isinstance(owner, CONTAINERS):
            label = f"{by}({type(owner).__name__}.{method.__name__})"
            self.detector._access(tid, owner, ALL, spec[0], frame, label)

    def call(self, tid: int, frame: types.FrameType, argc: int) -> None:
        meth = stack_value(frame, argc + 2)
        target = stack_value(frame, argc + 1)
        if meth is not None:  # obj.method(args): the method's function, then obj
            if named_call(meth):
                if meth in GENERATOR_METHODS:  # gen.send(v): it runs the generator
                    if isinstance(target, types.GeneratorType):
                        self.detector._generator(tid, target, frame)
                else:  # ", ".join(items): its arguments are read whole
                    name = getattr(meth, "__name__", "call")
                    self.read_arguments(tid, frame, argc, name, deep=meth in DEEP)
                return
            if not isinstance(target, CONTAINERS) or not isinstance(meth, _METHOD_TYPES):
                return
            name = meth.__name__
            args = argc
        elif target is len and argc == 1:
            container = stack_value(frame, 1)
            if isinstance(container, CONTAINERS):
                self.detector._access(tid, container, ALL, False, frame, "")
            return
        elif named_call(target):
            self._named(tid, frame, argc, target)
            return
        else:  # a bound builtin method called through a name: f = d.get; f(k); xs.__setitem__(0, 1)
            owner = getattr(target, "__self__", None)
            if not isinstance(owner, CONTAINERS) or not isinstance(target, _BOUND_TYPES):
                return
            name = target.__name__
            target = owner
            args = argc
        spec = METHODS.get(name)
        if spec is None:
            return
        write, keyed = spec
        if keyed and args >= 1 and isinstance(target, KEYED):
            self.detector._item(tid, target, stack_value(frame, args), write, frame)
        else:
            self.detector._access(tid, target, ALL, write, frame, f"{type(target).__name__}.{name}()")
            if name in READS_ARGUMENTS:  # ``dst.update(src)``, ``ys.extend(xs)``, ``s.issubset(t)``
                self.read_arguments(tid, frame, args, f"{type(target).__name__}.{name}")

    def _named(self, tid: int, frame: types.FrameType, argc: int, target: object) -> None:
        """A call of one of ``race_sites.NAMED_CALLS`` by its name."""
        if target in ATTR_BUILTINS:  # getattr(obj, "name"), setattr, delattr, hasattr
            write, counts = ATTR_BUILTINS[target]
            attr = stack_value(frame, argc - 1)
            if argc in counts and isinstance(attr, str):
                obj = stack_value(frame, argc)
                (self.detector._store_attr if write else self.detector._load_attr)(tid, obj, attr, frame)
        elif target is next:
            gen = stack_value(frame, argc) if argc >= 1 else None
            if isinstance(gen, types.GeneratorType):
                self.detector._generator(tid, gen, frame)
        elif target in ITEM_FUNCTIONS:  # operator.setitem(d, k, v): d[k]
            container = stack_value(frame, argc) if argc >= 2 else None
            if isinstance(container, CONTAINERS):
                key = stack_value(frame, argc - 1)
                if target is operator.contains:
                    self.detector._item(tid, container, key, False, frame)
                else:
                    self.detector._item(tid, container, key, ITEM_FUNCTIONS[target], frame, indexed=True)
        else:  # heapq.heappush(heap, x), sorted(items), zip(xs, ys): its containers
            name = getattr(target, "__name__", "call")
            self.read_arguments(tid, frame, argc, name, CONTAINER_FUNCTIONS[target], deep=target in DEEP)
