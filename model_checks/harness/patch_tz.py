"""The C library's time zone in a controlled thread: an operation where the program sets it.

``time.tzset()`` makes the C library read ``TZ`` again, for the whole process: another thread's
``time.localtime`` inside a window where one thread switched the zone converts in that zone. The
environment's store was traced, but ``tzset`` and ``localtime`` were neither operations nor
accesses, so the explorer ran one order and proved a program that fails in every real run (tenth
review, session 42: t97). Where the program's modules name ``tzset``, ``time.tzset`` in a
controlled thread writes one location per execution, "the time zone", and the conversions that
read it (``localtime``, ``mktime``, ``ctime``, ``asctime``, ``strftime``) and a read of
``time.timezone``/``altzone``/``tzname``/``daylight`` (which ``tzset`` sets: ``time``'s class
holds them as properties over its dict while patched) read it, made by the program or by library
code it called, and ``datetime``'s conversions in local time (``datetime.fromtimestamp``,
``now()``, ``date.fromtimestamp``/``today()``, a naive ``astimezone()``/``timestamp()``: C methods,
put in their types' dicts while patched).
"""

from __future__ import annotations

import datetime
import time
import types
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import Any

from model_checks.harness.patch_context import TypeSlots
from model_checks.harness.patch_shared import Rule, _always, _from_program, _wrapped, access
from model_checks.harness.patch_streams import module_refers, over_dict
from model_checks.harness.patch_threads import _controlled

_ZONE = "the time zone"
_READERS = ("localtime", "mktime", "ctime", "asctime", "strftime")
_ATTRIBUTES = ("timezone", "altzone", "tzname", "daylight")
_TIME = vars(time)  # (``tzset`` stores the attributes in it: C's ``PyModule_AddObjectRef``)


def _read(frame: FrameType) -> None:
    if _from_program(frame):
        access(_ZONE, "read")


_Time = types.new_class(
    "_Time",
    (types.ModuleType,),
    exec_body=lambda ns: ns.update({n: over_dict(_TIME, "time", n, _read) for n in _ATTRIBUTES}),
)


# the zone's attributes as patching found them, where the program names ``tzset``
_FOUND: list[tuple[Any, ...]] = []
_real_tzset = time.tzset


def _zone() -> tuple[Any, ...]:
    return tuple(_TIME.get(n) for n in _ATTRIBUTES)


def put_back() -> None:
    """An execution ends: ``patch_state`` put ``TZ`` back, and the C library reads it again here
    if the execution's ``tzset`` moved the zone (the next starts in the one patching found)."""
    if _FOUND and _zone() != _FOUND[0]:
        _real_tzset()


def _naive(self: Any, tz: Any = None, *rest: Any) -> bool:
    return tz is None or getattr(self, "tzinfo", None) is None


# ``datetime``'s C conversions that read the zone: (type, name, is a classmethod, when)
_LOCAL: tuple[tuple[type, str, bool, Callable[..., bool]], ...] = (
    (datetime.datetime, "fromtimestamp", True, lambda ts=None, tz=None, *rest: tz is None),
    (datetime.datetime, "now", True, lambda tz=None, *rest: tz is None),
    (datetime.date, "fromtimestamp", True, lambda *args, **kwargs: True),
    (datetime.datetime, "astimezone", False, lambda self, tz=None, *rest: _naive(self, tz)),
    (datetime.datetime, "timestamp", False, lambda self, *rest: self.tzinfo is None),
)


def _local(cls: type, name: str, bound: bool, when: Callable[..., bool]) -> tuple[Any, str, Any, Any]:
    """A ``datetime`` conversion in local time, in its C type's dict: a read of the zone in a
    controlled thread (lanecheck's own ``now``, ``patch_clock``'s, is one for the program)."""
    real = cls.__dict__[name]

    def call(first: Any, *args: Any, **kwargs: Any) -> Any:
        if _controlled() is not None and when(*((first, *args) if not bound else args), **kwargs):
            access(_ZONE, "read")
        return real.__get__(None, first)(*args, **kwargs) if bound else real(first, *args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return TypeSlots(cls), name, real, classmethod(call) if bound else call


def at_patching(modules: tuple[ModuleType, ...]) -> list[tuple[Any, str, Any, Any]]:
    """``tzset`` and the readers of the zone where ``modules`` name ``tzset`` (elsewhere CPython's)."""
    _FOUND.clear()
    if not any(module_refers(m, frozenset({"tzset"}), (time.tzset,)) for m in modules):
        return []
    _FOUND.append(_zone())
    write: list[Rule] = [(_ZONE, "write", _always)]
    read: list[Rule] = [(_ZONE, "read", _always)]
    return [
        _wrapped(time, "tzset", write),
        *(_wrapped(time, name, read) for name in _READERS),
        # (the "real" is no object a program holds: ``patch`` rebinds a global found to be it)
        (time, "__class__", object(), _Time),
        *(_local(*row) for row in _LOCAL),
    ]
