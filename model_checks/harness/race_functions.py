"""The functions outside the traced code whose calls are accesses to the data handed to them
(``race_calls.py`` makes them): the builtins that reach an attribute by name, the ones that reach
one item, the ones that read (or change) whole containers, and a generator's methods. The C
tracer hands the handler a call only of one of ``NAMED_CALLS``."""

from __future__ import annotations

import array
import base64
import binascii
import bisect
import collections
import copy
import functools
import hashlib
import heapq
import inspect
import io
import itertools
import json
import logging
import marshal
import math
import operator
import pickle
import pprint
import random
import reprlib
import string
import struct
import sys
import types
import urllib.parse
import zlib
from collections import deque

from model_checks.harness.race_library import READERS, SERIALISES

# the builtins that access an attribute by name: function -> (is_write, argument counts)
ATTR_BUILTINS: dict[object, tuple[bool, tuple[int, ...]]] = {
    getattr: (False, (2, 3)),
    hasattr: (False, (2,)),
    setattr: (True, (3,)),
    delattr: (True, (2,)),
    object.__getattribute__: (False, (2,)),
    object.__setattr__: (True, (3,)),
    object.__delattr__: (True, (2,)),
}
# the functions that access one item of their first argument: function -> is_write
ITEM_FUNCTIONS: dict[object, bool] = {
    operator.getitem: False,
    operator.setitem: True,
    operator.delitem: True,
    operator.contains: False,
}
# the operators as functions (``operator.add(a, b)`` is ``a + b``), and of those the comparisons
COMPARISONS = (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge)
OPERATORS = (
    *COMPARISONS,
    operator.add,
    operator.concat,
    operator.mul,
    operator.sub,
    operator.and_,
    operator.or_,
    operator.xor,
    operator.truth,
    operator.not_,
)
_LOG_LEVELS = ("debug", "info", "warning", "error", "critical", "exception", "log")
# Functions outside the traced code that read the containers given as their arguments whole, and
# change (True) the first one: ``heapq.heappush(self.heap, x)`` touches no traced opcode of it.
CONTAINER_FUNCTIONS: dict[object, bool] = {
    heapq.heappush: True,
    heapq.heappop: True,
    heapq.heapify: True,
    heapq.heapreplace: True,
    heapq.heappushpop: True,
    bisect.insort_left: True,
    bisect.insort_right: True,
    bisect.bisect_left: False,
    bisect.bisect_right: False,
    random.shuffle: True,
    sorted: False,
    min: False,
    max: False,
    sum: False,
    any: False,
    all: False,
    # a copy or a view made from a container reads it whole
    list: False,
    tuple: False,
    set: False,
    frozenset: False,
    dict: False,
    enumerate: False,
    iter: False,
    reversed: False,
    copy.copy: False,
    copy.deepcopy: False,
    next: True,  # of a generator shared by threads: it runs the generator (a write)
    zip: False,
    map: False,
    filter: False,
    str: False,
    repr: False,
    format: False,
    print: False,
    json.dumps: False,
    json.dump: False,  # its stream is written (``STREAMS``)
    dict.fromkeys: False,
    str.join: False,  # a method: ``", ".join(items)``
    bytes.join: False,  # ``b"".join(parts)`` (session 39: the sixth review's C readers)
    bytearray.join: False,
    itertools.chain.from_iterable: False,
    ascii: False,
    int: False,  # ``int(ba)``, ``float(ba)``: a buffer's digits
    float: False,
    str.translate: False,  # ``"a".translate(table)``: the table, a dict
    str.maketrans: False,
    bytes.maketrans: False,
    # the operators as functions read their operands, as the operators do (``operator.add(a, b)``)
    **dict.fromkeys(OPERATORS, False),
    # a hash's ``update(ba)`` reads the buffer
    **dict.fromkeys(
        (type(hashlib.new(name)).update for name in sorted(hashlib.algorithms_guaranteed)), False
    ),
    str.format: False,  # a method: ``"{}".format(items)``
    bytes: False,
    bool: False,  # a container's truth is its length
    operator.length_hint: False,
    # constructors that copy a container handed to them
    deque: False,
    collections.OrderedDict: False,
    collections.defaultdict: False,
    array.array: False,
    bytearray: False,
    collections.Counter: False,
    itertools.chain: False,
    functools.reduce: False,
    pickle.dumps: False,
    # a log call formats its arguments (at once, where the level is on)
    **dict.fromkeys(
        (getattr(logging.Logger, level) for level in _LOG_LEVELS),
        False,
    ),
    **dict.fromkeys((getattr(logging, level) for level in _LOG_LEVELS), False),
    **READERS,
    # session 38's review: more that format, serialise or search what they are handed
    str.format_map: False,  # a method: ``"{host}".format_map(cfg)``
    string.Template.substitute: False,
    string.Template.safe_substitute: False,
    pprint.pformat: False,
    pprint.pprint: False,
    pprint.pp: False,
    reprlib.repr: False,
    urllib.parse.urlencode: False,
    marshal.dumps: False,
    marshal.dump: False,
    operator.countOf: False,
    inspect.getmembers: False,  # (an object's fields: ``SERIALISES``)
    operator.indexOf: False,
    # the in-place operators as functions change their first argument
    **dict.fromkeys(
        (
            operator.iadd,
            operator.iconcat,
            operator.imul,
            operator.ior,
            operator.iand,
            operator.ixor,
            operator.isub,
        ),
        True,
    ),
    # what reads a buffer (a ``bytearray``, an ``array``) handed to it
    **dict.fromkeys(
        (
            struct.unpack,
            struct.unpack_from,
            struct.iter_unpack,
            int.from_bytes,
            zlib.crc32,
            zlib.adler32,
            zlib.compress,
            binascii.hexlify,
            binascii.b2a_base64,
            binascii.b2a_hex,
            binascii.crc32,
            base64.b64encode,
            base64.b64decode,
            base64.urlsafe_b64encode,
            base64.b16encode,
            base64.b32encode,
            hashlib.md5,
            hashlib.sha1,
            hashlib.sha224,
            hashlib.sha256,
            hashlib.sha384,
            hashlib.sha512,
            hashlib.blake2b,
            hashlib.blake2s,
            hashlib.new,
            io.BytesIO,
        ),
        False,
    ),
}
# Of those, the ones that write a buffer handed to them other than their first argument: function
# -> the argument's index (``struct.pack_into(fmt, buf, 0, 7)``; session 38's review)
WRITES_ARGUMENT: dict[object, int] = {struct.pack_into: 1}
CONTAINER_FUNCTIONS.update(dict.fromkeys(WRITES_ARGUMENT, False))
# A bound method among them (``random.shuffle``, ``reprlib.repr``: a hidden instance's) is called
# unpacked, its function with the instance (CPython 3.11's ``PRECALL``): the function is listed too.
CONTAINER_FUNCTIONS.update(
    {f.__func__: v for f, v in list(CONTAINER_FUNCTIONS.items()) if isinstance(f, types.MethodType)}
)
# How deep a read of a handed container goes into the containers inside it, and how many items of
# each it looks at (a call that formats a big structure reads every item; its first ones are the
# ones a report needs).
NESTED_DEPTH = 3
NESTED_ITEMS = 64
# How far a function's C code looks into the containers it is handed (session 39's rule; the
# sixth review's programs, a list's inner lists changed while C code read them, were proved race
# free), the depth of its read (``race_calls.CallSites.read_whole``):
# * 1 (any function not listed): the container only. It copies or hands on references to its
#   items and looks at none (``list(outer)``, ``tuple``, ``zip``, ``enumerate``, ``iter``,
#   ``dict(d)``, ``outer.append(inner)``): a change to an inner list races with nothing here.
# * 2: each item too, read whole. It tests, measures, adds, joins or unpacks them (``any``, ``all``,
#   ``sum(groups, [])``, ``b"".join``, ``chain.from_iterable``, ``starmap``, ``dict(pairs)``).
# * ``NESTED_DEPTH``: recursively. It formats, compares, orders, hashes or serialises them, as
#   ``repr`` and ``==`` do in C (``str``, ``ascii``, ``sorted``, ``max``, ``json.dumps``,
#   ``operator.eq``; the comparison opcodes and ``in``, ``count``, ``index`` and ``remove`` given a
#   sequence to look for: ``races.py``, ``race_calls.COMPARES``).
# And a higher-order function (``APPLIES``: ``map``, ``filter``, ``reduce``, ``sorted``'s key) that
# hands each item to C code (``len``, ``list``, ``operator.add``, ``"".join``: not traced) reads the
# items as that code does: one level more than it (``map(len, groups)`` reads each group). Python
# code it calls is traced: its own accesses are seen where it makes them.
# A tuple is no location (it cannot change), but the walk looks through it to the containers it
# holds. The walk stops at ``NESTED_ITEMS`` items a level: most containers are flat, and a flat
# one costs a look at its first items.
DEPTH: dict[object, int] = {
    **dict.fromkeys(
        (
            any,
            all,
            sum,
            math.prod,
            str.join,
            bytes.join,
            bytearray.join,
            itertools.chain.from_iterable,
            itertools.starmap,
            functools.reduce,
            dict,
            collections.OrderedDict,
        ),
        2,
    ),
    **dict.fromkeys(
        (
            str,
            repr,
            ascii,
            format,
            print,
            sorted,
            min,
            max,
            json.dumps,
            json.dump,
            pickle.dumps,
            pickle.dump,
            copy.deepcopy,
            str.format,
            str.format_map,
            string.Template.substitute,
            string.Template.safe_substitute,
            pprint.pformat,
            pprint.pprint,
            pprint.pp,
            reprlib.repr,
            reprlib.Repr.repr,
            urllib.parse.urlencode,
            marshal.dumps,
            marshal.dump,
            *COMPARISONS,
            *(getattr(logging.Logger, level) for level in _LOG_LEVELS),
            *(getattr(logging, level) for level in _LOG_LEVELS),
        ),
        NESTED_DEPTH,
    ),
}
# ``dict(pairs)`` unpacks each pair; ``dict(d)`` copies a mapping's references (depth 1)
PAIRS = frozenset({dict, collections.OrderedDict})
# the higher-order functions: the C code among their arguments is called on each item
APPLIES = frozenset(
    {
        map,
        filter,
        functools.reduce,
        itertools.starmap,
        itertools.accumulate,
        itertools.filterfalse,
        itertools.dropwhile,
        itertools.takewhile,
        itertools.groupby,
        sorted,
        min,
        max,
    }
)
# container methods that compare each item with their argument (``outer.count([1, 2])``): given a
# sequence to look for, they read the items recursively
COMPARES = frozenset({"count", "index", "remove", "__contains__"})
# container methods that read the items of a container they are handed (``append(inner)`` stores
# a reference and reads nothing of it)
READS_ARGUMENTS = frozenset(
    {
        "extend",
        "extendleft",
        "update",
        "issubset",
        "issuperset",
        "union",
        "intersection",
        "difference",
        "symmetric_difference",
        "isdisjoint",
        "difference_update",
        "intersection_update",
        "symmetric_difference_update",
        "__iadd__",
        "__ior__",
        "__iand__",
        "__isub__",
        "__ixor__",
        "__init__",
        # session 39: a stream's ``write(ba)``, an array's ``frombytes(ba)`` read the buffer
        "write",
        "writelines",
        "frombytes",
        "fromlist",
    }
)
# container methods that write the buffer they are handed (a stream's ``readinto(buf)``)
WRITES_FIRST_ARGUMENT = frozenset({"readinto", "readinto1"})
# a generator's methods that run it, as ``next`` does (a write of the generator)
GENERATOR_METHODS = frozenset(
    {types.GeneratorType.send, types.GeneratorType.throw, types.GeneratorType.close}
)
# What the C tracer hands to the handler at a call: all of the above. True: only with a container
# among its arguments (``str(x)`` of a number touches no shared data; the tracer tests them in C);
# "fields": or where the format string it is called on reaches into a field (``"{0.x}".format(o)``).
NAMED_CALLS: dict[object, object] = {
    **dict.fromkeys(CONTAINER_FUNCTIONS, True),
    **dict.fromkeys(ITEM_FUNCTIONS, True),
    **dict.fromkeys(ATTR_BUILTINS, False),
    **dict.fromkeys(GENERATOR_METHODS, False),
    next: False,  # the handler looks for a generator
    **dict.fromkeys(SERIALISES, False),  # ``pickle.dumps(obj)`` reads an object's fields too
    # and where a reader is handed with no container: ``map(partial(getattr, p), "ab")``,
    # ``json.dumps(p, default=vars)`` (``race_applied``)
    **dict.fromkeys((map, json.dumps, json.dump), False),
    str.format: "fields",
    str.format_map: "fields",
}


# numpy's functions that read a list handed to them in C (``np.array(xs)``, review 10's t23):
# listed once the program has imported numpy (the harness does not import it)
_NUMPY_READERS = (
    "array",
    "asarray",
    "asanyarray",
    "ascontiguousarray",
    "concatenate",
    "stack",
    "vstack",
    "hstack",
    "sum",
    "mean",
    "prod",
    "min",
    "max",
    "median",
)
_NUMPY_LISTED: list[object] = []


def list_loaded() -> None:
    """The readers of modules imported since this module was (numpy's), listed as they are."""
    numpy = sys.modules.get("numpy")
    if numpy is None or _NUMPY_LISTED:
        return
    _NUMPY_LISTED.append(numpy)
    for name in _NUMPY_READERS:
        fn = getattr(numpy, name, None)
        if fn is not None:
            CONTAINER_FUNCTIONS[fn] = False
            DEPTH[fn] = NESTED_DEPTH  # (a nested list's inner lists: ``np.array(rows)``)
            NAMED_CALLS[fn] = True


def named_call(target: object) -> bool:
    """Is ``target`` a function of ``NAMED_CALLS`` (False for an unhashable callable)?"""
    try:
        return target in NAMED_CALLS
    except TypeError:
        return False
