"""What CPython keeps per OS thread, which the greenlet back end's controlled threads share: the
thread's CPU time and ``ctypes``' private errno (review 9: a worker that only slept read 0.2 s
of another thread's CPU time from ``time.thread_time()``; one thread's ``ctypes.set_errno`` was
read back by the other's ``get_errno``).

Once a check's code reads a thread CPU clock (``time.thread_time``, ``thread_time_ns``,
``clock_gettime(CLOCK_THREAD_CPUTIME_ID)``, ``resource.getrusage(RUSAGE_THREAD)``) or ctypes'
errno in a controlled thread, every switch between greenlets of its executions is traced
(``greenlet.settrace``, from that use on, then from each later execution's start): the real CPU
time the OS thread spent since the last switch is charged to the controlled thread that ran,
and ctypes' errno is saved for the thread switched from and given back to the one switched to
(a worker's starts at 0, as a new OS thread's). A controlled thread's CPU clock is the CPU time
consumed while it ran (a worker's starts at 0; the main thread's at the OS thread's when the
tracing began): it never advances on another thread's work nor while it sleeps or waits.
``getrusage(RUSAGE_THREAD)``'s ``ru_utime`` and ``ru_stime`` split that time in the OS thread's
proportion; its other fields are the OS thread's. On the threads back end (each controlled
thread its own OS thread) CPython's own are used. Not done: the time before the first such use
in a check's first execution is charged to no thread; ``time.pthread_getcpuclockid``.

The OS thread's trace and profile functions are the harness's in a controlled thread (the race
detector's tracer, the file-lock watch): ``sys.gettrace()`` and ``sys.getprofile()`` there give
what a real run's thread would, None (a program cannot set its own: ``patch_process``), as code
that turns its timeouts off "under a debugger" decides by them (review 13's F7: p198's timeout
was off in every execution, and its real run's failure proved absent). A trace function the
harness did not set (a debugger's, coverage's around the check) is given as it is.

``ctypes.pythonapi.PyThreadState_SetAsyncExc(ident, exc)`` of a controlled thread is refused by
name: the ident is the explorer's, which CPython knows no thread by (it returned 0, "no thread",
and a program stopping its worker so failed: review 13's A5); an ident of no controlled thread
goes to CPython.
"""

from __future__ import annotations

import ctypes
import sys
import time
from collections.abc import Callable
from typing import Any

import greenlet

from model_checks.harness import thread_idents
from model_checks.harness.own_code import own
from model_checks.harness.patch_either import either, replacing
from model_checks.harness.patch_threads import ON_EXECUTION, _controlled
from model_checks.harness.rt.scheduler import UsageError
from model_checks.harness.runtime import ControlledRuntime

try:
    import resource
except ImportError:  # (not on this platform: nothing to replace)
    resource = None  # type: ignore[assignment]

CPU_CLOCK: int | None = getattr(time, "CLOCK_THREAD_CPUTIME_ID", None)
_real_cpu_ns = time.thread_time_ns
_real_get_errno = ctypes.get_errno
_real_set_errno = ctypes.set_errno
_USED = [False]  # the running check's code read a per-thread value: trace its executions


class _Tracking:
    """One execution's per-thread CPU times and errno values, kept up at each greenlet switch."""

    def __init__(self, rt: ControlledRuntime) -> None:
        self.ex = rt._ex
        self.ids: dict[Any, int] = rt._ex.backend.ids
        self.mark = _real_cpu_ns()
        self.base = {0: self.mark}  # the main thread's clock goes on from the OS thread's
        self.cpu: dict[int, int] = {}
        self.driver_errno = _real_get_errno()
        self.errno: dict[int, int] = {0: self.driver_errno}
        running = rt._ex.running_thread()
        if running is not None:
            self.errno[running] = self.driver_errno
        self.previous: Callable[[str, Any], object] | None = greenlet.settrace(self._switch)

    def _tid(self, glet: Any) -> int | None:
        found = self.ids.get(glet)
        # (a signal handler's greenlet stands for the main thread: ``patch_signals._Handlers``)
        return found if found is not None else self.ids.get(getattr(glet, "real", None))

    def _switch(self, event: str, args: Any) -> None:
        if event in ("switch", "throw"):
            origin, target = args
            now = _real_cpu_ns()
            left = self._tid(origin)
            if left is not None:
                self.cpu[left] = self.cpu.get(left, 0) + now - self.mark
                self.errno[left] = _real_get_errno()
            entered = self._tid(target)
            _real_set_errno(self.driver_errno if entered is None else self.errno.get(entered, 0))
            self.mark = now
        if self.previous is not None:
            self.previous(event, args)

    def cpu_ns(self, tid: int) -> int:
        """``tid``'s CPU time, read by ``tid`` itself (running since the last switch)."""
        return self.base.get(tid, 0) + self.cpu.get(tid, 0) + _real_cpu_ns() - self.mark

    def stop(self) -> None:
        greenlet.settrace(self.previous)
        _real_set_errno(self.driver_errno)


_TRACKING: list[_Tracking | None] = [None]


def _on_execution(rt: ControlledRuntime | None) -> None:
    """An execution begins (``rt``) or ends (None): its switches are traced if the check used them."""
    tracking = _TRACKING[0]
    if tracking is not None:
        _TRACKING[0] = None
        tracking.stop()
    if rt is not None and _USED[0]:
        _tracked(rt)


ON_EXECUTION.append(_on_execution)
ON_EXECUTION.append(thread_idents.on_execution)  # (a finished worker's ident is given again)


def new_check() -> None:
    _USED[0] = False


def _tracked(rt: ControlledRuntime) -> _Tracking | None:
    """The running execution's tracking, begun now if it was not (None on the threads back end,
    whose controlled threads are OS threads)."""
    if getattr(rt._ex.backend, "direct", None) is None:
        return None
    _USED[0] = True
    tracking = _TRACKING[0]
    if tracking is None or tracking.ex is not rt._ex:
        if tracking is not None:
            tracking.stop()
        tracking = _TRACKING[0] = _Tracking(rt)
    return tracking


def cpu_ns(rt: ControlledRuntime) -> int:
    """The running controlled thread's CPU time in ns (``patch_clock``'s ``clock_gettime``)."""
    tracking = _tracked(rt)
    tid = rt._ex.running_thread()
    if tracking is None or tid is None:
        return _real_cpu_ns()
    return tracking.cpu_ns(tid)


def _getrusage(rt: ControlledRuntime, who: int) -> Any:
    real = _real_getrusage(who)
    if who != getattr(resource, "RUSAGE_THREAD", None) or _tracked(rt) is None:
        return real
    total = real.ru_utime + real.ru_stime
    share = min(cpu_ns(rt) / 1e9 / total, 1.0) if total > 0 else 0.0
    return resource.struct_rusage((real.ru_utime * share, real.ru_stime * share, *real[2:]))


def _get_errno(rt: ControlledRuntime) -> int:
    _tracked(rt)
    return _real_get_errno()


def _set_errno(rt: ControlledRuntime, value: int) -> int:
    _tracked(rt)
    return _real_set_errno(value)


def _seen(real: Callable[[], object]) -> Callable[[], object]:
    """``sys.gettrace`` or ``getprofile`` (``real``) as the program's code in a controlled thread
    sees it (``_programs_hook``); the harness's own code (a check run inside a controlled thread
    saves and restores the tracer: ``execution.py``) gets the real one."""

    def replacement() -> object:
        if _controlled() is None or own(sys._getframe(1).f_code.co_filename):
            return real()
        return _programs_hook(real())

    return replacement


def _programs_hook(hook: object) -> object:
    """``hook``, the OS thread's trace or profile function, as the program would see it: None
    where it is the harness's (a function of its code, or an object of its C extensions)."""
    func = getattr(hook, "__func__", hook)
    code = getattr(func, "__code__", None)
    if code is not None and own(code.co_filename):
        return None
    if type(hook).__module__.startswith("model_checks."):
        return None
    return hook


_real_gettrace = sys.gettrace
_real_getprofile = sys.getprofile
_PYTHONAPI: Any = getattr(ctypes, "pythonapi", None)
_real_async_exc: Any = getattr(_PYTHONAPI, "PyThreadState_SetAsyncExc", None)
ASYNC_EXC = (
    "ctypes.pythonapi.PyThreadState_SetAsyncExc({ident}, ...) of the explored code's thread "
    "{name}: its ident is the explorer's, no thread CPython knows (an exception raised in a thread "
    "from another is not modelled)"
)


def _set_async_exc(ident: Any, exc: Any) -> Any:
    rt = _controlled()
    number = getattr(ident, "value", ident)
    tid = thread_idents.thread_of(number) if rt is not None and isinstance(number, int) else None
    if rt is None or tid is None or tid >= len(rt._ex.threads):
        return _real_async_exc(ident, exc)
    raise UsageError(ASYNC_EXC.format(ident=number, name=rt._ex.threads[tid].name))


_real_getrusage: Any = getattr(resource, "getrusage", None)

REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    either(time, "thread_time", lambda rt: cpu_ns(rt) / 1e9),
    either(time, "thread_time_ns", cpu_ns),
    either(ctypes, "get_errno", _get_errno),
    either(ctypes, "set_errno", _set_errno),
    *([either(resource, "getrusage", _getrusage)] if _real_getrusage is not None else []),
    *replacing(sys, {"gettrace": _seen(_real_gettrace), "getprofile": _seen(_real_getprofile)}),
    *(
        [(_PYTHONAPI, "PyThreadState_SetAsyncExc", _real_async_exc, _set_async_exc)]
        if _real_async_exc
        else []
    ),
]
