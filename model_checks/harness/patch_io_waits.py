"""More of the blocking I/O calls that hung patch mode (review 8: no verdict after 200 s), as
``patch_io``'s controlled waits, or refused by name before they block.

* ``select.poll()`` and ``select.epoll()`` objects (r017, r020): their ``poll`` waits until one of
  the registered descriptors is ready (pipes, terminals, sockets of this machine), as
  ``select.select`` does; the timeout is one of the virtual clock (poll's in milliseconds,
  epoll's in seconds). A poller with a descriptor ``patch_io`` does not model is polled for real.
  (``selectors`` made theirs at import: ``patch_io_selectors`` makes their wait controlled.)
* ``multiprocessing.Connection`` (r124): its reads and writes call ``os.read``/``os.write`` bound
  when the class was made, so they are given ``patch_io``'s; ``poll`` is a wait on its descriptor.
* opening a FIFO (r084) for reading, or for writing when no reader has it open, blocks in the
  kernel until the other end is opened: no wait can be put in front of it, so it is refused
  (``UsageError``) in a controlled thread, before it blocks.
"""

from __future__ import annotations

import builtins
import io
import os
import select
import stat
import sys
from typing import Any, Final

from model_checks.harness import (
    patch_files,
    patch_flock,
    patch_io,
    patch_io_buffered,
    patch_renames,
    race_files,
)
from model_checks.harness.patch_threads import _controlled
from model_checks.harness.rt.scheduler import UsageError

_real_poll = select.poll
_real_epoll: Any = getattr(select, "epoll", None)
_IN: Final = select.POLLIN | select.POLLPRI
_OUT: Final = select.POLLOUT
_EPOLL_IN: Final = getattr(select, "EPOLLIN", 0) | getattr(select, "EPOLLPRI", 0)
_EPOLL_OUT: Final = getattr(select, "EPOLLOUT", 0)


def _want(events: dict[int, int], read: int, write: int) -> patch_io.Want:
    return frozenset(
        {(fd, "r") for fd, mask in events.items() if mask & read}
        | {(fd, "w") for fd, mask in events.items() if mask & write}
    )


def _waited(events: dict[int, int], read: int, write: int, what: str, seconds: float | None) -> bool | None:
    """A controlled wait for one of ``events``; None when this is not one to model (the real
    call is made), False when it timed out."""
    rt = _controlled()
    if rt is None:
        return None
    if not events and patch_io.sleeps_for(rt, seconds):  # nothing registered: a sleep
        return False
    patch_io._waits(rt).touch(what)
    want = _want(events, read, write)
    if seconds == 0 or not want or not all(patch_io._modelled(fd) for fd, _ in want):
        return None
    return patch_io._wait_any(rt, want, what, seconds)


class _Registered:
    """A real poller (``_real``) and what is registered with it (``_events``: by descriptor, its
    event mask), which a controlled wait watches."""

    _real: Any
    _events: dict[int, int]
    _EVERY: int  # the mask ``register`` takes when none is given

    def register(self, fd: Any, eventmask: int | None = None) -> None:
        mask = self._EVERY if eventmask is None else eventmask
        self._real.register(fd, mask)
        self._events[patch_io._fd(fd)] = mask

    def modify(self, fd: Any, eventmask: int) -> None:
        self._real.modify(fd, eventmask)
        self._events[patch_io._fd(fd)] = eventmask

    def unregister(self, fd: Any) -> None:
        self._real.unregister(fd)
        self._events.pop(patch_io._fd(fd), None)


class _Poll(_Registered):
    """``select.poll()``: the real poller, and what is registered with it."""

    _EVERY = _IN | _OUT

    def __init__(self) -> None:
        self._real = _real_poll()
        self._events = {}

    def poll(self, timeout: float | None = None) -> list[tuple[int, int]]:
        seconds = None if timeout is None or timeout < 0 else timeout / 1000
        waited = _waited(self._events, _IN, _OUT, "poll", seconds)
        if waited is None:
            return list(self._real.poll(timeout))
        return list(self._real.poll(0)) if waited else []


class _Epoll(_Registered):
    """``select.epoll()``: the real one (its descriptor, ``close``, ``with``), and what is registered."""

    _EVERY = _EPOLL_IN | _EPOLL_OUT

    def __init__(self, sizehint: int = -1, flags: int = 0) -> None:
        self._real = _real_epoll(sizehint, flags)
        self._events = {}

    @classmethod
    def fromfd(cls, fd: int) -> _Epoll:
        made = cls.__new__(cls)
        made._real = _real_epoll.fromfd(fd)
        made._events = {}
        return made

    @property
    def closed(self) -> bool:
        return bool(self._real.closed)

    def fileno(self) -> int:
        return int(self._real.fileno())

    def close(self) -> None:
        self._real.close()

    def __enter__(self) -> _Epoll:
        self._real.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._real.__exit__(*exc)

    def poll(self, timeout: float | None = None, maxevents: int = -1) -> list[tuple[int, int]]:
        seconds = None if timeout is None or timeout < 0 else timeout
        waited = _waited(self._events, _EPOLL_IN, _EPOLL_OUT, "epoll.poll", seconds)
        if waited is None:
            return list(self._real.poll(timeout, maxevents))
        return list(self._real.poll(0, maxevents)) if waited else []


def _blocks_on_fifo(path: Any, writing: bool) -> bool:
    """Would opening ``path`` block until a FIFO's other end is opened?"""
    if isinstance(path, int):
        return False
    try:
        if not stat.S_ISFIFO(os.stat(path).st_mode):
            return False
    except (OSError, TypeError, ValueError):
        return False
    if not writing:
        return True
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        return True  # (ENXIO: no reader has it open)
    return False


def _refuse(path: Any, call: str) -> None:
    raise UsageError(
        f"{call} of {os.fsdecode(path)!r} in a controlled thread: it is a FIFO (named pipe), and opening it "
        "blocks the OS thread until its other end is opened, which the explorer cannot schedule (the "
        "check would hang): open both ends before starting the threads, or use os.pipe()"
    )


_real_open = builtins.open
_real_os_open = os.open


def _open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
    if _controlled() is not None and "+" not in mode and _blocks_on_fifo(file, writing="r" not in mode):
        _refuse(file, "open()")
    patch_renames.opening(file)  # a name the execution renamed: read (``patch_renames``)
    # a file it creates is removed when the next execution begins (``patch_files``: r047)
    name = patch_files.would_make(file, any(c in mode for c in "wxa") and kwargs.get("opener") is None)
    was_empty = "w" in mode and _controlled() is not None and _empty(file)
    opened = _real_open(file, mode, *args, **kwargs)
    patch_files.made(name, opened.fileno() if name is not None else -1)
    if name is not None:
        race_files.created(opened.fileno())
    patch_flock.given_out(opened.fileno())
    # opening to write truncates: a write of the file; ``pathlib``'s and ``shutil``'s whole-file
    # reads and writes open it to read or write it (``race_files``)
    race_files.opened(_controlled(), opened, mode, file, was_empty)
    return opened


def _empty(path: Any) -> bool:
    """Is the file at ``path`` empty, or missing (what truncating it leaves unchanged)?"""
    if not isinstance(path, (str, bytes, os.PathLike)):
        return False  # (a descriptor: opening it truncates nothing, and it is counted as before)
    try:
        return os.stat(path).st_size == 0
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False


_TMPFILE = getattr(os, "O_TMPFILE", 0)


def _os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
    access = flags & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
    if (
        _controlled() is not None
        and not flags & os.O_NONBLOCK
        and access != os.O_RDWR
        and _blocks_on_fifo(path, writing=access == os.O_WRONLY)
    ):
        _refuse(path, "os.open")
    patch_renames.opening(path)
    name = patch_files.would_make(path, bool(flags & os.O_CREAT) and kwargs.get("dir_fd") is None)
    fd = _real_os_open(path, flags, *args, **kwargs)
    patch_files.made(name, fd)
    if name is not None or (_controlled() is not None and flags & _TMPFILE == _TMPFILE != 0):
        race_files.created(fd)  # (a new inode: ``TemporaryFile``'s is nameless)
    patch_flock.given_out(fd)
    if flags & os.O_TRUNC:
        race_files.by_call(_controlled(), fd, "os.open", True, path=path)
    return fd


def _connection_replacements() -> list[tuple[Any, str, Any, Any]]:
    """``multiprocessing.Connection``'s reads, writes and ``poll``, if the program imported
    ``multiprocessing`` (its reads bind ``os.read`` when the class is made)."""
    if "multiprocessing" not in sys.modules or sys.platform == "win32":
        return []
    from multiprocessing import connection

    cls: Any = connection.Connection
    real_recv, real_send, real_poll = cls._recv, cls._send, cls._poll

    def _recv(self: Any, size: int, read: Any = None) -> Any:
        return real_recv(self, size, patch_io._read)

    def _send(self: Any, buf: Any, write: Any = None) -> None:
        real_send(self, buf, patch_io._write)

    def _poll(self: Any, timeout: float | None) -> bool:
        rt = _controlled()
        if rt is not None:
            patch_io._waits(rt).touch("Connection.poll")
            if patch_io._pipe(self._handle) and timeout != 0:
                if not patch_io._wait(rt, self._handle, "r", "Connection.poll", timeout):
                    return False
                timeout = 0
        return bool(real_poll(self, timeout))

    return [
        (cls, "_recv", real_recv, _recv),
        (cls, "_send", real_send, _send),
        (cls, "_poll", real_poll, _poll),
    ]


def at_patching() -> list[tuple[Any, str, Any, Any]]:
    return _connection_replacements()


# (module or class, name, real, patched), as ``patch._REPLACEMENTS``
REPLACEMENTS: list[tuple[Any, str, Any, Any]] = [
    (select, "poll", _real_poll, _Poll),
    *([(select, "epoll", _real_epoll, _Epoll)] if _real_epoll is not None else []),
    (builtins, "open", _real_open, _open),
    # (the same function: ``pathlib``'s ``Path.open`` calls it by this name)
    (io, "open", _real_open, _open),
    (os, "open", _real_os_open, _os_open),
    *patch_files.REPLACEMENTS,  # os.mkdir: a folder it makes is removed likewise
    *patch_renames.REPLACEMENTS,  # os.rename, os.replace: writes of both names (``patch_renames``)
    # a buffered object another controlled thread is inside: a wait for it (``patch_io_buffered``)
    *patch_io_buffered.REPLACEMENTS,
]
