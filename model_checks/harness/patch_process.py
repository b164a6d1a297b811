"""The process's facilities a thread reaches for, in patch mode: signals and trace hooks.

On the greenlet back end every controlled thread runs on the process's main OS thread, so
CPython's own checks see the main thread everywhere: ``signal.signal`` in a worker, which CPython
refuses (``ValueError``), went through, and a program that fails on every real run was proved. A
controlled thread's ident (``get_ident``) is the explorer's, no OS thread's: ``signal.pthread_kill``
given one sent the signal to whatever thread the C library took it for (a crash). A trace or
profile function the program sets (``sys.settrace``, ``threading.setprofile``) replaced the race
detector's, or was never run in a controlled thread: refused by name in explored code. And
``os._exit`` in explored code ended lanecheck itself, silently, with the program's status (3 reads
as "bounded"): it is the thread's failure, ``ProcessExit`` (seventh review, session 39). Outside a
controlled thread, and for the harness's own calls, each is CPython's."""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

from model_checks.harness.own_code import own
from model_checks.harness.patch_threads import IDENT_BASE, _controlled
from model_checks.harness.rt.scheduler import UsageError

_real_signal = signal.signal
_real_pthread_kill = getattr(signal, "pthread_kill", None)


def _signal(signalnum: Any, handler: Any) -> Any:
    rt = _controlled()
    if rt is not None and rt._ex.running_thread() not in (None, 0):
        raise ValueError("signal only works in main thread of the main interpreter")
    return _real_signal(signalnum, handler)


def _pthread_kill(thread_id: int, signalnum: int) -> None:
    if _controlled() is not None and thread_id >= IDENT_BASE:
        raise UsageError(
            f"signal.pthread_kill({thread_id}, ...) names a controlled thread: its ident is the "
            "explorer's, no OS thread's, so no signal can reach it (send signals from outside "
            "the explored code)"
        )
    assert _real_pthread_kill is not None
    _real_pthread_kill(thread_id, signalnum)


def _hook_refused(module: Any, name: str) -> tuple[Any, str, Any, Any]:
    real = getattr(module, name)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        if _controlled() is None or own(sys._getframe(1).f_code.co_filename):
            return real(*args, **kwargs)
        raise UsageError(
            f"{module.__name__}.{name}() in the explored code: the controlled threads share OS "
            "threads, whose trace function is the race detector's, so a trace or profile "
            "function of the program's would replace it or never run in them (check the program "
            "without it)"
        )

    refuse.__name__ = refuse.__qualname__ = name
    return module, name, real, refuse


class ProcessExit(Exception):
    """The explored code called ``os._exit``: a real run ends there, every thread with it."""


_real_exit = os._exit


def _exit(status: int) -> None:
    if _controlled() is None or own(sys._getframe(1).f_code.co_filename):
        _real_exit(status)
    raise ProcessExit(f"os._exit({status}): a real run ends the process here, every thread with it")


# (module, name, real, patched), as ``patch._REPLACEMENTS``
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    (signal, "signal", _real_signal, _signal),
    (os, "_exit", _real_exit, _exit),
    *(_hook_refused(sys, name) for name in ("settrace", "setprofile")),
    *(_hook_refused(threading, name) for name in ("settrace", "setprofile")),
]
if _real_pthread_kill is not None:
    REPLACEMENTS.append((signal, "pthread_kill", _real_pthread_kill, _pthread_kill))
