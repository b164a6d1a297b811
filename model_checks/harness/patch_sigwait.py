"""``signal.pthread_sigmask``, ``sigpending`` and the ``sigwait`` family in a controlled thread,
over the model of ``signal_masks`` (review 8's r085: a worker's ``sigwait`` for a signal every
thread blocks, ``pthread_kill`` of it from main, was the default action: "ProcessExit").

The mask is the controlled thread's own (never the OS thread's, which every controlled thread of
the greenlet back end shares with lanecheck). A mask change and a wait's take of a signal are
operations on the process's signals, as the sends are. ``sigwait`` is a controlled wait for a
signal of its set pending for the thread or the process (the lowest first, the thread's own
first); a handler does not interrupt it (glibc's ``sigwait`` goes on after ``EINTR``), while
``sigwaitinfo`` and ``sigtimedwait`` run the main thread's handlers and go on (PEP 475).
``sigwaitinfo``'s ``struct_siginfo`` is Linux's: ``si_code`` ``SI_USER`` for ``os.kill``,
``SI_TKILL`` for a signal sent to the thread, ``si_pid``/``si_uid`` lanecheck's process's.
"""

from __future__ import annotations

import errno
import os
import signal
from collections.abc import Iterable
from typing import Any

from model_checks.harness import signal_wakeup
from model_checks.harness.patch_either import replacing
from model_checks.harness.patch_signals import _main_objects, _pending, deliver
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.rt.objects import Op
from model_checks.harness.rt.scheduler import UsageError
from model_checks.harness.runtime import ControlledRuntime

_SI_USER = 0
_SI_TKILL = -6  # (Linux's, for tgkill: pthread_kill and raise)
_NSIG = getattr(signal, "NSIG", 65)


def _sigset(signals: Iterable[int]) -> frozenset[int]:
    """CPython's conversion of an iterable of signals, with its words."""
    found: set[int] = set()
    for item in signals:
        signum = int(item)
        if not 1 <= signum < _NSIG:
            raise ValueError(f"signal number {signum} out of range [1; {_NSIG - 1}]")
        found.add(signum)
    return frozenset(found)


def _enums(signals: Iterable[int]) -> set[Any]:
    out: set[Any] = set()
    for signum in signals:
        try:
            out.add(signal.Signals(signum))
        except ValueError:
            out.add(signum)
    return out


def _touch(rt: ControlledRuntime, call: str, unblocks: bool = False) -> None:
    pending = _pending(rt)
    # a mask change that may deliver a pending signal is dependent with the main thread's steps
    # as a send is (``patch_signals._send``: where the handler runs depends on it)
    objs = pending.state.own | _main_objects(rt._ex) if unblocks else None
    rt._ex.perform(Op("store", pending.state, (call,), objs=objs))
    pending.masks.note()  # (the store wrote the call over the model's state)


def _pthread_sigmask(how: int, mask: Iterable[int]) -> set[Any]:
    rt = _controlled()
    if rt is None:
        return _real_sigmask(how, mask)  # type: ignore[no-any-return]
    wanted = _sigset(mask)
    if how not in (signal.SIG_BLOCK, signal.SIG_UNBLOCK, signal.SIG_SETMASK):
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
    call = f"signal.pthread_sigmask({how}, {sorted(wanted)})"
    _touch(rt, call, unblocks=how != signal.SIG_BLOCK)
    tid = rt._ex.running_thread()
    assert tid is not None
    masks = _pending(rt).masks
    old = masks.mask(tid)
    new = old | wanted if how == signal.SIG_BLOCK else old - wanted if how == signal.SIG_UNBLOCK else wanted
    for signum in masks.set_mask(tid, new):  # (a pending signal it unblocks is delivered to it now)
        deliver(rt, signum, tid, call)
    return _enums(old)


def _sigpending() -> set[Any]:
    rt = _controlled()
    if rt is None:
        return _real_sigpending()  # type: ignore[no-any-return]
    _touch(rt, "signal.sigpending()")
    tid = rt._ex.running_thread()
    assert tid is not None
    return _enums(_pending(rt).masks.pending_for(tid))


def _wait(
    rt: ControlledRuntime, sigset: Iterable[int], call: str, timeout: float | None
) -> tuple[int, int] | None:
    """Wait for a signal of ``sigset``: (it, its ``si_code``), None when ``timeout`` passed."""
    wanted = _sigset(sigset)
    _touch(rt, call)
    ex = rt._ex
    tid = ex.running_thread()
    assert tid is not None
    pending = _pending(rt)
    masks = pending.masks
    while True:
        got = masks.take(tid, wanted)
        if got is not None:
            return got[0], _SI_TKILL if got[1] else _SI_USER
        event = masks.event(tid, wanted, call.split("(")[0])
        event.flag = False
        masks.waiting[tid] = wanted
        if call.startswith("signal.sigwait("):
            masks.plain_sigwait.add(tid)
        masks.note()
        try:
            op = Op("wait", event, (), timeout=timeout, objs=event.own | pending.state.own)
            came = ex.perform(op)
        finally:
            masks.waiting.pop(tid, None)
            masks.plain_sigwait.discard(tid)
            masks.note()
        if not came:
            return None


def _wait_untimed(rt: ControlledRuntime, sigset: Iterable[int], call: str) -> tuple[int, int]:
    """``_wait`` with no timeout, which returns only with a signal."""
    got = _wait(rt, sigset, call, None)
    assert got is not None
    return got


def _sigwait(sigset: Iterable[int]) -> Any:
    rt = _controlled()
    if rt is None:
        return _real_sigwait(sigset)
    return _enums([_wait_untimed(rt, sigset, "signal.sigwait()")[0]]).pop()


def _siginfo(got: tuple[int, int]) -> Any:
    pid, uid = os.getpid(), os.getuid()
    # (``si_band`` shares the kernel's union with ``si_pid`` and ``si_uid``: CPython reads it so)
    return signal.struct_siginfo((got[0], got[1], 0, pid, uid, 0, pid | (uid << 32)))


def _sigwaitinfo(sigset: Iterable[int]) -> Any:
    rt = _controlled()
    if rt is None:
        return _real_sigwaitinfo(sigset)
    return _siginfo(_wait_untimed(rt, sigset, "signal.sigwaitinfo()"))


def _sigtimedwait(sigset: Iterable[int], timeout: float) -> Any:
    rt = _controlled()
    if rt is None:
        return _real_sigtimedwait(sigset, timeout)
    seconds = float(timeout)
    if seconds < 0:
        raise ValueError("timeout must be non-negative")
    got = _wait(rt, sigset, "signal.sigtimedwait()", seconds)
    return None if got is None else _siginfo(got)


def _pause() -> None:
    if _controlled() is not None:
        raise UsageError(
            "signal.pause() in a controlled thread: it returns once a signal's C handler ran in "
            "this OS thread, which lanecheck's controlled threads share (not modelled)"
        )
    _real_pause()


def _set_wakeup_fd(fd: int, /, *, warn_on_full_buffer: bool = True) -> int:
    rt = _controlled()
    if rt is not None and rt._ex.running_thread() not in (None, 0):
        # CPython's check, first (any fd): every controlled thread runs on the main OS thread,
        # so CPython's own passed in a worker (the ninth review's s30, failing every real run)
        raise ValueError("set_wakeup_fd only works in main thread of the main interpreter")
    if rt is not None:
        if getattr(rt._ex.backend, "direct", None) is None:
            raise UsageError(
                "signal.set_wakeup_fd() in the explored code on the threads back end: the main "
                "controlled thread is not the process's main thread there (use the greenlet back end)"
            )
        # (a modelled signal's byte is written at its delivery: ``signal_wakeup``)
        return signal_wakeup.set_fd(fd, warn_on_full_buffer)
    return int(_real_set_wakeup_fd(fd, warn_on_full_buffer=warn_on_full_buffer))


_real_pause: Any = getattr(signal, "pause", None)
_real_set_wakeup_fd: Any = signal.set_wakeup_fd
_real_sigmask: Any = getattr(signal, "pthread_sigmask", None)
_real_sigpending: Any = getattr(signal, "sigpending", None)
_real_sigwait: Any = getattr(signal, "sigwait", None)
_real_sigwaitinfo: Any = getattr(signal, "sigwaitinfo", None)
_real_sigtimedwait: Any = getattr(signal, "sigtimedwait", None)

REPLACEMENTS = replacing(
    signal,
    {
        "pthread_sigmask": _pthread_sigmask,
        "sigpending": _sigpending,
        "sigwait": _sigwait,
        "sigwaitinfo": _sigwaitinfo,
        "sigtimedwait": _sigtimedwait,
        "pause": _pause,
        "set_wakeup_fd": _set_wakeup_fd,
    },
)
