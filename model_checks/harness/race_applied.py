"""What C code reads when the program hands it a reader to call: ``operator.attrgetter`` and
``itemgetter`` called on an object, a higher-order function (``map``, ``filter``, ``sorted``'s
key) calling a getter or a ``partial`` of ``getattr`` on each item, ``json.dumps(obj,
default=vars)`` calling its default on each object it cannot encode. None of these calls runs a
traced frame, so the fields and items they read are recorded at the program's call, as its reads
(``race_calls.CallSites``).

An outside review (tenth, t01, t08, t09, t92, t94) proved torn snapshots race free: a reader took
``attrgetter("a", "b")(p)``, ``itemgetter(0, 1)(xs)``, ``sum(map(attrgetter("bal"), accts))``,
``json.dumps(p, default=vars)`` or ``map(partial(getattr, p), "ab")`` lock-free while a writer
updated the fields under its lock. The rule is general over the reader handed: a getter reads the
fields or items it names; a ``partial`` is called as the program's call of its function would be
(``getattr(p, "a")``: ``p.a``); ``vars`` handed to a serialiser reads the object's fields whole
(the serialiser encodes the dict it returns). Python code handed instead is traced: its own
accesses are seen. A higher-order function's items are looked at only in a container or a string
it is handed (an iterator would be consumed), its first ``NESTED_ITEMS``; and its reads are
recorded at its call, where ``map`` is lazy (``sum(map(...))`` reads them on the same line).
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
from collections import deque
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

from model_checks.harness.race_functions import ATTR_BUILTINS, ITEM_FUNCTIONS, NESTED_DEPTH, NESTED_ITEMS
from model_checks.harness.race_sites import CONTAINERS, Where

if TYPE_CHECKING:
    from model_checks.harness.race_calls import CallSites

GETTERS = (operator.attrgetter, operator.itemgetter)
# the higher-order functions whose function comes first and is called on each item, and those
# whose function comes among the rest (a key) and is called on each item of the first
_FUNCTION_FIRST = frozenset({map, filter, itertools.filterfalse, itertools.dropwhile, itertools.takewhile})
_KEYED = frozenset({sorted, min, max, itertools.groupby})
SERIALISERS = frozenset({json.dumps, json.dump})
# what can be looked through without consuming it
_STABLE = (*CONTAINERS, tuple, str, bytes, range, frozenset, deque)
_JSON_NATIVE = (str, int, float, bool, type(None))
MISSING = object()


def reader(fn: object) -> bool:
    """Is ``fn`` C code that reads what it is called on: a getter, a ``methodcaller``, or a
    ``partial`` of one or of an attribute or item builtin (``partial(getattr, p)``)?"""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if isinstance(fn, (*GETTERS, operator.methodcaller)):
        return True
    try:
        return fn in ATTR_BUILTINS or fn in ITEM_FUNCTIONS
    except TypeError:  # unhashable
        return False


def getter(calls: CallSites, tid: int, frame: Where, target: Any, args: Sequence[object]) -> None:
    """``attrgetter("a", "b.c")(obj)``: ``obj.a``, ``obj.b`` and ``obj.b.c`` read;
    ``itemgetter(0, 1)(xs)``: ``xs[0]`` and ``xs[1]``."""
    if len(args) != 1:
        return
    obj = args[0]
    names = target.__reduce__()[1]
    detector = calls.detector
    if isinstance(target, operator.attrgetter):
        for name in names:
            if not isinstance(name, str):
                continue
            at: Any = obj
            for part in name.split("."):
                if at is MISSING:
                    break
                detector._load_attr(tid, at, part, frame)
                if "." in name:
                    at = getattr(at, part, MISSING)
    elif isinstance(obj, CONTAINERS):
        for key in names:
            detector._item(tid, obj, key, False, frame, indexed=True)


def applied(calls: CallSites, tid: int, frame: Where, target: object, args: Sequence[object]) -> None:
    """``map(fn, xs)``, ``filter(fn, xs)``, ``sorted(xs, key=fn)``: ``fn``, a reader, called on
    each item (the items of ``map``'s iterables in step: ``map(f, xs, ys)`` is ``f(x, y)``)."""
    if target in _FUNCTION_FIRST:
        if len(args) < 2 or not reader(args[0]):
            return
        fn, groups = args[0], args[1:] if target is map else args[1:2]
    elif target in _KEYED:
        found = [a for a in args[1:] if reader(a)]
        if not found or not args:
            return
        fn, groups = found[0], args[:1]
    elif target is itertools.starmap:
        if len(args) != 2 or not reader(args[0]):
            return
        for item in _first(args[1]):
            if isinstance(item, tuple):
                calls.called(tid, frame, args[0], item)
        return
    else:
        return
    columns = [_first(group) for group in groups]
    for item_args in zip(*columns, strict=False):
        calls.called(tid, frame, fn, item_args)


def serialised(calls: CallSites, tid: int, frame: Where, args: Sequence[object]) -> None:
    """``json.dumps(obj, default=fn)``: ``fn`` is called on each object JSON cannot encode (found
    as the encoder walks ``obj``), and what it returns is encoded: ``vars`` reads the object's
    fields whole, a reader what it names."""
    if not args:
        return
    handed = [a for a in args[1:] if callable(a) and not isinstance(a, type)]
    if handed and (handed[0] is vars or reader(handed[0])):
        _walk(calls, tid, frame, args[0], handed[0], NESTED_DEPTH)


def _walk(calls: CallSites, tid: int, frame: Where, obj: object, default: object, depth: int) -> None:
    if depth <= 0 or isinstance(obj, _JSON_NATIVE):
        return
    if isinstance(obj, (list, tuple, dict)):
        items = obj.values() if isinstance(obj, dict) else obj
        for item in itertools.islice(items, NESTED_ITEMS):
            _walk(calls, tid, frame, item, default, depth - 1)
        return
    if default is vars:
        fields = getattr(obj, "__dict__", None)
        if isinstance(fields, dict):
            calls.read_whole(tid, fields, frame, f"json.dumps({type(obj).__name__})", NESTED_DEPTH)
            for value in itertools.islice(fields.values(), NESTED_ITEMS):
                _walk(calls, tid, frame, value, default, depth - 1)
    else:
        calls.called(tid, frame, default, (obj,))


def _first(group: object) -> list[object]:
    """The first items of ``group`` where looking does not consume it, else none."""
    if not isinstance(group, _STABLE):
        return []
    return list(
        itertools.islice(cast(Iterable[object], group), NESTED_ITEMS)
    )  # (a dict's keys, as ``map`` takes them)
