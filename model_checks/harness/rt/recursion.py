"""The recursion depth a controlled thread's code is given, as a real thread's would be.

A greenlet starts counted at the depth of the code that first switched into it (the harness's
search, under the CLI or pytest: some thirty frames), so a worker recursing to just below
``sys.getrecursionlimit()``, as a real thread can, raised ``RecursionError`` (session 40's review,
p163). ``lend`` takes that excess off the running greenlet's count (CPython 3.11's
``PyThreadState.recursion_remaining``, which greenlet saves and restores per greenlet) and
``repay`` gives it back before the greenlet runs the harness's code again. Where the fields cannot
be trusted (another CPython, a limit that does not read back) both do nothing."""

from __future__ import annotations

import ctypes
import sys
from typing import Final

from model_checks.harness.rt.native import NATIVE

# CPython 3.11's ``struct _ts``: three pointers, ``_initialized``, ``_static``, then
# ``recursion_remaining`` and ``recursion_limit`` (Include/cpython/pystate.h)
_REMAINING: Final = 3 * ctypes.sizeof(ctypes.c_void_p) + 2 * ctypes.sizeof(ctypes.c_int)
_LIMIT: Final = _REMAINING + ctypes.sizeof(ctypes.c_int)
_state = ctypes.pythonapi.PyThreadState_Get
_state.restype = ctypes.c_void_p
_SUPPORTED: Final = sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11)


# the two fields' views by thread-state address: a view is only an address, right for whatever
# thread state lives there (a new one at a freed one's address has the same layout), and making
# them was most of the cost (two threads an execution each ask three times)
_VIEWS: dict[int, tuple[ctypes.c_int, ctypes.c_int]] = {}


def _fields() -> tuple[ctypes.c_int, ctypes.c_int] | None:
    if not _SUPPORTED:
        return None
    address = _state()
    if not address:
        return None
    views = _VIEWS.get(address)
    if views is None:
        views = _VIEWS[address] = (
            ctypes.c_int.from_address(address + _REMAINING),
            ctypes.c_int.from_address(address + _LIMIT),
        )
    # ``sys.setrecursionlimit`` sets every thread state's limit: a mismatch means a layout not read
    if views[1].value != sys.getrecursionlimit():
        return None
    return views


def _depth_in_python() -> int | None:
    fields = _fields()
    if fields is None:
        return None
    remaining, limit = fields
    return limit.value - remaining.value - 2  # (not counting this function's frame nor its caller's)


def depth() -> int | None:
    """The calling frame's recursion depth as CPython counts it (None where it cannot be read)."""
    if _USED is None:
        return _depth_in_python()
    used = _USED()  # (its call counted, as this function's frame)
    return None if used is None else used - 2


def lend(excess: int) -> int:
    """Take ``excess`` off the running greenlet's depth; what was taken (0: nothing)."""
    if excess <= 0 or depth() is None:  # (the counters readable, the limit read back)
        return 0
    _lend(excess)
    return excess


def repay(lent: int) -> None:
    """Give back what ``lend`` took, in the same greenlet."""
    if lent:
        _lend(-lent)


def _lend_in_python(n: int) -> None:
    fields = _fields()
    if fields is not None:
        fields[0].value += n


# (in C where built: the ctypes call and views cost about 3,000 instructions a look, three looks a
# controlled thread, session 46; the same fields, ``_race_filter.c``)
_USED = getattr(NATIVE, "recursion_used", None) if _SUPPORTED else None
_lend = _lend_in_python if NATIVE is None else NATIVE.recursion_lend
