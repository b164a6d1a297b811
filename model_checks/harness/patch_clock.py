"""Patch mode's clocks (docs/harness.md, "The clocks").

In a controlled thread ``time``'s clocks (``monotonic``, ``perf_counter``, ``time``, their ``_ns``
forms, and ``clock_gettime(_ns)`` of the clocks that run in real time), the functions that read
the time when given none (``localtime()``, ``gmtime()``, ``ctime()``, ``asctime()``,
``strftime(format)``) and ``datetime``'s ``now``/``utcnow``/``today`` read the virtual clock
(``rt/clock.py``'s ``read_clock``); anywhere else the real ones run. Each clock shows its real
reading when the check began (``new_check``: after the program's import, so a time it read then
is in the past, and a file's mtime is near ``time.time()``) plus the virtual time since.

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
from collections.abc import Callable
from typing import Any, Literal

from model_checks.harness import patch_os_thread
from model_checks.harness.patch_either import either as _either
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.rt.clock import MONOTONIC_ORIGIN
from model_checks.harness.runtime import ControlledRuntime

_real_datetime = _datetime_module.datetime
_real_localtime = time.localtime
_real_gmtime = time.gmtime
_real_ctime = time.ctime
_real_asctime = time.asctime
_real_strftime = time.strftime
_real_clock_gettime: Callable[[int], float] | None = getattr(time, "clock_gettime", None)
_real_clock_gettime_ns: Callable[[int], int] | None = getattr(time, "clock_gettime_ns", None)

# The clocks that run in real time (not a process's CPU time, which stays real, nor a thread's:
# ``patch_os_thread``), by
# ``clock_gettime`` id where the platform has them.
_REAL_TIME_IDS = ("CLOCK_REALTIME", "CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW", "CLOCK_BOOTTIME", "CLOCK_TAI")
_IDS: dict[int, str] = {getattr(time, n): n for n in _REAL_TIME_IDS if hasattr(time, n)}
_Named = Literal["monotonic", "perf_counter", "time"]
_NAMED: dict[_Named, Callable[[], int]] = {
    "monotonic": time.monotonic_ns,
    "perf_counter": time.perf_counter_ns,
    "time": time.time_ns,
}


def _gettime_ns_real(clock_id: int) -> int:
    assert _real_clock_gettime_ns is not None  # (``_IDS`` is empty, and it is not replaced, without it)
    return _real_clock_gettime_ns(clock_id)


def _read_origins() -> dict[int | str, int]:
    """The real clocks now, in ns. ``monotonic`` and ``clock_gettime(CLOCK_MONOTONIC)`` are one
    clock where CPython reads the one through the other (Linux), so they share a reading."""
    origins: dict[int | str, int] = {}
    for clock_id in _IDS:
        try:
            origins[clock_id] = _gettime_ns_real(clock_id)
        except OSError:  # (a clock the kernel lacks)
            continue
    for name, read in _NAMED.items():
        implementation = time.get_clock_info(name).implementation
        same = [i for i, n in _IDS.items() if implementation == f"clock_gettime({n})" and i in origins]
        origins[name] = origins[same[0]] if same else read()
    return origins


_ORIGINS: list[dict[int | str, int]] = [_read_origins()]


def new_check() -> None:
    """A check (or a replay) begins: its clocks start at the real ones' readings now, the same in
    every execution of the check (another check, or process, starts at its own)."""
    _ORIGINS[0] = _read_origins()


def origin(clock: int | str) -> int:
    """Where the running check's clock ``clock`` (a name of ``_NAMED``, or a ``clock_gettime``
    id) starts, in ns: ``time.monotonic_ns()`` at the check's start reads this plus 0."""
    return _ORIGINS[0][clock]


_ReadNs = Callable[[ControlledRuntime], int]


def _elapsed_ns(rt: ControlledRuntime) -> int:
    """The virtual time since the check's start as the running thread reads it, in ns. Reads of
    two threads that nothing orders may be equal: told apart by thread (a nanosecond each), one
    order of them would be the only one explored, and a bug in the other proved absent."""
    return round((rt.monotonic() - MONOTONIC_ORIGIN) * 1e9)


def _reader(clock: int | str) -> tuple[Callable[[ControlledRuntime], float], _ReadNs]:
    """Clock ``clock``'s reads as seconds and as ns."""

    def ns(rt: ControlledRuntime) -> int:
        return _ORIGINS[0][clock] + _elapsed_ns(rt)

    return (lambda rt: ns(rt) / 1e9), ns


monotonic, _monotonic_ns = _reader("monotonic")  # (also ``threading._time``: ``patch.py``)
_perf, _perf_ns = _reader("perf_counter")
wall, _wall_ns = _reader("time")  # ``time.time()``
_by_id = {clock_id: _reader(clock_id) for clock_id in _IDS}


def _gettime(rt: ControlledRuntime, clock_id: int) -> float:
    if clock_id in _by_id and clock_id in _ORIGINS[0]:
        return _by_id[clock_id][0](rt)
    if clock_id == patch_os_thread.CPU_CLOCK:  # the controlled thread's own (``patch_os_thread``)
        return patch_os_thread.cpu_ns(rt) / 1e9
    assert _real_clock_gettime is not None  # (replaced only where it exists)
    return _real_clock_gettime(clock_id)


def _gettime_ns(rt: ControlledRuntime, clock_id: int) -> int:
    if clock_id in _by_id and clock_id in _ORIGINS[0]:
        return _by_id[clock_id][1](rt)
    if clock_id == patch_os_thread.CPU_CLOCK:
        return patch_os_thread.cpu_ns(rt)
    return _gettime_ns_real(clock_id)


def _struct(rt: ControlledRuntime, t: Any) -> Any:
    return _real_localtime(wall(rt)) if t is None else t


REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    _either(time, "monotonic", monotonic),
    _either(time, "monotonic_ns", _monotonic_ns),
    _either(time, "perf_counter", _perf),
    _either(time, "perf_counter_ns", _perf_ns),
    _either(time, "time", wall),
    _either(time, "time_ns", _wall_ns),
    *([_either(time, "clock_gettime", _gettime)] if _real_clock_gettime else []),
    *([_either(time, "clock_gettime_ns", _gettime_ns)] if _real_clock_gettime_ns else []),
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
        seconds, micros = _floor_micros(_wall_ns(rt))
        return cls.fromtimestamp(seconds, tz).replace(microsecond=micros)

    @classmethod
    def utcnow(cls) -> Any:
        rt = _controlled()
        if rt is None:
            return super().utcnow()
        seconds, micros = _floor_micros(_wall_ns(rt))
        return cls.utcfromtimestamp(seconds).replace(microsecond=micros)


def _floor_micros(ns: int) -> tuple[int, int]:
    """A reading in ns as whole seconds and microseconds, rounded down as CPython's ``now`` does
    (from the clock's ns, not through a float: a float second count near today's has a quarter-µs
    grain, so two reads 50 ms apart could show 49.999 ms between them, and a program that checks
    a timed wait lasted its timeout would fail on what it did right, depending on the origin)."""
    seconds, rest = divmod(ns, 1_000_000_000)
    return seconds, rest // 1000


class _DatetimeModule(types.ModuleType):
    """The ``datetime`` module as the program's ``import datetime`` sees it while patched: its
    ``datetime`` is the stand-in, every other name the module's own."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_datetime_module, name)


_MODULE = _DatetimeModule("datetime", _datetime_module.__doc__)
_MODULE.datetime = datetime  # type: ignore[attr-defined]

# Stood in for by identity in the program's modules only (not in the ``datetime`` module).
BY_NAME: dict[int, Any] = {id(_datetime_module): _MODULE, id(_real_datetime): datetime}
