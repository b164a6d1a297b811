"""``fcntl.flock`` between controlled threads: a controlled lock of the file.

A ``flock`` lock belongs to the open file description, so two threads of one process that each
open the lock file do exclude each other: a correct program. Made for real in a controlled
thread, the second thread's blocking ``flock`` blocked the one OS thread the controlled threads
share, the holder with it, for ever (and the check held the real lock meanwhile, so other
processes waited too); without ``--interleave-races`` the race detector stopped first, with a
false data race, since ``flock`` gave no happens-before (eleventh review, #16).

Here, in a controlled thread, ``flock(f, LOCK_SH | LOCK_EX [| LOCK_NB])`` and ``flock(f, LOCK_UN)``
are operations on one controlled lock per file (device and inode): shared holders or one exclusive
holder, each a descriptor standing for its open file description. A lock not free is a controlled
wait (a deadlock of two ``flock`` waits is reported as one), or ``BlockingIOError`` with
``LOCK_NB``, as the real call raises; taking it acquires what its releases published, as a
``Lock``'s acquire does. The real lock is not taken: the check's threads exclude one another in the
model, not other processes. A holder lets go at ``LOCK_UN``, at ``os.close`` of its descriptor (the
last one of its open file description: below), and
when its file object is closed (``f.close()``, the end of ``with open(...)``: seen by a profile
function set while some descriptor holds a ``flock``, which performs the operation just before the
close, its tracing guard lowered meanwhile as the race tracer does), each an operation; or when
found closed after a step (a close the profile function does not see: a ``with`` left by an
exception, a file dropped unclosed, its number given out again by ``open``/``os.open``): then the
lock is free from then on, but that release is no operation: it orders nothing for the race
detector (a race with the holder's accesses may then be reported), and DPOR may explore a
``LOCK_NB`` try racing with it in one order only (``dfs`` explores both). A descriptor made by
``os.dup`` (or inherited) shares its open file description, and Linux's lock is the description's
(checked with real runs, twelfth review f02): a ``flock`` through a duplicate of the holder's is the
holder's own (taken at once, or converted), ``LOCK_UN`` through either lets go, and closing one of
them lets go of nothing while another is open (``kcmp(KCMP_FILE)`` says which descriptors share a
description, or where it is refused their shared offset; before, each descriptor was a holder of
its own: a ``flock`` through a duplicate waited for the holder, a deadlock no real run has). A holder
closed unseen is held on by a duplicate that was open at its ``flock``. A conversion
(``LOCK_SH`` to ``LOCK_EX`` or back) lets go of the lock held first, as Linux's does.
``fcntl.lockf`` and ``fcntl.fcntl(F_SETLK...)`` (POSIX record locks, the process's: they do not
exclude its threads) stay real calls: one thread's never waits for another's, so a blocking one
waits only for another process.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import platform
import sys
from typing import Any, cast

from model_checks.harness.patch_threads import _controlled
from model_checks.harness.per_execution import per_execution
from model_checks.harness.race_files import FILE_TYPES
from model_checks.harness.race_frames import _TRACING, _TRACING_WHAT, SUPPORTED, _thread_state
from model_checks.harness.rt.frames import int_at
from model_checks.harness.rt.objects import AtomicState, EventState, Op
from model_checks.harness.runtime import ControlledRuntime

_real_flock = fcntl.flock
_real_setprofile = sys.setprofile
_real_getprofile = sys.getprofile
_PY_TRACE_C_CALL = 4  # (CPython's ``PyTrace_C_CALL``: the event a profile function is inside)


class _FileLock:
    """One file's ``flock`` lock in one execution: its holders (descriptor: exclusive?, thread),
    the object every ``flock`` of the file is an operation on (``anchor``: what orders them, and
    what a release publishes to the next holder), and the waits (by descriptor and mode)."""

    def __init__(self, ex: Any, name: str, key: tuple[int, int]) -> None:
        self.ex = ex
        self.name = name
        self.key = key
        self.held: dict[int, tuple[bool, int]] = {}
        self.twins: dict[int, set[int]] = {}  # a holder's duplicates known (``purge``)
        made = ex.new_object(lambda oid: AtomicState(oid, name, None, by_identity=True))
        assert isinstance(made, AtomicState)
        self.anchor = made
        self.waits: dict[tuple[int, bool], EventState] = {}

    def purge(self) -> None:
        """Forget the holders whose descriptor is closed (or no longer this file's), unless a
        duplicate of it seen at its ``flock`` still is: the description is open, the lock held."""
        for fd in [fd for fd in self.held if not _refers(fd, self.key)]:
            holder = self.held.pop(fd)
            twins = [n for n in self.twins.pop(fd, ()) if n not in self.held and _refers(n, self.key)]
            if twins:
                self.held[twins[0]] = holder
                self.twins[twins[0]] = set(twins[1:])

    def holder(self, fd: int) -> int:
        """The descriptor that holds (or will hold) the lock for ``fd``'s open file description:
        a holder that is ``fd`` or a duplicate of it (``os.dup``: one description, one lock), or
        ``fd`` itself."""
        if fd in self.held:
            return fd
        for held in self.held:
            if _same_description(held, fd):
                self.twins.setdefault(held, set()).add(fd)
                return held
        return fd

    def took(self, fd: int) -> None:
        """``fd`` took the lock: the duplicates of its description open now stay its holders if
        ``fd`` is closed unseen (``purge``)."""
        self.twins[fd] = set(_duplicates(fd))

    def free_for(self, fd: int, exclusive: bool) -> bool:
        others = [excl for holder, (excl, _tid) in self.held.items() if holder != fd]
        return not others if exclusive else not any(others)

    def wait(self, fd: int, exclusive: bool) -> EventState:
        found = self.waits.get((fd, exclusive))
        if found is None:
            mode = "LOCK_EX" if exclusive else "LOCK_SH"
            made = self.ex.new_object(lambda oid: EventState(oid, f"{self.name} ({mode} by descriptor {fd})"))
            assert isinstance(made, EventState)
            found = self.waits[(fd, exclusive)] = made
        return found

    def op(self, fd: int, what: str, exclusive: bool | None = None) -> Op:
        """The operation of ``fd``'s ``flock`` (``what``) on the file: a write, or for a shared
        lock (of the mode asked, or held) a read: two holders of ``LOCK_SH`` order nothing between
        them (each acquires what exclusive holders published; an exclusive holder, what all did)."""
        if exclusive is None:
            exclusive = self.held.get(fd, (True, 0))[0]
        return Op("store", self.anchor, (what,)) if exclusive else Op("load", self.anchor, (what,), read=True)

    def release(self, fd: int, what: str) -> None:
        """``fd`` lets go (``LOCK_UN``, ``os.close``): an operation, then the holder gone."""
        self.ex.perform(self.op(fd, what))
        self.held.pop(fd, None)
        self.twins.pop(fd, None)

    def closed(self, fd: int) -> int | None:
        """The holder ``fd`` (a holder or a duplicate of one) is about to be closed: the holder that
        lets go, or None where another descriptor of its open file description stays open (the
        lock stays held, by that one now)."""
        holder = self.holder(fd)
        if holder not in self.held:
            return None
        others = _duplicates(fd)
        if not others:
            return holder
        if holder == fd:  # (its duplicate holds it from now on)
            self.held[others[0]] = self.held.pop(fd)
            self.twins[others[0]] = set(others[1:]) | (self.twins.pop(fd, set()) - {fd})
        else:
            self.twins.get(holder, set()).discard(fd)
        return None


_KCMP = {"x86_64": 312, "aarch64": 272, "i686": 349, "armv7l": 378}.get(platform.machine())
_KCMP_FILE = 0


def _same_description(a: int, b: int) -> bool:
    """Are descriptors ``a`` and ``b`` of one open file description (``os.dup``'s, or inherited)?
    Linux's ``kcmp(KCMP_FILE)``; where it is refused (a container's seccomp filter) or missing,
    their shared offset (``_same_offset``)."""
    if a == b:
        return True
    if _KCMP is not None and _LIBC is not None:
        pid = os.getpid()
        found = _LIBC.syscall(_KCMP, pid, pid, _KCMP_FILE, a, b)
        if found >= 0:
            return bool(found == 0)
    return _same_offset(a, b)


def _same_offset(a: int, b: int) -> bool:
    """Does moving ``a``'s offset move ``b``'s (one description holds one offset)? Each is put
    back; a descriptor that cannot seek is taken as its own."""
    try:
        at = os.lseek(a, 0, os.SEEK_CUR)
        if os.lseek(b, 0, os.SEEK_CUR) != at:
            return False
        os.lseek(a, at + 1, os.SEEK_SET)
        try:
            return os.lseek(b, 0, os.SEEK_CUR) == at + 1
        finally:
            os.lseek(a, at, os.SEEK_SET)
    except OSError:
        return False


def _load_libc() -> Any:
    # (``PyDLL``: its functions carry ``FUNCFLAG_PYTHONAPI``, which the process watch's hook of
    # foreign calls leaves out, as the harness's own; a ``CDLL`` call would be taken for the
    # program's, a write of process state, and make every flock step dependent with every step)
    try:
        return ctypes.PyDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC = _load_libc() if sys.platform.startswith("linux") else None


def _duplicates(fd: int) -> list[int]:
    """The other descriptors of the process open on ``fd``'s open file description."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return []
    found = []
    for name in names:
        n = int(name)
        if n != fd and _same_description(fd, n):
            found.append(n)
    return sorted(found)


def _refers(fd: int, key: tuple[int, int]) -> bool:
    try:
        found = os.fstat(fd)
    except OSError:
        return False
    return (found.st_dev, found.st_ino) == key


class _Flocks:
    """One execution's ``flock`` locks, by file; after every step (an invariant that never
    fails, as ``patch_io``'s waits) each waiting ``flock`` learns whether the lock is free for it."""

    def __init__(self, rt: ControlledRuntime) -> None:
        self.ex = rt._ex
        self.of: dict[tuple[int, int], _FileLock] = {}
        self.ex.hooks.invariants.append(("flock locks free", self.poll))

    def poll(self) -> None:
        for lock in self.of.values():
            if lock.waits:
                lock.purge()
            for (fd, exclusive), ev in lock.waits.items():
                ev.flag = lock.free_for(fd, exclusive)

    def anything_held(self) -> bool:
        return any(lock.held for lock in self.of.values())


_flocks = per_execution(_Flocks)
_LAST: list[_Flocks | None] = [None]  # the latest execution's (the profile function's look-up)


def _lock_of(rt: ControlledRuntime, key: tuple[int, int], name: object) -> _FileLock:
    here = _LAST[0] = _flocks(rt)
    found = here.of.get(key)
    if found is None:
        found = here.of[key] = _FileLock(rt._ex, f"flock of {name}", key)
    return found


def _flock(fd: Any, operation: int) -> None:
    rt = _controlled()
    if rt is None or not isinstance(operation, int):
        return _real_flock(fd, operation)
    n = fd if isinstance(fd, int) else fd.fileno() if hasattr(fd, "fileno") else fd
    kind = operation & ~fcntl.LOCK_NB
    if not isinstance(n, int) or kind not in (fcntl.LOCK_SH, fcntl.LOCK_EX, fcntl.LOCK_UN):
        return _real_flock(fd, operation)  # (its TypeError, or EINVAL)
    try:
        found = os.fstat(n)
    except OSError:
        return _real_flock(fd, operation)  # (EBADF, as the real call)
    lock = _lock_of(rt, (found.st_dev, found.st_ino), getattr(fd, "name", n))
    n = lock.holder(n)  # (a duplicate's ``flock`` is its description's: the holder's)
    if kind == fcntl.LOCK_UN:
        lock.release(n, "LOCK_UN")
        return None
    _take(rt, lock, n, kind == fcntl.LOCK_EX, not operation & fcntl.LOCK_NB)
    if _real_getprofile() is not _watch:
        _real_setprofile(_watch)  # a file object's close lets go of it (``_watch``)
    return None


def _take(rt: ControlledRuntime, lock: _FileLock, fd: int, exclusive: bool, blocking: bool) -> None:
    """The step of the ``flock`` call: taken if free (checked and taken after the operation, in
    its step); else ``BlockingIOError`` (``LOCK_NB``) or a wait until the lock is free for it."""
    ex = rt._ex
    ex.perform(lock.op(fd, "LOCK_EX" if exclusive else "LOCK_SH", exclusive))
    if lock.held.get(fd, (exclusive, 0))[0] != exclusive:
        # a conversion lets go of the lock held first, as Linux's does (not atomic: two holders
        # of ``LOCK_SH`` that both ask for ``LOCK_EX`` do not deadlock; twelfth review, f03)
        del lock.held[fd]
    while True:
        lock.purge()
        if lock.free_for(fd, exclusive):
            tid = ex.current
            lock.held[fd] = (exclusive, -1 if tid is None else tid)
            lock.took(fd)
            return
        if not blocking:
            raise BlockingIOError(errno.EAGAIN, os.strerror(errno.EAGAIN))
        ev = lock.wait(fd, exclusive)
        ev.flag = False
        ex.perform(Op("wait", ev, (), objs=frozenset({ev.oid, lock.anchor.oid})))


def _holding(fd: int) -> tuple[_FileLock, int] | None:
    """The current execution's lock that ``fd``'s close lets go of, in a controlled thread, and
    its holder (``fd``, or a duplicate of it); or None (none, or another duplicate stays open)."""
    here = _LAST[0]
    rt = _controlled()
    if here is None or rt is None or here.ex is not rt._ex:
        return None
    for lock in here.of.values():
        if lock.held and _refers(fd, lock.key):
            holder = lock.closed(fd)
            return None if holder is None else (lock, holder)
    return None


def _watch(frame: Any, event: str, arg: Any) -> None:
    """The profile function while a descriptor holds a ``flock``: a file object's ``close`` or
    ``__exit__`` called by Python code lets go of its descriptor's lock, an operation just before
    the call (``_InProfile``; where the thread state is not 3.11's, a release for the race
    detector only). Unset at its first call once the execution is over (a holder unwound by the
    execution's end is not seen: it would stay set, slowing every later call)."""
    here = _LAST[0]
    if here is None or here.ex.aborting:
        _real_setprofile(None)
        return
    if event != "c_call" or getattr(arg, "__name__", None) not in ("close", "__exit__"):
        return
    f: Any = getattr(arg, "__self__", None)
    if not isinstance(f, FILE_TYPES):
        return
    try:
        fd = cast(Any, f).fileno()
    except (OSError, ValueError):
        return
    found = _holding(fd)
    if found is not None:
        lock, fd = found
        op = lock.op(fd, "close")
        if _InProfile.able():
            with _InProfile():
                lock.ex.perform(op)
        else:
            race = getattr(lock.ex, "race", None)
            tid = lock.ex.current
            if race is not None and tid is not None:
                race.sync(tid, op)
        lock.held.pop(fd, None)
        lock.twins.pop(fd, None)
    if not here.anything_held():
        _real_setprofile(None)


class _InProfile:
    """Inside the profile function: lower the thread state's tracing guard while other threads
    run (under greenlets they share it: raised, their code would be neither traced nor profiled),
    as ``race_frames.Untraced`` does inside the tracer, and raise it again after."""

    __slots__ = ("addr",)

    @staticmethod
    def able() -> bool:
        if not SUPPORTED:
            return False
        state = _thread_state()
        return bool(
            state is not None
            and int_at(state + _TRACING).value == 1
            and int_at(state + _TRACING_WHAT).value == _PY_TRACE_C_CALL
        )

    def __enter__(self) -> None:
        state = _thread_state()
        assert state is not None
        self.addr = state + _TRACING
        int_at(self.addr).value = 0

    def __exit__(self, *exc: object) -> None:
        int_at(self.addr).value = 1


def closing(fd: object) -> None:
    """``os.close(fd)`` in a controlled thread: a holder's close lets go of its lock (an operation)."""
    if isinstance(fd, int) and _LAST[0] is not None:
        found = _holding(fd)
        if found is not None:
            found[0].release(found[1], "os.close")


def given_out(fd: int) -> None:
    """``fd`` was just given out by ``open``/``os.open``: a holder with that number was closed."""
    here = _LAST[0]
    if here is not None:
        for lock in here.of.values():
            lock.held.pop(fd, None)
            for twins in lock.twins.values():
                twins.discard(fd)


# (module, name, real, patched), as ``patch._REPLACEMENTS``
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [(fcntl, "flock", _real_flock, _flock)]
