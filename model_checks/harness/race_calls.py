"""What a call site accesses, for the race detector (``races.py``): a container's method, a
listed function handed containers, ``getattr``/``setattr`` by name, ``operator.setitem``, a
generator's ``send``. The call itself runs untraced (C code, or the standard library), so the
accesses it makes to the data it is handed are recorded at the call, as the caller's.

What a listed function reads of a container it is handed is the whole container and, for one that
formats, serialises or compares (``race_functions.DEEP``), the containers inside it a few levels down
(``str(outer)`` formats ``outer[0]``'s items too); a container's method that takes in another's
items reads it (``dst.update(src)``, ``ys.extend(xs)``: ``race_functions.READS_ARGUMENTS``); and a
container's method handed as an argument (``max(keys, key=d.get)``, ``map(xs.append, items)``)
is called by the function on that container (session 36: an outside review found each of these
proved race free). A container's method or a listed function handed to a thread, a timer or a
pool (``Thread(target=xs.append)``, ``pool.submit(d.update, other)``) is called by the harness's
or the library's code, untraced: ``Handed`` records its accesses when it runs, at the line that
handed it (session 37).
"""

from __future__ import annotations

import functools
import operator
import sys
import types
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from model_checks.harness.race_frames import stack_value
from model_checks.harness.race_functions import (
    ATTR_BUILTINS,
    CONTAINER_FUNCTIONS,
    DEEP,
    GENERATOR_METHODS,
    ITEM_FUNCTIONS,
    READS_ARGUMENTS,
    WRITES_ARGUMENT,
    WRITES_FIRST_ARGUMENT,
    named_call,
)
from model_checks.harness.race_library import SERIALISES
from model_checks.harness.race_sites import (
    ALL,
    CODE_TYPES,
    CONTAINERS,
    ITERATORS,
    KEYED,
    METHODS,
    STREAMS,
    Where,
    harness_owned,
    under_test,
)

if TYPE_CHECKING:
    from model_checks.harness.races import RaceDetector
    from model_checks.harness.rt.scheduler import Execution

# How deep a read of a handed container goes into the containers inside it, and how many items of
# each it looks at (a call that formats a big structure reads every item; its first ones are the
# ones a report needs).
NESTED_DEPTH = 3
NESTED_ITEMS = 64
# the listed functions that write an in-memory stream handed to them (``print(..., file=buf)``,
# ``json.dump(obj, buf)``, ``pickle.dump(obj, buf)``), by name
WRITE_STREAMS = frozenset({"print", "dump"})
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
        frame: Where,
        args: Sequence[object],
        name: str,
        written: int | None = None,
        deep: bool = False,
        serialises: bool = False,
    ) -> None:
        """The containers among a call's arguments are read whole (``deep``: with the containers
        they hold, for a call that formats, serialises or compares them; a copy (``list(xs)``)
        reads only the outer one), the one at ``written`` written by a function that changes it
        (``heappush``'s first, ``struct.pack_into``'s second); a container's method among them
        is called on its container; an object handed to a serialiser (``pickle.dumps(obj)``) has
        its fields read."""
        for i, arg in enumerate(args):
            if isinstance(arg, STREAMS):
                if name in WRITE_STREAMS:  # (``str(buf)`` or a log call names it and reads nothing)
                    self.detector._access(tid, arg, ALL, True, frame, f"{name}({type(arg).__name__})")
            elif isinstance(arg, CONTAINERS):
                label = f"{name}({type(arg).__name__})"
                if i == written:
                    self.detector._access(tid, arg, ALL, True, frame, label)
                else:
                    self.read_whole(tid, arg, frame, label, NESTED_DEPTH if deep else 1)
            elif isinstance(arg, _BOUND_TYPES):
                self._method_handed(tid, arg, frame, name)
            elif serialises and not isinstance(arg, CODE_TYPES) and not harness_owned(arg):
                fields = getattr(arg, "__dict__", None)
                if isinstance(fields, dict):
                    self.read_whole(tid, fields, frame, f"{name}({type(arg).__name__})", NESTED_DEPTH)

    def read_whole(self, tid: int, container: Any, frame: Where, label: str, depth: int) -> None:
        """``container`` read whole, and the containers among its first items (its values, for a
        dict), ``depth`` levels down."""
        self.detector._access(tid, container, ALL, False, frame, label)
        if depth <= 1 or isinstance(container, STREAMS):  # (iterating a stream would consume it)
            return
        items = container.values() if isinstance(container, dict) else container
        for i, item in enumerate(items):
            if i >= NESTED_ITEMS:
                break
            if isinstance(item, CONTAINERS) and item is not container and not isinstance(item, STREAMS):
                self.read_whole(tid, item, frame, label, depth - 1)

    def _method_handed(self, tid: int, method: Any, frame: Where, by: str) -> None:
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
                elif meth in ATTR_BUILTINS:  # obj.__getattribute__("x"): obj.x
                    self._named(tid, frame, [target, *_arguments(frame, argc)], meth)
                else:  # ", ".join(items), random.shuffle(xs) (a bound method, unpacked): its arguments
                    self._named(tid, frame, _arguments(frame, argc), meth)
                return
            if isinstance(target, CONTAINERS) and isinstance(meth, _METHOD_TYPES):
                self._method(tid, frame, target, meth.__name__, _arguments(frame, argc))
        elif target is len and argc == 1:
            container = stack_value(frame, 1)
            if isinstance(container, CONTAINERS):
                self.detector._access(tid, container, ALL, False, frame, "")
        elif named_call(target):
            self._named(tid, frame, _arguments(frame, argc), target)
        elif isinstance(target, _METHOD_TYPES) and argc >= 1:  # ``list.append(xs, 9)``
            args = _arguments(frame, argc)
            if isinstance(args[0], CONTAINERS):
                self._method(tid, frame, args[0], target.__name__, args[1:])
        else:  # a bound builtin method called through a name: f = d.get; f(k); xs.__setitem__(0, 1)
            self.bound(tid, frame, target, _arguments(frame, argc))

    def bound(self, tid: int, frame: Where, target: object, args: Sequence[object]) -> None:
        """``target(*args)``, where ``target`` may be a container's bound method (``d.get``,
        ``xs.__setitem__``) or a generator's (``gen.send``), one prepared with its arguments
        (``functools.partial(xs.append, 1)``, ``partial(heapq.heappush, heap)``) or a method
        named for the object it is called on (``operator.methodcaller("append", 1)(xs)``)."""
        if isinstance(target, functools.partial):
            self.called(tid, frame, target.func, (*target.args, *target.keywords.values(), *args))
            return
        if isinstance(target, operator.methodcaller):
            named = _method_named(target)
            if named is not None and args and isinstance(args[0], CONTAINERS):
                self._method(tid, frame, args[0], named[0], named[1])
            return
        if not isinstance(target, _BOUND_TYPES):
            return
        owner = target.__self__
        if isinstance(owner, CONTAINERS):
            self._method(tid, frame, owner, target.__name__, args)
        elif isinstance(owner, types.GeneratorType) and target.__name__ in ("send", "throw", "close"):
            self.detector._generator(tid, owner, frame)

    def called(self, tid: int, frame: Where, target: object, args: Sequence[object]) -> None:
        """``target(*args)`` called by the program through something the tracer saw no call of
        (a partial's function): as the tracer's ``call`` would take it."""
        if named_call(target):
            self._named(tid, frame, args, target)
        elif isinstance(target, _METHOD_TYPES) and args:  # ``partial(list.append, xs)``
            if isinstance(args[0], CONTAINERS):
                self._method(tid, frame, args[0], target.__name__, args[1:])
        else:
            self.bound(tid, frame, target, args)

    def _method(self, tid: int, frame: Where, target: Any, name: str, args: Sequence[object]) -> None:
        """``target.name(*args)`` on a container."""
        spec = METHODS.get(name)
        if spec is None:
            return
        write, keyed = spec
        if keyed and args and isinstance(target, KEYED):
            self.detector._item(tid, target, args[0], write, frame)
        else:
            self.detector._access(tid, target, ALL, write, frame, f"{type(target).__name__}.{name}()")
            if name in READS_ARGUMENTS:  # ``dst.update(src)``, ``ys.extend(xs)``, ``s.issubset(t)``
                self.read_arguments(tid, frame, args, f"{type(target).__name__}.{name}")
            elif name in WRITES_FIRST_ARGUMENT and args and isinstance(args[0], CONTAINERS):
                self.detector._access(tid, args[0], ALL, True, frame, f"{type(target).__name__}.{name}()")

    def _named(self, tid: int, frame: Where, args: Sequence[object], target: object) -> None:
        """A call of one of ``race_functions.NAMED_CALLS`` by its name."""
        argc = len(args)
        if target in ATTR_BUILTINS:  # getattr(obj, "name"), setattr, delattr, hasattr
            write, counts = ATTR_BUILTINS[target]
            if argc in counts and isinstance(args[1], str):
                (self.detector._store_attr if write else self.detector._load_attr)(
                    tid, args[0], args[1], frame
                )
        elif target is next or target in GENERATOR_METHODS:
            if argc >= 1 and isinstance(args[0], types.GeneratorType):
                self.detector._generator(tid, args[0], frame)
            elif target is next and argc >= 1 and isinstance(args[0], ITERATORS):
                self.detector._iterator(tid, args[0], frame)
        elif target in ITEM_FUNCTIONS:  # operator.setitem(d, k, v): d[k]
            container = args[0] if argc >= 2 else None
            if isinstance(container, CONTAINERS):
                if target is operator.contains:
                    self.detector._item(tid, container, args[1], False, frame)
                else:
                    self.detector._item(tid, container, args[1], ITEM_FUNCTIONS[target], frame, indexed=True)
        else:  # heapq.heappush(heap, x), sorted(items), zip(xs, ys): its containers
            name = getattr(target, "__name__", "call")
            written = WRITES_ARGUMENT.get(target, 0 if CONTAINER_FUNCTIONS.get(target, False) else None)
            self.read_arguments(tid, frame, args, name, written, target in DEEP, target in SERIALISES)

    def handed(self, tid: int, at: Where, fn: object, args: Sequence[object], kwargs: dict[str, Any]) -> None:
        """``fn(*args, **kwargs)`` called by a thread, a timer or a pool it was handed to: the
        accesses the call would make at a traced call site, made at ``at``, the line that handed it."""
        self.called(tid, at, fn, (*args, *kwargs.values()))  # (a partial: as ``bound`` unwraps it)


def _arguments(frame: types.FrameType, argc: int) -> list[object]:
    """A call's ``argc`` arguments, first to last, off the frame's value stack."""
    return [stack_value(frame, depth) for depth in range(argc, 0, -1)]


class HandedAt:
    """The line that handed a call to a thread or a pool: where its accesses are reported."""

    __slots__ = ("f_code", "f_lasti")

    def __init__(self, code: types.CodeType, offset: int) -> None:
        self.f_code = code
        self.f_lasti = offset


class Handed:
    """A container's method or a listed function (``xs.append``, ``heapq.heappush``, a ``partial``
    of one) handed to a thread, a timer or a pool: the call, when it runs, is first recorded as the
    accesses ``CallSites.handed`` decodes, in the thread that runs it."""

    def __init__(self, ex: Execution, calls: CallSites, fn: Callable[..., Any], at: HandedAt) -> None:
        self.ex = ex
        self.calls = calls
        self.fn = fn
        self.at = at
        self.__name__ = getattr(fn, "__name__", "call")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        tid = self.ex.running_thread()
        if tid is not None:
            self.calls.handed(tid, self.at, self.fn, args, kwargs)
        return self.fn(*args, **kwargs)


_F = TypeVar("_F", bound="Callable[..., Any] | None")


def handed(ex: Execution, fn: _F) -> _F:
    """``fn`` as a thread's target or a pool's task: wrapped in ``Handed`` where its call is an
    access the tracer would not see (a container's method, a listed function), found where the
    program handed it; else ``fn`` itself."""
    if fn is None or ex.race is None or not _accesses(fn):
        return fn
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and not under_test(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return fn
    calls = cast("RaceDetector", ex.race).calls
    return cast(_F, Handed(ex, calls, fn, HandedAt(frame.f_code, frame.f_lasti)))


def _accesses(fn: object) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    if named_call(fn):
        return True
    return isinstance(fn, _BOUND_TYPES) and isinstance(fn.__self__, (*CONTAINERS, types.GeneratorType))


def _method_named(caller: operator.methodcaller) -> tuple[str, tuple[object, ...]] | None:
    """The method's name and arguments a ``methodcaller`` calls (None where it does not say)."""
    reduced: Any = caller.__reduce__()
    how, args = reduced[0], reduced[1]
    if how is operator.methodcaller and args and isinstance(args[0], str):
        return args[0], tuple(args[1:])
    if isinstance(how, functools.partial) and how.args and isinstance(how.args[0], str):
        return how.args[0], (*how.args[1:], *how.keywords.values(), *args)
    return None
