"""A blocking read or write of a socket or a pipe in a controlled thread: a controlled wait.

On the greenlet back end the controlled threads share one OS thread, so a worker blocked in
``r.recv(1)`` blocked them all: the thread that would send never ran, and the check hung until
killed, with no verdict (seventh review, session 40: a correct program). Now, in a controlled
thread, each such call is first an operation on the process's I/O (one object for every file
descriptor: two I/O calls are ordered by the explorer, as data through a descriptor orders real
threads), then, while the descriptor is not ready (``select`` with no wait), a wait the scheduler
parks: the thread is blocked, the others run, and the wait is enabled once the descriptor is ready
(polled after every step while a thread waits). A wait that no controlled thread can end is a
deadlock, reported as one, naming the call. The real call then runs on a ready descriptor, so it
does not block (a write is made without blocking, in pieces, each after a wait for room).

Modelled: ``recv``, ``recv_into``, ``recvfrom``, ``recvfrom_into``, ``recvmsg``, ``accept``,
``send``, ``sendall``, ``sendto`` of a blocking socket of this machine (a Unix socket, or one
whose address is a loopback address: ``socketpair()``, a local server and its clients), and
``os.read``/``os.write`` of a pipe, a terminal (a pty's end) or a local socket, and
``select.select`` of those (a wait for any of them). A
socket's timeout is a timed wait of the virtual clock
(``TimeoutError("timed out")``, as CPython's); a non-blocking one's call is made as it is. Before a
wait is reported as a deadlock the descriptors are given ``GRACE`` seconds of real time (data
from another process). Not modelled (the real call, as before): a socket to another machine, a
file object's read of a pipe (``os.fdopen``), ``input()``. ``MSG_WAITALL`` is
``patch_io_pieces``'s; ``select.poll``/``epoll``, ``multiprocessing.Connection`` and a FIFO's open
are ``patch_io_waits``'s; ``selectors`` are ``patch_io_selectors``'s; a pipe only another process
can make ready (a child's) is ``patch_io_outside``'s real-time wait, not a deadlock.
"""

from __future__ import annotations

import _socket
import ipaddress
import os
import select
import socket
import stat
from collections.abc import Callable
from typing import Any, Final

from model_checks.harness import patch_io_outside, patch_io_pieces, race_files
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.per_execution import per_execution
from model_checks.harness.rt.enabled import can_run
from model_checks.harness.rt.objects import AtomicState, EventState, Op
from model_checks.harness.runtime import ControlledRuntime

GRACE: Final = 0.5  # real seconds a stuck wait gives the outside world before it is a deadlock
_real_select = select.select


Want = frozenset[tuple[int, str]]  # what a wait waits for: any of these (descriptor, "r" or "w")


class _Waits:
    """One execution's I/O: the object every I/O call touches, and an event per set of waited
    descriptors whose flag says one of them is ready."""

    def __init__(self, rt: ControlledRuntime) -> None:
        self.ex = rt._ex
        made = self.ex.new_object(lambda oid: AtomicState(oid, "the process's I/O", None, by_identity=True))
        assert isinstance(made, AtomicState)
        self.io = made
        self.events: dict[Want, EventState] = {}
        self.wants: dict[int, Want] = {}  # an event's object id: what it waits for
        self.polling = False
        self.graced: set[Want] = set()  # given ``GRACE`` once: nothing arrived

    def touch(self, call: str) -> None:
        """The I/O call's operation: ordered with every other I/O call."""
        self.ex.perform(Op("store", self.io, (call,)))

    def event(self, want: Want, what: str) -> EventState:
        found = self.events.get(want)
        if found is None:
            fds = ", ".join(str(fd) for fd in sorted({fd for fd, _ in want}))
            modes = " or ".join(sorted({"readable" if mode == "r" else "writable" for _, mode in want}))
            name = f"file descriptor{'s' if ',' in fds else ''} {fds} {modes} ({what})"
            made = self.ex.new_object(lambda oid: EventState(oid, name))
            assert isinstance(made, EventState)
            found = self.events[want] = made
            self.wants[made.oid] = want
        if not self.polling:
            self.polling = True
            self.ex.hooks.invariants.append(("file descriptors ready", self.poll))
        return found

    def poll(self) -> None:
        """After every step (an invariant that never fails): each wait's flag says whether one of
        its descriptors is ready. When no other thread can run, they get ``GRACE`` seconds."""
        waiting: list[tuple[Want, EventState]] = []
        others = False
        for t in self.ex.live:
            op = t.pending
            if op is None:
                continue
            want = self.wants.get(op.obj.oid) if op.kind == "wait" else None
            if want is not None and self.events[want] is op.obj:
                waiting.append((want, self.events[want]))
            elif can_run(self.ex, op, t.tid) or op.timeout is not None:
                others = True
        if not waiting:
            return
        every: set[tuple[int, str]] = set().union(*(want for want, _ in waiting))
        ready = _ready(every, 0.0)
        wants = {want for want, _ in waiting}
        if not ready and not others and not wants <= self.graced:
            self.graced |= wants  # (once an execution: a deadlock's later polls add no wait)
            ready = _ready(every, GRACE)
        for want, ev in waiting:
            ev.flag = not want.isdisjoint(ready)


def _ready(want: set[tuple[int, str]] | Want, timeout: float) -> set[tuple[int, str]]:
    reads = [fd for fd, mode in want if mode == "r"]
    writes = [fd for fd, mode in want if mode == "w"]
    try:
        r, w, _ = _real_select(reads, writes, [], timeout)
    except (OSError, ValueError):  # a descriptor closed meanwhile: its call raises, as for real
        return set(want)
    return {(fd, "r") for fd in r} | {(fd, "w") for fd in w}


_waits = per_execution(_Waits)


def _wait(rt: ControlledRuntime, fd: int, mode: str, what: str, timeout: float | None) -> bool:
    """Block the controlled thread until ``fd`` is ready for ``mode``; False if it timed out."""
    return _wait_any(rt, frozenset({(fd, mode)}), what, timeout)


def _wait_any(rt: ControlledRuntime, want: Want, what: str, timeout: float | None) -> bool:
    """Block the controlled thread until one of ``want`` is ready; False if it timed out."""
    waits = _waits(rt)
    if not _ready(want, 0.0) and patch_io_outside.outside(want):
        # only another process can make them ready: a real wait, never a deadlock
        return patch_io_outside.real_time_wait(rt, want, what, timeout)
    while not _ready(want, 0.0):
        ev = waits.event(want, what)
        ev.flag = False
        op = Op("wait", ev, (), timeout=timeout, objs=frozenset({ev.oid, waits.io.oid}))
        if not rt._ex.perform(op):
            return False
    return True


def _local(sock: Any) -> bool:
    """Is ``sock``'s other end on this machine (a Unix socket, a loopback address)?"""
    if sock.family == getattr(socket, "AF_UNIX", None):
        return True
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return False
    for address in (_peer, _own):
        host = address(sock)
        if host is not None:
            try:
                ip = ipaddress.ip_address(host.split("%")[0])
            except ValueError:
                return False
            return ip.is_loopback or ip.is_unspecified
    return False


def _peer(sock: Any) -> str | None:
    try:
        return str(sock.getpeername()[0])
    except OSError:
        return None


def _own(sock: Any) -> str | None:
    try:
        return str(sock.getsockname()[0])
    except OSError:
        return None


def _timed_out() -> TimeoutError:
    return TimeoutError("timed out")


def _receiving(name: str) -> tuple[Any, str, Any, Any]:
    real = getattr(_socket.socket, name)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        rt = _controlled()
        if rt is None:
            return real(self, *args, **kwargs)
        _waits(rt).touch(name)
        timeout = self.gettimeout()
        if timeout == 0.0 or not _local(self):
            return real(self, *args, **kwargs)
        if _WAITALL and _flags(name, args, kwargs) & _WAITALL:
            return patch_io_pieces.wait_all(
                self, name, args, kwargs, lambda: _wait(rt, self.fileno(), "r", name, timeout)
            )
        if not _wait(rt, self.fileno(), "r", name, timeout):
            raise _timed_out()
        return real(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return socket.socket, name, real, method


_WAITALL: Final = getattr(socket, "MSG_WAITALL", 0)
_FLAGS_AT: Final = {"recv": 1, "recv_into": 2, "recvfrom": 1, "recvfrom_into": 2, "recvmsg": 2}


def _flags(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    at = _FLAGS_AT.get(name)
    if at is None:
        return 0
    flags = args[at] if len(args) > at else kwargs.get("flags", 0)
    return flags if isinstance(flags, int) else 0


_real_send = _socket.socket.send
_DONTWAIT: Final = getattr(socket, "MSG_DONTWAIT", 0)


def _sending(name: str) -> tuple[Any, str, Any, Any]:
    """``send``/``sendall`` of a stream socket: each piece after a wait for room, without
    blocking (a blocking send of more than there is room for would block the OS thread)."""
    real = getattr(_socket.socket, name)

    def method(self: Any, data: Any, flags: int = 0) -> Any:
        rt = _controlled()
        if rt is None:
            return real(self, data, flags)
        _waits(rt).touch(name)
        timeout = self.gettimeout()
        if timeout == 0.0 or not _DONTWAIT or self.type != socket.SOCK_STREAM or not _local(self):
            return real(self, data, flags)
        view = memoryview(data).cast("B")
        sent = 0
        while sent < len(view):
            if not _wait(rt, self.fileno(), "w", name, timeout):
                raise _timed_out()
            try:
                sent += _real_send(self, view[sent:], flags | _DONTWAIT)
            except BlockingIOError:
                continue
        return None if name == "sendall" else sent

    method.__name__ = method.__qualname__ = name
    return socket.socket, name, real, method


def _sending_to() -> tuple[Any, str, Any, Any]:
    real = _socket.socket.sendto

    def sendto(self: Any, *args: Any) -> Any:
        rt = _controlled()
        if rt is None:
            return real(self, *args)
        _waits(rt).touch("sendto")
        timeout = self.gettimeout()
        if timeout != 0.0 and _local(self) and not _wait(rt, self.fileno(), "w", "sendto", timeout):
            raise _timed_out()
        return real(self, *args)

    return socket.socket, "sendto", real, sendto


def _pipe(fd: int) -> bool:
    """Is ``fd`` a blocking pipe, terminal (a pty's end) or socket of this machine (a
    ``multiprocessing.Connection``'s, which reads with ``os.read``)?"""
    try:
        return os.get_blocking(fd) and _modelled(fd, refuse_closed=True)
    except OSError:
        return False


_real_read = os.read
_real_write = os.write


def _read(fd: int, n: int) -> bytes:
    rt = _controlled()
    if rt is not None:
        _waits(rt).touch("os.read")
        race_files.by_call(rt, fd, "os.read", False, in_op=True)  # a regular file's contents read
        if _pipe(fd):
            _wait(rt, fd, "r", "os.read", None)
    return _real_read(fd, n)


def _write(fd: int, data: Any) -> int:
    rt = _controlled()
    if rt is None:
        return _real_write(fd, data)
    _waits(rt).touch("os.write")
    race_files.by_call(rt, fd, "os.write", True, in_op=True)
    if not _pipe(fd):
        return _real_write(fd, data)
    view = memoryview(data).cast("B")
    if not len(view):
        return _real_write(fd, data)
    written = 0
    while written < len(view):
        _wait(rt, fd, "w", "os.write", None)
        os.set_blocking(fd, False)  # (a pipe's write of more than there is room for blocks)
        try:
            written += _real_write(fd, view[written:])
        except BlockingIOError:
            continue
        finally:
            os.set_blocking(fd, True)
    return written


_real_pread = os.pread
_real_pwrite = os.pwrite


def _pread(fd: int, n: int, offset: int) -> bytes:
    """A read of a regular file at an offset: an access of it (``race_files``), no operation (it
    does not move the descriptor's position, so it orders nothing)."""
    race_files.by_call(_controlled(), fd, "os.pread", False)
    return _real_pread(fd, n, offset)


def _pwrite(fd: int, data: Any, offset: int) -> int:
    race_files.by_call(_controlled(), fd, "os.pwrite", True)
    return _real_pwrite(fd, data, offset)


def _fd(item: Any) -> int:
    return item if isinstance(item, int) else int(item.fileno())


def _select(rlist: Any, wlist: Any, xlist: Any, timeout: float | None = None) -> Any:
    """``select.select`` of pipes and sockets of this machine: a wait for any of them."""
    rt = _controlled()
    if rt is None:
        return _real_select(rlist, wlist, xlist, timeout)
    rlist, wlist, xlist = list(rlist), list(wlist), list(xlist)
    if not (rlist or wlist or xlist) and sleeps_for(rt, timeout):
        return [], [], []
    _waits(rt).touch("select")
    want = frozenset({(_fd(x), "r") for x in rlist} | {(_fd(x), "w") for x in wlist})
    if timeout == 0 or not want or not all(_modelled(fd) for fd, _ in want):
        return _real_select(rlist, wlist, xlist, timeout)
    if timeout is not None and timeout < 0:
        raise ValueError("timeout must be non-negative")
    if not _wait_any(rt, want, "select", timeout):
        return [], [], []
    return _real_select(rlist, wlist, xlist, 0)


def sleeps_for(rt: Any, timeout: float | None) -> bool:
    """A wait for no descriptor with a timeout (``select.select([], [], [], 0.01)``, an empty
    ``poll``/``selector``'s): a sleep, as ``time.sleep`` is (the virtual clock moves, the thread
    gives way for fairness, no real time passes). It was a step of real time: a poll loop pausing
    so ran 2,000 x 10 ms and was called a livelock (review 10, row 14). Not with no timeout (a
    wait for ever: the real call) nor a negative one (the real call's error)."""
    if timeout is None or timeout < 0:
        return False
    rt.sleep(timeout)
    return True


def _modelled(fd: int, refuse_closed: bool = False) -> bool:
    """Is ``fd`` a pipe, a terminal (a pty's end: readable when written), or a socket of this
    machine (its other end, when it has one)?"""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return not refuse_closed  # (closed: the real call raises at once)
    if stat.S_ISFIFO(mode) or (stat.S_ISCHR(mode) and os.isatty(fd)):
        return True
    if not stat.S_ISSOCK(mode):
        return False
    try:
        sock = socket.socket(fileno=os.dup(fd))
    except OSError:
        return False
    with sock:
        return _local(sock)


# (module or class, name, real, patched), as ``patch._REPLACEMENTS``
REPLACEMENTS: list[tuple[Any, str, Any, Callable[..., Any]]] = [
    *(
        _receiving(name)
        for name in ("recv", "recv_into", "recvfrom", "recvfrom_into", "recvmsg", "_accept")
        if hasattr(_socket.socket, name)
    ),
    _sending("send"),
    _sending("sendall"),
    _sending_to(),
    (os, "read", _real_read, _read),
    (os, "write", _real_write, _write),
    (os, "pread", _real_pread, _pread),
    (os, "pwrite", _real_pwrite, _pwrite),
    (select, "select", _real_select, _select),
]
