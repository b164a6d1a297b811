"""Forking in a controlled thread: refused by name, before the child exists.

A child forked from a controlled thread is a copy of the checker in the middle of an execution:
it inherits the patched ``threading`` (CPython's at-fork hooks then failed on the stand-ins,
``'_MainThread' object has no attribute '_set_native_id'``), its ``os._exit`` was the patched one,
so the child went on as the checker and printed verdicts of its own, and the parent waited for
it, or hung (review 9: ``os.fork()`` s08, ``multiprocessing.Process`` with the "fork" start
method s16, ``ProcessPoolExecutor`` s07). The explorer schedules threads, not processes, so
``os.fork``/``os.forkpty`` in a controlled thread, and making a ``ProcessPoolExecutor`` there
(its queues and manager thread wait on the worker processes), raise a ``UsageError`` saying what
to use instead; so does ``multiprocessing``'s ``Process.start`` whatever its start method.
``subprocess`` (``fork_exec``/``posix_spawn``: the child runs another program at
once) is not refused; its waits are ``patch_io_outside``'s.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from model_checks.harness.patch_either import either
from model_checks.harness.rt.scheduler import UsageError

FORK = (
    "{call} in a controlled thread: the child would be a copy of the checker in the middle of an "
    "execution (the patched threading, the explorer's state), which lanecheck cannot run or "
    "schedule (multiprocessing's 'fork' start method and ProcessPoolExecutor fork too): run "
    "another program with subprocess, use threads (concurrent.futures.ThreadPoolExecutor), or "
    "fork outside the explored function"
)
POOL = (
    "concurrent.futures.ProcessPoolExecutor in a controlled thread: its worker processes are forked "
    "or spawned copies of the checker, and its queues and manager thread wait on them, which "
    "lanecheck cannot schedule (the check would hang): use concurrent.futures.ThreadPoolExecutor "
    "in the explored code, or subprocess to run another program"
)


def _refusing(name: str) -> tuple[Any, str, Any, Any]:
    def refuse(rt: object, *args: Any, **kwargs: Any) -> Any:
        raise UsageError(FORK.format(call=f"os.{name}()"))

    return either(os, name, refuse)


# (module, name, real, patched), as ``patch._REPLACEMENTS``
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    _refusing(name) for name in ("fork", "forkpty") if hasattr(os, name)
]


PROCESS = (
    "multiprocessing's Process.start() in a controlled thread: the child is a copy of the checker "
    "(forked, or spawned to import the program again, as the spawn and forkserver methods do), "
    "which lanecheck cannot run or schedule: run another program with subprocess, or use threads"
)


def at_patching() -> list[tuple[Any, str, Any, Any]]:
    """``multiprocessing``'s ``Process.start`` (any start method: spawning failed too, on the
    resource tracker's stood-in lock) and ``ProcessPoolExecutor``, where the program imported them."""
    found = []
    process = sys.modules.get("multiprocessing.process")
    if process is not None:

        def refuse_start(rt: object, *args: Any, **kwargs: Any) -> Any:
            raise UsageError(PROCESS)

        found.append(either(process.BaseProcess, "start", refuse_start))
    module = sys.modules.get("concurrent.futures.process")
    if module is None:
        return found

    def refuse(rt: object, *args: Any, **kwargs: Any) -> Any:
        raise UsageError(POOL)

    found.append(either(module, "ProcessPoolExecutor", refuse))
    package = sys.modules.get("concurrent.futures")
    if package is not None and "ProcessPoolExecutor" in vars(package):  # (its lazy import keeps it)
        found.append(either(package, "ProcessPoolExecutor", refuse))
    return found
