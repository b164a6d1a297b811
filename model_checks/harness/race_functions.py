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
import operator
import pickle
import pprint
import random
import reprlib
import string
import struct
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
# Of those, the ones that read the containers inside the ones they are handed: they format,
# serialise or compare them (``str(outer)`` reads ``outer[0]``; a copy, ``list(outer)``, does not)
DEEP = frozenset(
    {
        str,
        repr,
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
    }
    | {getattr(logging.Logger, level) for level in _LOG_LEVELS}
    | {getattr(logging, level) for level in _LOG_LEVELS}
)
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
    }
)
# container methods that write the buffer they are handed (a stream's ``readinto(buf)``)
WRITES_FIRST_ARGUMENT = frozenset({"readinto", "readinto1"})
# a generator's methods that run it, as ``next`` does (a write of the generator)
GENERATOR_METHODS = frozenset(
    {types.GeneratorType.send, types.GeneratorType.throw, types.GeneratorType.close}
)
# What the C tracer hands to the handler at a call: all of the above. True: only with a container
# among its arguments (``str(x)`` of a number touches no shared data; the tracer tests them in C).
NAMED_CALLS: dict[object, bool] = {
    **dict.fromkeys(CONTAINER_FUNCTIONS, True),
    **dict.fromkeys(ITEM_FUNCTIONS, True),
    **dict.fromkeys(ATTR_BUILTINS, False),
    **dict.fromkeys(GENERATOR_METHODS, False),
    next: False,  # the handler looks for a generator
    **dict.fromkeys(SERIALISES, False),  # ``pickle.dumps(obj)`` reads an object's fields too
}


def named_call(target: object) -> bool:
    """Is ``target`` a function of ``NAMED_CALLS`` (False for an unhashable callable)?"""
    try:
        return target in NAMED_CALLS
    except TypeError:
        return False
