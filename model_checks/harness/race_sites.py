"""What the race detector (``races.py``) traces and how it names it: which code is traced (not the
standard library, site-packages or the harness; the standard library's algorithms over the
caller's data are: ``race_library.py``), which opcodes and container methods are
accesses (per code object, ``code_table``); the words of a report are ``race_report.py``'s."""

from __future__ import annotations

import _thread
import array
import dis
import gc
import io
import itertools
import os
import sysconfig
import types
from collections import deque
from typing import Any, Protocol

from model_checks.harness import own_code, patch_local
from model_checks.harness.race_library import TRACED_CODE, TRACED_FILES, UNTRACED_CODE
from model_checks.harness.race_swaps import note_code

ALL = "<whole>"  # the key of an access to a whole container (len, iteration, clear, ...)
# (thread, code, offset, (object, key, label), is_write): the words of a report are made from the
# object and key (``what_of``) or the label only when a race is reported
Site = tuple[int, types.CodeType, int, tuple[object, object, str], bool]
Point = tuple[types.CodeType, int]  # an access site made a scheduling point: (code, offset)


class Where(Protocol):
    """Where an access is made: the frame running it, or the line that handed a container's
    method to a thread or a pool to call (``race_calls.Handed``)."""

    @property
    def f_code(self) -> types.CodeType: ...

    @property
    def f_lasti(self) -> int: ...


LIBRARIES = {sysconfig.get_path(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")}
SKIP_FILES = (*(p + os.sep for p in LIBRARIES if p), "<frozen")

# Values that are code: functions, classes, modules, and what a class body defines beside its
# data (methods' descriptors, properties, slots). A class's code is not its data (``class_owner``:
# ``self.run()`` reads no location); code held in a global, a closure variable or an object's
# fields is, read once a step (session 39: a handler swapped by one thread while another calls
# it was proved race free), a module excepted (``races.value_read``).
CODE_TYPES = (
    types.ModuleType,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
    types.WrapperDescriptorType,
    types.MemberDescriptorType,
    types.GetSetDescriptorType,
    classmethod,
    staticmethod,
    property,
)
# A dict's views (``keys = d.keys()``, made before the threads) read the dict itself (``viewed``).
DICT_VIEWS: tuple[type, ...] = (type({}.keys()), type({}.values()), type({}.items()))
# An in-memory stream is one location: every read moves its position, so each access but a look
# at its contents (``getvalue``, ``tell``) is a write; a stream handed to a function (``print(...,
# file=buf)``, ``json.dump(obj, buf)``) is written by it.
STREAMS: tuple[type, ...] = (io.StringIO, io.BytesIO)
CONTAINERS = (dict, list, set, deque, bytearray, array.array, *DICT_VIEWS, *STREAMS)
# The iterators over those: ``it = iter(xs)`` made before the threads, ``next(it)`` in one of them
# moves the iterator (a write) and reads the container (``iterated``; session 37).
_OVER: tuple[object, ...] = (
    iter([]),
    reversed([]),
    iter({}),
    iter({}.values()),
    iter({}.items()),
    iter(set()),
    iter(deque()),
    reversed(deque()),
    iter(bytearray()),
    iter(array.array("i")),
    # and the iterators that are no container's (session 38's review: ``_ids = itertools.count()``
    # shared by threads, a ``zip`` or ``map`` made before them): ``next`` moves them too, and they
    # read the containers of the iterators they hold
    iter(()),
    iter(""),
    iter(b""),
    iter(range(0)),
    iter(range(2**64)),
    iter(frozenset()),
    iter(lambda: 0, 0),
    zip(),
    map(abs, ()),
    filter(None, ()),
    enumerate(()),
    reversed(()),
    itertools.count(),
    itertools.cycle(()),
    itertools.chain(),
    itertools.islice((), 0),
    itertools.repeat(0),
    itertools.accumulate(()),
    itertools.compress((), ()),
    itertools.dropwhile(bool, ()),
    itertools.takewhile(bool, ()),
    itertools.filterfalse(bool, ()),
    itertools.groupby(()),
    itertools.pairwise(()),
    itertools.starmap(abs, ()),
    itertools.zip_longest(()),
    itertools.product(),
    itertools.permutations(()),
    itertools.combinations((), 0),
    itertools.combinations_with_replacement((), 0),
    itertools.tee(())[0],
)
ITERATORS: tuple[type, ...] = tuple(dict.fromkeys(type(it) for it in _OVER))
KEYED = (dict, set)  # per-key locations
# per-index locations for a subscript by an int (``slots[i]``); every other access (``in``,
# iteration, ``len``, a method, a slice, ``del``: whatever can move the items) is the whole
INDEXED = (list, deque, bytearray, array.array)
# container methods: name -> (is_write, keyed by the first argument)
METHODS: dict[str, tuple[bool, bool]] = {
    "get": (False, True),
    "__len__": (False, False),
    "__iter__": (False, False),
    "__reversed__": (False, False),
    "__getitem__": (False, True),
    "__contains__": (False, True),
    "keys": (False, False),
    "values": (False, False),
    "items": (False, False),
    "copy": (False, False),
    "count": (False, False),
    "index": (False, False),
    "issubset": (False, False),
    "issuperset": (False, False),
    "union": (False, False),
    "intersection": (False, False),
    "difference": (False, False),
    "isdisjoint": (False, False),
    "pop": (True, True),  # dict.pop(k); list/set/deque pop are whole (not keyed types, or no args)
    "setdefault": (True, True),
    "__setitem__": (True, True),
    "__delitem__": (True, True),
    "add": (True, True),
    "discard": (True, True),
    "remove": (True, True),
    "append": (True, False),
    "appendleft": (True, False),
    "extend": (True, False),
    "extendleft": (True, False),
    "insert": (True, False),
    "popleft": (True, False),
    "popitem": (True, False),
    "clear": (True, False),
    "update": (True, False),
    "sort": (True, False),
    "move_to_end": (True, False),
    "reverse": (True, False),
    "rotate": (True, False),
    "difference_update": (True, False),
    "intersection_update": (True, False),
    "symmetric_difference_update": (True, False),
    # session 38's review: the in-place operators and ``__init__`` by their names
    # (``xs.__iadd__(ys)``, ``list.__init__(xs, ys)``) change the container
    **dict.fromkeys(
        ("__iadd__", "__imul__", "__ior__", "__iand__", "__isub__", "__ixor__", "__init__"), (True, False)
    ),
    "symmetric_difference": (False, False),
    # a ``bytearray``'s (or an ``array``'s) reads of its bytes
    **dict.fromkeys(
        (
            "decode",
            "hex",
            "find",
            "rfind",
            "startswith",
            "endswith",
            "upper",
            "lower",
            "split",
            "rsplit",
            "splitlines",
            "strip",
            "lstrip",
            "rstrip",
            "replace",
            "partition",
            "rpartition",
            "translate",
            "isalnum",
            "isalpha",
            "isdigit",
            "isspace",
            "isascii",
            "tobytes",
            "tolist",
            "tounicode",
        ),
        (False, False),
    ),
    # a stream's (``STREAMS``)
    **dict.fromkeys(
        (
            "write",
            "writelines",
            "read",
            "read1",
            "readline",
            "readlines",
            "readinto",
            "seek",
            "truncate",
            "close",
        ),
        (True, False),
    ),
    **dict.fromkeys(("getvalue", "tell", "getbuffer"), (False, False)),
    # an ``array``'s that take in a buffer or a list (session 39)
    **dict.fromkeys(("frombytes", "fromlist", "fromunicode"), (True, False)),
}

# opcode name -> handler kind (``_race_tracer.c`` numbers them alike: its ``KINDS``)
(
    LOAD_ATTR,
    STORE_ATTR,
    SUBSCR,
    STORE_SUBSCR,
    GLOBAL_NAME,
    STORE_GLOBAL,
    CONTAINS,
    ITER,
    CALL,
    LOAD_CELL,
    STORE_CELL,
    DELETE_SUBSCR,
    BINARY,
    TRUTH,
    RUN,
    LOAD_METHOD,
    LOAD_NAME,
    STORE_NAME,
    CALL_EX,
) = range(19)
KINDS = (
    "LOAD_ATTR",
    "STORE_ATTR",
    "SUBSCR",
    "STORE_SUBSCR",
    "GLOBAL_NAME",
    "STORE_GLOBAL",
    "CONTAINS",
    "ITER",
    "CALL",
    "LOAD_CELL",
    "STORE_CELL",
    "DELETE_SUBSCR",
    "BINARY",
    "TRUTH",
    "RUN",
    "LOAD_METHOD",
    "LOAD_NAME",
    "STORE_NAME",
    "CALL_EX",
)
OPCODES = {
    "LOAD_ATTR": LOAD_ATTR,
    "STORE_ATTR": STORE_ATTR,
    "DELETE_ATTR": STORE_ATTR,
    # ``obj.name(...)``: a callable kept in an object's fields (``svc.handler()``), a module's
    # function (``mod.fn()``); an object's method found in its class is no read of the object
    "LOAD_METHOD": LOAD_METHOD,
    # ``from mod import name`` reads the module's attribute (the module is on the stack)
    "IMPORT_FROM": LOAD_ATTR,
    # a class body's or ``exec``'s names: its namespace, else the module's global
    "LOAD_NAME": LOAD_NAME,
    "STORE_NAME": STORE_NAME,
    "DELETE_NAME": STORE_NAME,
    "BINARY_SUBSCR": SUBSCR,
    "STORE_SUBSCR": STORE_SUBSCR,
    "DELETE_SUBSCR": DELETE_SUBSCR,
    "LOAD_GLOBAL": GLOBAL_NAME,
    "STORE_GLOBAL": STORE_GLOBAL,
    "DELETE_GLOBAL": STORE_GLOBAL,
    # a closure's variable (``nonlocal``, or read by a nested function): its cell is the location
    "LOAD_DEREF": LOAD_CELL,
    "STORE_DEREF": STORE_CELL,
    "DELETE_DEREF": STORE_CELL,
    "LOAD_CLASSDEREF": LOAD_CELL,  # a class body's read of a closure variable
    "CONTAINS_OP": CONTAINS,
    # what reads its top of stack whole: iteration, unpacking, ``[*xs]``, ``{**d}``, ``f(*xs)``
    "GET_ITER": ITER,
    "GET_YIELD_FROM_ITER": ITER,  # ``yield from xs``
    "UNPACK_SEQUENCE": ITER,
    "UNPACK_EX": ITER,
    "LIST_EXTEND": ITER,
    "SET_UPDATE": ITER,
    "DICT_UPDATE": ITER,
    "DICT_MERGE": ITER,
    "FOR_ITER": RUN,  # a loop over a shared generator runs it (a write of the generator)
    "FORMAT_VALUE": ITER,  # ``f"{xs}"`` formats the container whole
    # ``match``: a sequence pattern takes the subject's length (its items come by subscripts), a
    # mapping pattern reads the subject under the keys on top of it
    "GET_LEN": ITER,
    "MATCH_KEYS": BINARY,
    "CALL": CALL,
    # ``xs + ys`` reads both; ``xs += ys`` (``|=``, ``-=``, ...) changes a container in place;
    # a comparison (``xs == ys``) reads both, and the containers inside them (``COMPARE``)
    "BINARY_OP": BINARY,
    "COMPARE_OP": BINARY,
    # ``f(*xs, **d)`` reads ``xs`` and ``d`` whole, and is the call ``f(xs[0], ...)`` (session 39:
    # ``zip(*groups)``, ``set().union(*groups)`` read each group)
    "CALL_FUNCTION_EX": CALL_EX,
    # a container's truth is its length: ``if xs:``, ``while d:``, ``not xs``, ``xs or ys``,
    # ``assert xs`` (session 37: an unlocked emptiness check was proved race free)
    "POP_JUMP_FORWARD_IF_FALSE": TRUTH,
    "POP_JUMP_FORWARD_IF_TRUE": TRUTH,
    "POP_JUMP_BACKWARD_IF_FALSE": TRUTH,
    "POP_JUMP_BACKWARD_IF_TRUE": TRUTH,
    "JUMP_IF_FALSE_OR_POP": TRUTH,
    "JUMP_IF_TRUE_OR_POP": TRUTH,
    "UNARY_NOT": TRUTH,
}
# the operator numbers of ``BINARY_OP`` that change their left operand in place (``+=``, ``|=``, ...)
INPLACE = frozenset(
    i for i, (name, _) in enumerate(getattr(dis, "_nb_ops", ())) if name.startswith("NB_INPLACE_")
)
# the argument of a ``BINARY`` entry: BINARY_OP's operator, else -1, or ``COMPARE`` (a comparison)
COMPARE = -2
_BINARY_ARGS = {"COMPARE_OP": COMPARE, "MATCH_KEYS": -1}
NAMED = (
    LOAD_ATTR,
    STORE_ATTR,
    GLOBAL_NAME,
    STORE_GLOBAL,
    LOAD_CELL,
    STORE_CELL,
    LOAD_METHOD,
    LOAD_NAME,
    STORE_NAME,
)
Table = dict[int, tuple[int, Any]]
TABLES: dict[types.CodeType, Table | None] = {}  # code -> offset -> (kind, argument); None: untraced


def under_test(file: str) -> bool:
    """Is code of ``file`` traced: the program's, or one of the standard library's algorithms over
    the caller's data (``race_library.TRACED_FILES``)? The programs under test that live in the
    harness's folder are traced wherever it is installed."""
    return (
        file in own_code.PROGRAM_FILES
        or file in TRACED_FILES
        or not (file.startswith(SKIP_FILES) or own_code.own(file))
    )


def code_table(code: types.CodeType) -> Table | None:
    table = TABLES.get(code, False)
    if table is not False:
        return table  # type: ignore[return-value]
    found: Table | None = None
    named = (code.co_filename, code.co_qualname)
    if (under_test(code.co_filename) and named not in UNTRACED_CODE) or named in TRACED_CODE:
        found = {}
        prefix: int | None = None
        for ins in dis.get_instructions(code):
            if ins.opname == "EXTENDED_ARG":
                # 3.11 runs the instruction after an EXTENDED_ARG with no trace event of its own:
                # its event is the prefix's (the stack is unchanged until then), so it is keyed there
                prefix = ins.offset if prefix is None else prefix
                continue
            kind = OPCODES.get(ins.opname)
            if kind is not None:
                at = ins.offset if prefix is None else prefix
                if kind in (LOAD_CELL, STORE_CELL):  # the cell's slot in the frame, and its name
                    found[at] = (kind, (ins.arg, ins.argval))
                else:
                    # BINARY: BINARY_OP's operator (``INPLACE``), a comparison's ``COMPARE``
                    arg = _BINARY_ARGS.get(ins.opname, ins.arg) if kind == BINARY else ins.argval
                    found[at] = (kind, ins.arg if kind in (CALL, CALL_EX) else arg)
            prefix = None
        found = found or None
        note_code(code)  # a store of an object's class turns reads of classes on (race_swaps)
    TABLES[code] = found
    return found


def harness_owned(obj: object) -> bool:
    return harness_class(type(obj))


def harness_class(cls: type) -> bool:
    owned = _OWNED.get(cls)
    if owned is None:
        module = cls.__module__
        owned = _OWNED[cls] = (
            module.startswith("model_checks.harness") and module not in own_code.PROGRAM_MODULES
        ) or cls in PER_THREAD
    return owned


# Classes whose instances hold one namespace per thread (patch mode's ``threading.local``, the
# program's subclasses of it, and of the real one: an object made at import, ``patch_local.per_thread``):
# the attributes in that namespace are never shared, so never a race; the handler never touches
# it (a thread's first touch runs ``__init__``). A subclass's slots and its class's data are
# shared (session 38's review: a lost update on a slot of a ``local`` subclass, and on its
# class's counter, were proved).
PER_THREAD: tuple[type, ...] = (patch_local.local, _thread._local)


def class_path(cls: type, name: str) -> list[type] | None:
    """The classes of ``cls``'s method resolution order that a look-up of ``cls.name`` reads, up
    to the one whose body holds ``name`` as data: a write of ``name`` into any of them changes
    what the look-up finds (``Sub.limit = 5`` shadows ``Base.limit``). None where it is code, or
    found nowhere."""
    path: list[type] = []
    for klass in cls.__mro__:
        path.append(klass)
        value = klass.__dict__.get(name, _MISSING)
        if value is not _MISSING:
            return None if isinstance(value, CODE_TYPES) else path
    return None


_OWNED: dict[type, bool] = {}  # type -> is it the harness's (asked at every attribute access)


def class_owner(cls: type, name: str) -> type | None:
    """The class of ``cls``'s method resolution order whose body holds ``name`` as data (not code:
    ``CODE_TYPES``), the location of ``cls.name``; None where it is code, or not found there."""
    for klass in cls.__mro__:
        value = klass.__dict__.get(name, _MISSING)
        if value is not _MISSING:
            return None if isinstance(value, CODE_TYPES) else klass
    return None


def is_property(cls: type, name: str) -> bool:
    """Is ``name`` a property of ``cls``? Its getter and setter are code under test, traced: the
    accesses they make are the ones to report (``self._v``), not the property's name."""
    for klass in cls.__mro__:
        value = klass.__dict__.get(name, _MISSING)
        if value is not _MISSING:
            return isinstance(value, property)
    return False


_MISSING = object()


def alike(point: Point) -> list[Point]:
    """``point`` and every other site of its code that accesses the same name the same way. 3.11
    compiles a loop's condition twice (before the loop and at its back edge): a flag read racing
    a write is found at one of them, and with only that one a scheduling point, a thread spinning
    on the flag would spin at the other for ever, the writer never scheduled again."""
    code, offset = point
    table = code_table(code) or {}
    entry = table.get(offset)
    if entry is None or entry[0] not in NAMED:  # a subscript, a call: no name to match
        return [point]
    return [(code, at) for at, other in sorted(table.items()) if other == entry]


def code_entries(code: types.CodeType) -> tuple[tuple[int, Any] | None, ...] | None:
    """``code_table(code)`` for the C tracer (``_race_tracer``): a tuple with one entry per code
    unit (the instruction at byte offset ``2 * i``), None where the instruction is no access;
    None for code that is not traced."""
    table = code_table(code)
    if table is None:
        return None
    out: list[tuple[int, Any] | None] = [None] * (len(code.co_code) // 2)
    for offset, entry in table.items():
        out[offset // 2] = entry
    return tuple(out)


def iterated(it: object, depth: int = 3) -> list[object]:
    """The containers an iterator of ``ITERATORS`` reads (none once it is exhausted), through the
    iterators it holds (``zip(iter(xs), ys)``), ``depth`` levels down."""
    found: list[object] = []
    for ref in gc.get_referents(it):
        if isinstance(ref, CONTAINERS):
            found.append(ref)
        elif depth > 1 and isinstance(ref, ITERATORS):
            found.extend(iterated(ref, depth - 1))
    return found


def viewed(obj: object) -> object:
    """The dict a view reads (``d.keys()``: every access through it is one of ``d``), else ``obj``."""
    if issubclass(type(obj), DICT_VIEWS):
        return gc.get_referents(obj)[0]
    return obj
