"""What a call site accesses, for the race detector (``races.py``): a container's method, a listed
function handed containers, ``getattr``/``setattr`` by name, ``operator.setitem``, a generator's
``send``. The call itself runs untraced (C code, or the standard library), so the accesses it makes
to the data it is handed are recorded at the call, as the caller's.

What a listed function reads of a container it is handed is the whole container and, as far as its C
code looks into the items (``race_functions.DEPTH``: it formats, compares, sums, joins or unpacks
them), the containers inside it (``str(outer)`` formats ``outer[0]``'s items too); a container's
method that takes in another's items reads it (``dst.update(src)``, ``ys.extend(xs)``:
``race_functions.READS_ARGUMENTS``); and a container's method handed as an argument (``max(keys,
key=d.get)``, ``map(xs.append, items)``) is called by the function on that container (session 36: an
outside review found each of these proved race free). A container's method or a listed function
handed to a thread, a timer or a pool (``Thread(target=xs.append)``, ``pool.submit(d.update,
other)``) is called by the harness's or the library's code, untraced: ``Handed`` records its
accesses when it runs, at the line that handed it (session 37).
"""

from __future__ import annotations

import functools
import importlib
import operator
import sys
import types
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from model_checks.harness import race_applied, race_files, race_objects, race_paths
from model_checks.harness.race_frames import stack_value
from model_checks.harness.race_functions import (
    APPLIES,
    ATTR_BUILTINS,
    COMPARES,
    CONTAINER_FUNCTIONS,
    DEPTH,
    GENERATOR_METHODS,
    ITEM_FUNCTIONS,
    NESTED_DEPTH,
    NESTED_ITEMS,
    PAIRS,
    READS_ARGUMENTS,
    WRITES_ARGUMENT,
    WRITES_FIRST_ARGUMENT,
    list_loaded,
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
    iterated,
    under_test,
)

if TYPE_CHECKING:
    from model_checks.harness.races import RaceDetector
    from model_checks.harness.rt.scheduler import Execution

# the listed functions that write an in-memory stream handed to them (``print(..., file=buf)``,
# ``json.dump(obj, buf)``, ``pickle.dump(obj, buf)``), by name
WRITE_STREAMS = frozenset({"print", "dump"})
# a container's method, unbound (``list.append``, ``list.__setitem__``) and bound (``xs.append``,
# ``xs.__setitem__``)
_METHOD_TYPES = (types.MethodDescriptorType, types.WrapperDescriptorType)
_BOUND_TYPES = (types.BuiltinMethodType, types.MethodWrapperType)
_ANY_BOUND = (types.MethodType, *_BOUND_TYPES)  # (and a Python method: a ``weakref`` mapping's)
# what a deep read walks through: the containers, and tuples (no location, but they hold some)
NESTED = (*CONTAINERS, tuple)
# the iterators that yield a container's own items (a list's, a deque's, a tuple's)
_ITEM_ITERATORS: tuple[type, ...] = (
    type(iter([0])),
    type(reversed([0])),
    type(iter(deque([0]))),
    type(reversed(deque([0]))),
    type(iter((0,))),
)
# the string methods that reach into their arguments' fields (``"{0.x}".format(o)``)
FORMATS = frozenset({str.format, str.format_map})
_HEAPTYPE = 1 << 9  # ``Py_TPFLAGS_HEAPTYPE``: a class made by a ``class`` statement
MISSING = object()
# CPython's format-string parser (``string.Formatter``'s): the fields and their attribute and item
# look-ups
_string: Any = importlib.import_module("_string")


class CallSites:
    """The call sites of one execution's ``RaceDetector``: each decoded into the accesses it makes,
    handed to the detector."""

    def __init__(self, detector: RaceDetector) -> None:
        self.detector = detector
        list_loaded()  # (before the tracer is handed ``NAMED_CALLS``)

    def read_arguments(
        self,
        tid: int,
        frame: Where,
        args: Sequence[object],
        name: str,
        written: int | None = None,
        depth: int = 1,
        serialises: bool = False,
        pairs: bool = False,
    ) -> None:
        """The containers among a call's arguments are read whole, ``depth`` levels down
        (``race_functions.DEPTH``: a copy, ``list(xs)``, reads only the outer one; ``pairs``:
        a mapping is copied, a sequence's pairs unpacked), the one at ``written`` written by a
        function that changes it (``heappush``'s first, ``struct.pack_into``'s second); a
        container's method among them is called on its container; an object handed to a
        serialiser (``pickle.dumps(obj)``) has its fields read; a generator or an iterator handed
        to a function is run by it (``list(gen)``: ``_iterated``)."""
        for i, arg in enumerate(args):
            if isinstance(arg, STREAMS):
                if name in WRITE_STREAMS:  # (``str(buf)`` or a log call names it and reads nothing)
                    self.detector._access(tid, arg, ALL, True, frame, f"{name}({type(arg).__name__})")
            elif isinstance(arg, race_files.FILE_TYPES):  # ``print(x, file=f)`` writes a file
                if name in WRITE_STREAMS:
                    race_files.method(self.detector, tid, frame, arg, "write")
            elif isinstance(arg, CONTAINERS):
                label = f"{name}({type(arg).__name__})"
                if i == written:
                    self.detector._access(tid, arg, ALL, True, frame, label)
                else:
                    self.read_whole(tid, arg, frame, label, 1 if pairs and isinstance(arg, dict) else depth)
            elif isinstance(arg, _BOUND_TYPES):
                self._method_handed(tid, arg, frame, name)
            elif isinstance(arg, tuple) and depth > 1:  # ``sum(([1], [2]), [])``: the lists in it
                self.read_whole(tid, arg, frame, f"{name}(tuple)", depth)
            elif isinstance(arg, (types.GeneratorType, *ITERATORS)):
                self._iterated(tid, arg, frame, depth)
            elif serialises and not isinstance(arg, CODE_TYPES) and not harness_owned(arg):
                fields = getattr(arg, "__dict__", None)
                if isinstance(fields, dict):
                    self.read_whole(tid, fields, frame, f"{name}({type(arg).__name__})", NESTED_DEPTH)

    def _iterated(self, tid: int, it: object, frame: Where, depth: int) -> None:
        """A generator or an iterator handed to a function that runs it: a generator is run
        (``list(gen)``, as ``next(gen)``; session 39: a generator expression made in one thread
        and run in another read its list unseen); the items an iterator over containers yields
        are read as the function reads items, where it yields their items themselves
        (``any(iter(groups))``: ``depth``; a ``zip`` yields tuples of them, a ``map`` what its
        function made of them: its call read them, ``APPLIES``)."""
        if isinstance(it, types.GeneratorType):
            self.detector._generator(tid, it, frame)
        elif depth > 1 and isinstance(it, _ITEM_ITERATORS):
            for container in iterated(it):
                self.read_whole(tid, container, frame, "", depth)

    def read_whole(self, tid: int, container: Any, frame: Where, label: str, depth: int) -> None:
        """``container`` read whole, and the containers among its first items (its values, for a
        dict), ``depth`` levels down; a tuple (no location) is looked through."""
        if not isinstance(container, tuple):
            self.detector._access(tid, container, ALL, False, frame, label)
        if depth <= 1 or isinstance(container, STREAMS):  # (iterating a stream would consume it)
            return
        items = container.values() if isinstance(container, dict) else container
        for i, item in enumerate(items):
            if i >= NESTED_ITEMS:
                break
            if isinstance(item, NESTED) and item is not container and not isinstance(item, STREAMS):
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
        self._call(tid, frame, meth, target, _arguments(frame, argc))

    def call_ex(self, tid: int, frame: types.FrameType, flags: int) -> None:
        """``f(*xs, **d)``: ``xs`` and ``d`` are read whole (unpacked), and the call is
        ``f(xs[0], ..., **d)`` (session 39: ``zip(*groups)`` reads each group)."""
        kwargs = stack_value(frame, 1) if flags & 1 else None
        callargs = stack_value(frame, 2 if flags & 1 else 1)
        target = stack_value(frame, 3 if flags & 1 else 2)
        args: list[object] = []
        for part in (callargs, kwargs):
            if isinstance(part, CONTAINERS):
                self.detector._access(tid, part, ALL, False, frame, "")
            if isinstance(part, dict):
                args.extend(list(part.values()))
            elif isinstance(part, (list, tuple)):
                args.extend(part)
        self._call(tid, frame, None, target, args)

    def _call(self, tid: int, frame: Where, meth: object, target: object, args: list[object]) -> None:
        """``target(*args)``, or ``meth`` called on ``target`` with ``args`` (``obj.method(args)``)."""
        if meth is not None:  # obj.method(args): the method's function, then obj
            method = getattr(meth, "__name__", None)
            if race_paths.is_slot_call(target, method):  # C.n.__set__(c, v)
                race_paths.slot_call(self.detector, tid, frame, target, method, args)
                return
            if named_call(meth):
                if meth in GENERATOR_METHODS:  # gen.send(v): it runs the generator
                    if isinstance(target, types.GeneratorType):
                        self.detector._generator(tid, target, frame)
                elif meth in ATTR_BUILTINS:  # obj.__getattribute__("x"): obj.x
                    self._named(tid, frame, [target, *args], meth)
                else:  # ", ".join(items), random.shuffle(xs) (a bound method, unpacked): its arguments
                    if meth in FORMATS and isinstance(target, str):  # "{0.x}".format(o)
                        self._format_fields(tid, frame, target, meth, args)
                    self._named(tid, frame, args, meth)
                return
            if isinstance(target, CONTAINERS) and isinstance(meth, _METHOD_TYPES):
                self._method(tid, frame, target, meth.__name__, args)
            elif isinstance(target, race_files.FILE_TYPES) and isinstance(meth, _METHOD_TYPES):
                race_files.method(self.detector, tid, frame, target, meth.__name__)
            elif type(target) in race_objects.TABLE:  # ``m.read_byte()``, ``cache.get(k)``
                race_objects.method(self.detector, tid, frame, target, method or "", args)
        elif target is len and len(args) == 1:
            container = args[0]
            if isinstance(container, CONTAINERS):
                self.detector._access(tid, container, ALL, False, frame, "")
            elif type(container) in race_objects.TABLE:
                race_objects.whole(self.detector, tid, frame, container, True)
        elif named_call(target):
            self._named(tid, frame, args, target)
        elif isinstance(target, _METHOD_TYPES) and args:  # ``list.append(xs, 9)``
            self._unbound(tid, frame, target, args)
        else:  # a bound builtin method called through a name: f = d.get; f(k); xs.__setitem__(0, 1)
            self.bound(tid, frame, target, args)

    def _format_fields(self, tid: int, frame: Where, fmt: str, meth: object, args: Sequence[object]) -> None:
        """The fields a format string reaches into (``"{0.x}".format(o)`` reads ``o.x``,
        ``"{0[k]}"`` reads ``d["k"]``; session 39). Positional fields only, and a mapping's names
        for ``format_map``; a named field of ``format(**kw)`` is not found (its name is not here)."""
        if "." not in fmt and "[" not in fmt:
            return
        auto = 0
        try:
            fields = [f for _, f, _, _ in _string.formatter_parser(fmt) if f]
        except ValueError:  # a malformed format string: the call raises
            return
        for field in fields:
            obj: Any
            first, rest = _string.formatter_field_name_split(field)
            if first == "":
                first, auto = auto, auto + 1
            if meth is str.format_map:
                mapping = args[0] if args else None
                obj = mapping.get(first, MISSING) if isinstance(mapping, dict) else MISSING
            else:
                obj = args[first] if isinstance(first, int) and first < len(args) else MISSING
            for is_attr, key in rest:
                if obj is MISSING:
                    break
                if is_attr:
                    self.detector._load_attr(tid, obj, key, frame)
                    obj = getattr(obj, key, MISSING)
                elif isinstance(obj, CONTAINERS):
                    self.detector._item(tid, obj, key, False, frame, indexed=True)
                    try:
                        obj = cast(Any, obj)[key]
                    except (LookupError, TypeError):
                        obj = MISSING
                else:
                    break

    def bound(self, tid: int, frame: Where, target: object, args: Sequence[object]) -> None:
        """``target(*args)``, where ``target`` may be a container's bound method (``d.get``,
        ``xs.__setitem__``) or a generator's (``gen.send``), one prepared with its arguments
        (``functools.partial(xs.append, 1)``, ``partial(heapq.heappush, heap)``) or a method
        named for the object it is called on (``operator.methodcaller("append", 1)(xs)``)."""
        if isinstance(target, functools.partial):
            # its keywords are a dict the call reads (session 39: ``p.keywords["base"] = 16`` in one
            # thread while another calls ``p``)
            self.detector._access(tid, target.keywords, ALL, False, frame, "partial.keywords")
            self.called(tid, frame, target.func, (*target.args, *target.keywords.values(), *args))
            return
        if isinstance(target, race_applied.GETTERS):  # ``attrgetter("a", "b")(p)``
            race_applied.getter(self, tid, frame, target, args)
            return
        if isinstance(target, operator.methodcaller):
            named = _method_named(target)
            if named is not None and args and isinstance(args[0], CONTAINERS):
                self._method(tid, frame, args[0], named[0], named[1])
            return
        if isinstance(target, _ANY_BOUND) and type(target.__self__) in race_objects.TABLE:
            race_objects.method(self.detector, tid, frame, target.__self__, target.__name__, args)
            return
        if not isinstance(target, _BOUND_TYPES):
            return
        owner = target.__self__
        if race_paths.is_slot_call(owner, target.__name__):  # ``set_n = C.n.__set__; set_n(c, v)``
            race_paths.slot_call(self.detector, tid, frame, owner, target.__name__, args)
        elif isinstance(owner, CONTAINERS):
            self._method(tid, frame, owner, target.__name__, args)
        elif isinstance(owner, types.GeneratorType) and target.__name__ in ("send", "throw", "close"):
            self.detector._generator(tid, owner, frame)

    def called(self, tid: int, frame: Where, target: object, args: Sequence[object]) -> None:
        """``target(*args)`` called by the program through something the tracer saw no call of
        (a partial's function): as the tracer's ``call`` would take it."""
        if named_call(target):
            self._named(tid, frame, args, target)
        elif isinstance(target, _METHOD_TYPES) and args:  # ``partial(list.append, xs)``
            self._unbound(tid, frame, target, args)
        else:
            self.bound(tid, frame, target, args)

    def _unbound(self, tid: int, frame: Where, target: Any, args: Sequence[object]) -> None:
        """``target(*args)``, a method unbound: ``list.append(xs, 9)`` on a container, a slot's
        ``type(C.n).__set__(C.n, c, v)``."""
        if race_paths.is_slot_call(args[0], target.__name__):
            race_paths.slot_call(self.detector, tid, frame, args[0], target.__name__, args[1:])
        elif isinstance(args[0], CONTAINERS):
            self._method(tid, frame, args[0], target.__name__, args[1:])

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
            elif name in COMPARES and args and isinstance(args[0], NESTED):
                # ``outer.count([1, 2])`` compares each item with a sequence: reads them, deep
                self.read_whole(tid, target, frame, f"{type(target).__name__}.{name}()", NESTED_DEPTH)
            elif name in WRITES_FIRST_ARGUMENT and args and isinstance(args[0], CONTAINERS):
                self.detector._access(tid, args[0], ALL, True, frame, f"{type(target).__name__}.{name}()")

    def _named(self, tid: int, frame: Where, args: Sequence[object], target: object) -> None:
        """A call of one of ``race_functions.NAMED_CALLS`` by its name."""
        argc = len(args)
        if target in ATTR_BUILTINS:  # getattr(obj, "name"), setattr, delattr, hasattr
            write, counts = ATTR_BUILTINS[target]
            if argc in counts and isinstance(args[1], str):
                if write:  # (the value, for ``setattr(obj, "__dict__", d)``: ``race_swaps``)
                    self.detector._store_attr(tid, args[0], args[1], frame, args[2] if argc == 3 else None)
                else:
                    self.detector._load_attr(tid, args[0], args[1], frame)
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
            depth = DEPTH.get(target, 1)
            if target in APPLIES:  # ``map(len, groups)``: what the C code it calls reads of each item
                depth = max(depth, *(applied_depth(arg) for arg in args))
                race_applied.applied(self, tid, frame, target, args)  # ``map(attrgetter("x"), objs)``
            elif target in race_applied.SERIALISERS:  # ``json.dumps(p, default=vars)``
                race_applied.serialised(self, tid, frame, args)
            self.read_arguments(tid, frame, args, name, written, depth, target in SERIALISES, target in PAIRS)

    def handed(self, tid: int, at: Where, fn: object, args: Sequence[object], kwargs: dict[str, Any]) -> None:
        """``fn(*args, **kwargs)`` called by a thread, a timer or a pool it was handed to: the
        accesses the call would make at a traced call site, made at ``at``, the line that handed it."""
        self.called(tid, at, fn, (*args, *kwargs.values()))  # (a partial: as ``bound`` unwraps it)


def applied_depth(fn: object) -> int:
    """How deep ``fn``, called by a higher-order function on each item of a container, reads the
    container (``race_functions.APPLIES``): one level more than ``fn`` reads its argument where it
    is C code (``len``, ``list``, ``operator.add``, ``"".join``, a ``partial`` of one); 1 for
    Python code (traced: its accesses are its own) and what is not callable."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if isinstance(fn, (types.FunctionType, types.MethodType)) or not callable(fn):
        return 1
    if isinstance(fn, type):
        if fn.__flags__ & _HEAPTYPE:  # a class of the program's: its ``__init__`` is traced
            return 1
    elif isinstance(fn, _BOUND_TYPES) and not isinstance(fn.__self__, types.ModuleType):
        fn = getattr(type(fn.__self__), fn.__name__, fn)  # ``"".join``: ``str.join``
    return min(NESTED_DEPTH, 1 + DEPTH.get(fn, 1))


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
