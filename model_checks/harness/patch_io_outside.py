"""A wait for another process (a child's pipe, a child's exit): a real-time wait, bounded by the
check's time limit, never a deadlock.

``patch_io`` parks a controlled thread whose descriptor is not ready and calls the wait a deadlock
when no controlled thread can end it, after ``GRACE`` (0.5 s) of real time: a worker's
``os.read`` of a child process's stdout that answered after 1 s was a false "deadlock" (review 9,
s41). And readiness polled at every step came out at other steps in other executions, as did the
number of ``time.sleep`` rounds of ``Popen.wait(timeout)`` (its clock is the real one, bound at
import), so ``subprocess.run(..., timeout=30)`` was "the test is not deterministic" (s12).

Here a wait on pipes whose other ends no descriptor of this process holds (``outside``: only
another process can write to them, or close them, which makes them readable) is a real wait, made
in the waiting thread's step, as a real run makes it: the other process needs no controlled thread
to go on. It is bounded by the program's own timeout (real seconds) and by what is left of the
check's ``time_limit``; when that runs out first the execution is abandoned (its thread never
goes on) and the verdict is "bounded", naming the wait, never "deadlock". ``Popen.wait`` of a live
child is such a wait too, on its pidfd. A pipe whose other end this process holds is ``patch_io``'s
controlled wait, as before (a deadlock when only a controlled thread could write).
"""

from __future__ import annotations

import fcntl
import os
import select
import stat
import subprocess
import time
from collections.abc import Iterable
from typing import Any, Final

from model_checks.harness.patch_threads import _controlled
from model_checks.harness.rt.objects import EventState, Op
from model_checks.harness.runtime import ControlledRuntime

CHECK_ENDS: list[float | None] = [None]  # ``perf_counter()`` when the running check's time runs out
LIMIT: list[float | None] = [None]
_real_select: Final = select.select
_real_clock: Final = time.perf_counter  # (patched, it reads the virtual clock in a controlled thread)


def new_check(time_limit: float | None) -> None:
    """A check begins (``execution.resolved``): its real-time waits end with its time limit."""
    LIMIT[0] = time_limit
    CHECK_ENDS[0] = None if time_limit is None else _real_clock() + time_limit


def _pipe_id(fd: int) -> tuple[int, int] | None:
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISFIFO(st.st_mode) else None


def outside(want: Iterable[tuple[int, str]]) -> bool:
    """Is each of ``want`` (descriptor, "r" or "w") a pipe (or FIFO) whose other end, the end that
    would make it ready, no descriptor of this process holds?"""
    needed: dict[tuple[int, int], set[int]] = {}  # pipe: the access modes that would make it ready
    own = set()
    for fd, mode in want:
        pipe = _pipe_id(fd)
        if pipe is None:
            return False
        needed.setdefault(pipe, set()).add(os.O_WRONLY if mode == "r" else os.O_RDONLY)
        own.add(fd)
    if not needed:
        return False
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return False  # (no /proc: patch_io's controlled wait, as before)
    for fd in fds:
        pipe = _pipe_id(fd)
        if pipe is None or pipe not in needed:
            continue
        try:
            access = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
        except OSError:
            continue
        if access == os.O_RDWR or (access in needed[pipe] and fd not in own):
            return False
    return True


def _ready(want: Iterable[tuple[int, str]], timeout: float | None) -> bool:
    reads = [fd for fd, mode in want if mode == "r"]
    writes = [fd for fd, mode in want if mode == "w"]
    try:
        r, w, _ = _real_select(reads, writes, [], timeout)
    except (OSError, ValueError):  # a descriptor closed meanwhile: its call raises, as for real
        return True
    return bool(r or w)


def real_time_wait(
    rt: ControlledRuntime, want: Iterable[tuple[int, str]], what: str, timeout: float | None
) -> bool:
    """Wait in real time until one of ``want`` is ready (True), or ``timeout`` real seconds pass
    (False). If the check's time limit passes first, the execution is abandoned: its verdict is
    "bounded" by this wait, and the calling thread never goes on."""
    want = list(want)
    ends = CHECK_ENDS[0]
    left = None if ends is None else max(ends - _real_clock(), 0.0)
    bound = timeout if left is None else (left if timeout is None else min(timeout, left))
    if _ready(want, None if bound is None else max(bound, 0.0)):
        return True
    if left is None or (timeout is not None and timeout <= left):
        return False  # (the program's timeout)
    fds = ", ".join(str(fd) for fd in sorted({fd for fd, _ in want}))
    abandon(rt, f"{what} on file descriptor {fds}")
    return False  # (never reached)


def abandon(rt: ControlledRuntime, what: str) -> None:
    """The check's time limit ran out in a real-time wait for another process: the execution is
    abandoned (no verdict of its own, no deadlock), the calling thread parked for good."""
    ex = rt._ex
    ex.abandoned = True
    ex.limit_cut.add(f"time_limit={LIMIT[0]:g}s reached in a real-time wait for another process ({what})")
    made = ex.new_object(lambda oid: EventState(oid, "another process (past the time limit)"))
    assert isinstance(made, EventState)
    ex.perform(Op("wait", made, ()))  # never enabled: teardown unwinds it


_real_popen_wait = subprocess.Popen._wait  # type: ignore[attr-defined]


def _popen_wait(self: Any, timeout: float | None) -> Any:
    """``Popen.wait`` in a controlled thread: a real-time wait for the child's exit (on its pidfd),
    then CPython's, which reaps it at once. (Its own loop sleeps, on the virtual clock, until
    its real clock passes: how many rounds was real timing.)"""
    rt = _controlled()
    if rt is None or self.returncode is not None or not hasattr(os, "pidfd_open"):
        return _real_popen_wait(self, timeout)
    try:
        pidfd = os.pidfd_open(self.pid)
    except OSError:  # (reaped already, by another wait)
        return _real_popen_wait(self, timeout)
    try:
        if not real_time_wait(rt, [(pidfd, "r")], f"Popen.wait() of process {self.pid}", timeout):
            raise subprocess.TimeoutExpired(self.args, timeout)  # type: ignore[arg-type]
    finally:
        os.close(pidfd)
    return _real_popen_wait(self, None if timeout is None else max(timeout, 0.0))


# (class, name, real, patched), as ``patch._REPLACEMENTS``
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [(subprocess.Popen, "_wait", _real_popen_wait, _popen_wait)]
