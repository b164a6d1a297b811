"""Patch mode's clocks (docs/harness.md, "The clocks").

In a controlled thread ``time``'s clocks (``monotonic``, ``perf_counter``, ``time`` and their
``_ns`` forms), the functions that read the time when given none (``localtime()``, ``gmtime()``,
``ctime()``, ``asctime()``, ``strftime(format)``) and ``datetime``'s ``now``/``utcnow``/``today``
read the virtual clock (``rt/clock.py``'s ``read_clock``); anywhere else the real ones run.

``datetime.datetime`` is a C type whose ``now`` reads the system clock in C, and replacing it in
the ``datetime`` module would break what checks that name (``pickle`` looks a datetime's class up
there). So it is stood in for only in the program's modules (``BY_NAME``: a ``datetime`` class
imported by name, and the module seen through ``import datetime``), by a subclass that makes real
datetimes and takes them as its own (``isinstance``). ``date.today()`` and ``datetime.today()``
read ``time.time()`` by name in CPython, so they follow the patched ``time.time`` wherever called.
"""

from __future__ import annotations

import datetime as _datetime_module
import time
import types
from typing import Any

from model_checks.harness.patch_either import either as _either
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.rt.clock import EPOCH, MONOTONIC_ORIGIN
from model_checks.harness.runtime import ControlledRuntime

_real_datetime = _datetime_module.datetime
_real_localtime = time.localtime
_real_gmtime = time.gmtime
_real_ctime = time.ctime
_real_asctime = time.asctime
_real_strftime = time.strftime


def _ns(seconds: float) -> int:
    return round(seconds * 1e9)


def wall(rt: ControlledRuntime) -> float:
    """``time.time()`` on the virtual clock: ``EPOCH`` at its origin."""
    return EPOCH + (rt.monotonic() - MONOTONIC_ORIGIN)


def _wall_ns(rt: ControlledRuntime) -> int:
    return EPOCH * 1_000_000_000 + _ns(rt.monotonic() - MONOTONIC_ORIGIN)


def _struct(rt: ControlledRuntime, t: Any) -> Any:
    return _real_localtime(wall(rt)) if t is None else t


REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    _either(time, "monotonic", lambda rt: rt.monotonic()),
    _either(time, "monotonic_ns", lambda rt: _ns(rt.monotonic())),
    _either(time, "perf_counter", lambda rt: rt.monotonic()),
    _either(time, "perf_counter_ns", lambda rt: _ns(rt.monotonic())),
    _either(time, "time", wall),
    _either(time, "time_ns", _wall_ns),
    _either(time, "localtime", lambda rt, secs=None: _real_localtime(wall(rt) if secs is None else secs)),
    _either(time, "gmtime", lambda rt, secs=None: _real_gmtime(wall(rt) if secs is None else secs)),
    _either(time, "ctime", lambda rt, secs=None: _real_ctime(wall(rt) if secs is None else secs)),
    _either(time, "asctime", lambda rt, t=None: _real_asctime(_struct(rt, t))),
    _either(time, "strftime", lambda rt, fmt, t=None: _real_strftime(fmt, _struct(rt, t))),
]


class _TakesRealDatetimes(type):
    """The stand-in's metaclass: a real datetime is an instance of the stand-in (what it makes
    are real datetimes), and the real class a subclass; a program's subclass checks as usual."""

    def __instancecheck__(cls, obj: object) -> bool:
        if cls is datetime:
            return isinstance(obj, _real_datetime)
        return type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: type) -> bool:
        if cls is datetime:
            return issubclass(sub, _real_datetime)
        return type.__subclasscheck__(cls, sub)


class datetime(_real_datetime, metaclass=_TakesRealDatetimes):
    """``datetime.datetime`` in the program's modules: ``now`` and ``utcnow`` read the virtual
    clock in a controlled thread. What it makes (``datetime(2024, 1, 1)``, ``fromtimestamp``,
    ``now``) is a real datetime."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is datetime:
            return _real_datetime(*args, **kwargs)
        return super().__new__(cls, *args, **kwargs)

    @classmethod
    def now(cls, tz: _datetime_module.tzinfo | None = None) -> Any:
        rt = _controlled()
        if rt is None:
            return super().now(tz)
        return cls.fromtimestamp(wall(rt), tz)

    @classmethod
    def utcnow(cls) -> Any:
        rt = _controlled()
        if rt is None:
            return super().utcnow()
        return cls.utcfromtimestamp(wall(rt))


class _DatetimeModule(types.ModuleType):
    """The ``datetime`` module as the program's ``import datetime`` sees it while patched: its
    ``datetime`` is the stand-in, every other name the module's own."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_datetime_module, name)


_MODULE = _DatetimeModule("datetime", _datetime_module.__doc__)
_MODULE.datetime = datetime  # type: ignore[attr-defined]

# Stood in for by identity in the program's modules only (not in the ``datetime`` module).
BY_NAME: dict[int, Any] = {id(_datetime_module): _MODULE, id(_real_datetime): datetime}
