"""What CPython 3.11 accepts as a lock's, a wait's or a queue's timeout, and what it raises for
the rest, in its words: the controlled primitives (``primitives.py``, ``handles.py``) and the
runtime's ``sleep`` refuse what a real call would refuse, before the call is a scheduling point."""

from __future__ import annotations

import math
import operator
from typing import Any, Final


def _timeout(blocking: bool, timeout: float | None) -> float | None:
    if not blocking or timeout is None or timeout < 0:
        return None
    return timeout


def _blocks(blocking: bool, timeout: float | None) -> bool:
    """Does the call wait at all? ``timeout=0`` returns at once, as ``blocking=False`` does (so
    it is a try, not a timed wait that uses up the execution's timeouts)."""
    return bool(blocking) and timeout != 0


_NS_LIMIT: Final = 9.223372036854775808e18  # 2**63, the bound of CPython's nanosecond clock type
_PY_TIMEOUT_MAX_US: Final = (2**63 - 1) // 1000  # ``PY_TIMEOUT_MAX`` (POSIX threads), microseconds


def timeout_ns(timeout: Any) -> int:
    """A timeout as CPython converts it to its nanosecond clock type (3.11's
    ``_PyTime_FromSecondsObject``, rounding away from zero), refusing what it refuses in its words:
    NaN, a value out of the type's range (``inf``, ``1e10``), what is not a number."""
    if isinstance(timeout, float):
        if math.isnan(timeout):
            raise ValueError("Invalid value NaN (not a number)")
        d = timeout * 1e9
        if not -_NS_LIMIT <= d < _NS_LIMIT:
            raise OverflowError("timestamp out of range for platform time_t")
        return int(math.ceil(d) if d >= 0 else math.floor(d))
    try:
        ns = operator.index(timeout) * 1_000_000_000
    except TypeError:
        raise TypeError(f"'{type(timeout).__name__}' object cannot be interpreted as an integer") from None
    if not -(2**63) <= ns < 2**63:
        raise OverflowError("timestamp too large to convert to C _PyTime_t")
    return ns


def _wait_refusal(timeout: Any) -> Exception | None:
    """What CPython raises when a lock waits with this (positive) timeout (``lock.acquire(True,
    timeout)``, under every timed wait of ``threading`` and ``queue``), or None: ``inf``,
    ``1e10``, NaN are refused only when the call would wait, so the caller looks first."""
    try:
        ns = timeout_ns(timeout)
    except (ValueError, OverflowError, TypeError) as e:
        return e
    if -(-ns // 1000) > _PY_TIMEOUT_MAX_US:
        return OverflowError("timeout value is too large")
    return None


def _check_lock_timeout(blocking: bool, timeout: Any) -> None:
    """CPython's refusals of a lock's ``acquire`` arguments (``_thread``'s, 3.11's words, in its
    order): a timeout it cannot convert (NaN, ``inf``, ``1e10``: up front, held or not), a
    timeout with ``blocking=False``, a negative one other than -1, one above ``PY_TIMEOUT_MAX``."""
    ns = timeout_ns(timeout)
    if ns != -1_000_000_000:
        if not blocking:
            raise ValueError("can't specify a timeout for a non-blocking call")
        if ns < 0:
            raise ValueError("timeout value must be positive")
        refused = _wait_refusal(timeout)
        if refused is not None:
            raise refused


def _check_queue_timeout(timeout: float | None) -> None:
    """``queue.Queue``'s refusal of a blocking call's negative timeout (CPython's words)."""
    if timeout is not None and timeout < 0:
        raise ValueError("'timeout' must be a non-negative number")
