"""The functions outside the traced code whose calls are accesses to the data handed to them
(``race_calls.py`` makes them): the builtins that reach an attribute by name, the ones that reach
one item, the ones that read (or change) whole containers, and a generator's methods. The C
tracer hands the handler a call only of one of ``NAMED_CALLS``."""

from __future__ import annotations

import array
import bisect
import collections
import copy
import functools
import heapq
import itertools
import json
import logging
import operator
import pickle
import random
import types
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
}
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
    }
)
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
