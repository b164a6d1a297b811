"""The process's facilities a thread reaches for, in patch mode: signals and trace hooks.

On the greenlet back end every controlled thread runs on the process's main OS thread, so
CPython's own checks see the main thread everywhere: ``signal.signal`` in a worker, which CPython
refuses (``ValueError``), went through, and a program that fails on every real run was proved. A
trace or profile function the program sets (``sys.settrace``, ``threading.setprofile``) replaced
the race detector's, or was never run in a controlled thread: refused by name in explored code.
And ``os._exit`` in explored code ended lanecheck itself, silently, with the program's status (3
reads as "bounded"): it is the thread's failure, ``ProcessExit`` (seventh review, session 39).
Outside a controlled thread, and for the harness's own calls, each is CPython's. Since session 40
also (each in a module of its own): a signal sent to the process runs its handler in the main
controlled thread (``patch_signals``; ``pthread_kill`` of a controlled thread was refused by
name), a blocking read or write of a socket or a pipe is a controlled wait (``patch_io``; it hung
the check), ``sqlite3``'s thread check and ``asyncio``'s current loop are per controlled thread
(``patch_identity``), and ``redirect_stdout`` is process-wide (``patch_streams``)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import ModuleType
from typing import Any

from model_checks.harness import (
    patch_children,
    patch_context,
    patch_descriptors,
    patch_flock,
    patch_fork,
    patch_identity,
    patch_io,
    patch_io_outside,
    patch_io_waits,
    patch_mock,
    patch_mp_sync,
    patch_numpy_random,
    patch_shared,
    patch_signals,
    patch_sigwait,
    patch_state,
    patch_streams,
    patch_tz,
    patch_warnings,
    race_stats,
)
from model_checks.harness.own_code import own
from model_checks.harness.patch_signals import ProcessExit
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.rt.scheduler import UsageError

_real_signal = signal.signal


def _signal(signalnum: Any, handler: Any) -> Any:
    rt = _controlled()
    if rt is not None and rt._ex.running_thread() not in (None, 0):
        raise ValueError("signal only works in main thread of the main interpreter")
    if rt is not None and signalnum not in patch_state.SIGNALS:
        # (put back when the execution ends: the next one starts with the handler it found)
        patch_state.SIGNALS[signalnum] = signal.getsignal(signalnum)
    return _real_signal(signalnum, handler)


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
# a signal sent to the process itself: its handler runs in the main thread (``patch_signals``)
REPLACEMENTS += patch_signals.REPLACEMENTS
# per-thread signal masks, sigpending, the sigwait family (``patch_sigwait``)
REPLACEMENTS += patch_sigwait.REPLACEMENTS
# a blocking read or write of a socket or a pipe: a controlled wait (``patch_io``)
REPLACEMENTS += patch_io.REPLACEMENTS
# poll/epoll waits, a FIFO's open refused (``patch_io_waits``)
REPLACEMENTS += patch_io_waits.REPLACEMENTS
# a child's exit waited for in real time (``patch_io_outside``); a fork refused (``patch_fork``)
REPLACEMENTS += patch_io_outside.REPLACEMENTS
# the child's pipes in ``communicate``: read and written with no operation (``patch_children``)
REPLACEMENTS += patch_children.REPLACEMENTS
REPLACEMENTS += patch_fork.REPLACEMENTS
# the descriptor table's entries written by dup2 and close (the race detector's: ``patch_descriptors``)
REPLACEMENTS += patch_descriptors.REPLACEMENTS
# ``fcntl.flock`` between controlled threads: a controlled lock of the file (``patch_flock``)
REPLACEMENTS += patch_flock.REPLACEMENTS
# a look at a regular file's size or times: a read of the file (``race_stats``)
REPLACEMENTS += race_stats.REPLACEMENTS


def at_patching(modules: tuple[ModuleType, ...]) -> list[tuple[Any, str, Any, Any]]:
    """What is replaced only if the program uses it when patching begins (``patch_identity``:
    ``sqlite3``'s thread check, ``asyncio``'s current loop per thread; ``patch_streams``:
    ``redirect_stdout`` is process-wide, where ``modules`` name it, or assign ``sys.stdout``;
    ``patch_shared``: the working directory and the recursion limit, where they name their
    setters, and ``patch_context``, ``patch_tz``, ``patch_warnings``: a context's entered flag, the
    time zone, the warnings' filters, alike; ``patch_numpy_random``: numpy's global generator,
    where the program imported numpy; ``patch_io_waits``: ``multiprocessing``'s
    connections, where it is imported;
    ``patch_fork``: ``ProcessPoolExecutor``; ``patch_mp_sync``: ``multiprocessing``'s locks)."""
    return [
        *patch_identity.at_patching(),
        *patch_streams.at_patching(modules),
        *patch_shared.at_patching(modules),
        *patch_context.at_patching(modules),
        *patch_tz.at_patching(modules),
        *patch_warnings.at_patching(modules),
        *patch_numpy_random.at_patching(modules),
        *patch_io_waits.at_patching(),
        *patch_fork.at_patching(),
        *patch_mp_sync.at_patching(),
        *patch_mock.at_patching(),  # mock's patches: writes of what they patch (race detector)
    ]
