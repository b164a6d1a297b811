"""The eleventh outside review's programs on state kept from one execution to the next (session
43): the registry of warnings already shown (row 2's u06), a ``contextvars`` context made at
import and entered by two threads (row 3's u05). ``test_review11_state.py`` checks them; numpy's
global generator (row 15) is ``review11_numpy_programs.py``'s."""

from __future__ import annotations

import contextvars
import logging
import threading
import warnings
from functools import partial
from typing import Any

from tests.harness.program_threads import run_copies, start_and_join, start_then_release


def _warn() -> None:
    warnings.warn("from-b", UserWarning, stacklevel=1)  # (charged to this line: its registry)


def shown_once() -> int:
    """Two threads warn from one line, under the "default" action, with the program's own
    ``showwarning`` (no setter of ``warnings`` named): a real run shows it once, every order."""
    shown: list[str] = []
    saved = warnings.showwarning

    def show(message: Any, *args: Any, **kwargs: Any) -> None:
        shown.append(str(message))

    warnings.showwarning = show
    try:
        run_copies(_warn, 2)
    finally:
        warnings.showwarning = saved
    return len(shown)


class _Collect(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__()
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record.getMessage())


def captured_warning() -> bool:
    """u06 (BUGGY): A turns on ``logging.captureWarnings`` (``warnings.showwarning`` swapped,
    process-wide) for a moment while B warns: B's warning may land in the ``py.warnings``
    logger. Did it?"""
    gate = threading.Lock()
    logged: list[str] = []
    shown: list[str] = []
    saved = warnings.showwarning

    def show(message: Any, *args: Any, **kwargs: Any) -> None:
        shown.append(str(message))

    def a() -> None:
        logging.captureWarnings(True)
        with gate:
            pass
        logging.captureWarnings(False)

    logger = logging.getLogger("py.warnings")
    logger.propagate = False
    handler = _Collect(logged)
    logger.addHandler(handler)
    warnings.showwarning = show
    gate.acquire()
    try:
        start_then_release(gate, a, _warn)
    finally:
        warnings.showwarning = saved
        logger.removeHandler(handler)
    return bool(logged)


CTX = contextvars.copy_context()  # made at import (u05)
_VAR: contextvars.ContextVar[int] = contextvars.ContextVar("review11_var")
_GATE = threading.Lock()


def _enter(wait: bool, errors: list[str]) -> None:
    def job() -> None:
        _VAR.set(_VAR.get(0) + 1)
        if wait:
            with _GATE:
                pass

    try:
        CTX.run(job)
    except RuntimeError as e:  # ("cannot enter context: ... is already entered")
        errors.append(str(e))


def context_at_import() -> int:
    """u05 (BUGGY): two threads ``run`` the context made at import, the first blocked inside on a
    gate main releases after starting both: how many got ``RuntimeError``."""
    errors: list[str] = []
    _GATE.acquire()
    start_then_release(_GATE, partial(_enter, True, errors), partial(_enter, False, errors))
    return len(errors)


def context_at_import_counted() -> int:
    """One thread ``run``s the context made at import twice: the variable it counts in it, as a
    real run (a first run) sees it: 2 in every execution."""

    def twice() -> None:
        errors: list[str] = []
        _enter(False, errors)
        _enter(False, errors)

    start_and_join(twice)
    return CTX[_VAR]
