"""The numbers ``threading.get_ident()`` and ``get_native_id()`` give in an execution's threads.

A worker's is ``IDENT_BASE`` plus its index in the execution. The main controlled thread's are the
real main thread's, which a program's module took at import (``MAIN_IDENT =
threading.get_ident()``): with ``IDENT_BASE`` in their place its main thread was "not the main
thread" (eighth review, session 40: r114, r116), and a fast path for the main thread known by
that ident was never taken (r117, a race proved absent)."""

from __future__ import annotations

import threading

IDENT_BASE = 1_000_000  # ``get_ident()`` of an execution's worker: this plus its index
MAIN_IDENT: int = threading.main_thread().ident or IDENT_BASE
MAIN_NATIVE_ID: int = threading.main_thread().native_id or IDENT_BASE


def thread_ident(tid: int) -> int:
    """``threading.get_ident()`` in the execution's thread ``tid``."""
    return MAIN_IDENT if tid == 0 else IDENT_BASE + tid


def native_id(tid: int) -> int:
    """``threading.get_native_id()`` in the execution's thread ``tid``."""
    return MAIN_NATIVE_ID if tid == 0 else IDENT_BASE + tid


def thread_of(ident: int) -> int | None:
    """The execution's thread whose ``get_ident()`` is ``ident`` (None: it names no controlled
    thread; a number past the execution's threads is returned as it is, for the caller to refuse)."""
    if ident == MAIN_IDENT:
        return 0
    return ident - IDENT_BASE if ident >= IDENT_BASE else None
