"""Regular files as locations of the race detector (``races.py``): one location per file (its
device and inode), however many file objects or descriptors reach it.

An outside review (ninth, s21) proved a counter kept in a file (``open(p).read()``, then
``open(p, "w").write(...)`` by two threads, no lock) "exhaustive (for a data-race-free program)":
a file object's methods are C code the tracer never enters, so a thread's read-modify-write of
the file was one step and no access. Now, in code under test, a call of a file object's method
that reads the file (``read``, ``readline``, ``readlines``, ``readinto``, ...) is a read of the
file, one that changes it (``write``, ``writelines``, ``truncate``, and ``flush``/``close`` of a
writable file) a write, recorded at the program's line as a container method's access is;
``open(path, "w")`` (it truncates) is a write at the line of the ``open`` (``patch_io_waits``),
and ``os.read``/``os.write``/``os.pread``/``os.pwrite`` of a regular file's descriptor are a
read or a write of it (``patch_io``: the first two are also an operation on the process's I/O,
whose ordering they then carry, as a declared atomic field's access is part of its scheduling
point). A write to a file open for appending is a read (``_appends``: an atomic append). Only
regular files (``S_ISREG``), and not the standard streams (descriptors 0-2, and the file the
streams in ``sys`` write to now: two threads printing are no race on the file the output went
to). A ``pathlib`` read or write, a loop over a file's lines after its start, and a file written
by another process are not seen.
"""

from __future__ import annotations

import fcntl
import io
import os
import stat
import sys
import types
from typing import TYPE_CHECKING, Any

from model_checks.harness.own_code import own
from model_checks.harness.race_sites import under_test

if TYPE_CHECKING:
    from model_checks.harness.races import RaceDetector

# the file objects ``open`` makes (and ``os.fdopen``, ``io.open``)
FILE_TYPES: tuple[type, ...] = (
    io.TextIOWrapper,
    io.BufferedReader,
    io.BufferedWriter,
    io.BufferedRandom,
    io.FileIO,
)
READS = frozenset({"read", "read1", "readline", "readlines", "readinto", "readinto1", "readall", "peek"})
WRITES = frozenset({"write", "writelines", "truncate"})
FLUSHES = frozenset({"flush", "close"})  # a writable file's buffered writes reach the file
CONTENTS = "<contents>"


class FileLocation:
    """A regular file: the object whose ``<contents>`` is the location (kept for the process,
    one per device and inode)."""

    __slots__ = ("key", "name")

    def __init__(self, key: tuple[int, int], name: object) -> None:
        self.key = key
        self.name = name

    def __str__(self) -> str:
        return f"file {self.name}"


_KNOWN: dict[tuple[int, int], FileLocation] = {}


def location(fd: int, name: object) -> FileLocation | None:
    """The location of the regular file open as ``fd``, or None (not one, or a standard stream)."""
    if not isinstance(fd, int) or fd < 3:
        return None
    try:
        found = os.fstat(fd)
    except OSError:
        return None
    if not stat.S_ISREG(found.st_mode):
        return None
    key = (found.st_dev, found.st_ino)
    loc = _KNOWN.get(key)
    if loc is None:
        loc = _KNOWN[key] = FileLocation(key, name)
    elif not isinstance(name, int):
        loc.name = name  # (a path names it better than a descriptor; an inode is reused)
    return loc


def _of(f: Any) -> FileLocation | None:
    streams = _standard_streams()
    if any(f is s for s in streams):
        return None
    try:
        fd = f.fileno()
    except (OSError, ValueError):  # closed, or detached: the call raises
        return None
    if any(fd == _fileno(s) for s in streams):
        return None  # (another object over a standard stream's file)
    return location(fd, getattr(f, "name", fd))


def _standard_streams() -> tuple[Any, ...]:
    """The standard streams as they are now: a test runner's capture (pytest's is a temporary
    file, not descriptor 1) or a shell's redirection to a file is still the output two threads
    print to, no race on a file (session 41: two workers' ``sys.stdout.write`` under pytest)."""
    return (sys.stdout, sys.stderr, sys.stdin, sys.__stdout__, sys.__stderr__, sys.__stdin__)


def _fileno(stream: Any) -> int:
    try:
        return int(stream.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return -1


def method(detector: RaceDetector, tid: int, frame: Any, f: Any, name: str) -> None:
    """``f.name(...)`` by the program, ``f`` one of ``FILE_TYPES``."""
    if name in READS:
        write = False
    elif name in WRITES:
        write = True
    elif name in FLUSHES:
        try:
            if not f.writable():
                return
        except (OSError, ValueError):
            return
        write = True
    else:
        return
    loc = _of(f)
    if loc is not None:
        detector._access(tid, loc, CONTENTS, write and not _appends(f.fileno()), frame, f"{name}()")


def iterated_file(detector: RaceDetector, tid: int, frame: Any, f: Any) -> None:
    """A loop's start over a file's lines: a read of it (its later turns are not looked at)."""
    loc = _of(f)
    if loc is not None:
        detector._access(tid, loc, CONTENTS, False, frame, "iteration()")


def by_call(rt: Any, fd: int, name: str, write: bool, in_op: bool = False, path: object = None) -> None:
    """``os.<name>(fd, ...)`` called by the caller's caller (``patch_io``'s or ``open``'s
    wrapper) in the controlled runtime ``rt`` (or None: outside it): an access of the regular
    file ``fd`` at the program's line, if the race detector runs and the caller is code under
    test. ``in_op``: the call was just an operation (on the process's I/O), whose epoch the
    access belongs to."""
    if rt is None:
        return
    detector: Any = rt._ex.race
    tid = rt._ex.current
    if detector is None or tid is None or not hasattr(detector, "_access"):
        return
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None and own(frame.f_code.co_filename):  # (another wrapper of ``open``)
        frame = frame.f_back
    if frame is None or not under_test(frame.f_code.co_filename):
        return
    loc = location(fd, fd if path is None else path)
    if loc is not None:
        write = write and (name == "open" or not _appends(fd))
        detector._access(tid, loc, CONTENTS, write, frame, f"{name}()", in_op=in_op)


def _appends(fd: int) -> bool:
    """Is ``fd`` open for appending? Each write to it is an atomic append (``O_APPEND``: two
    threads' log lines are not lost), so it is taken as a read: it races with a truncation, not
    with another append (nor, unseen, with a reader, who may read a line half written)."""
    try:
        return bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND)
    except OSError:
        return False
