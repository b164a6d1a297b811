"""Regular files as locations of the race detector (``races.py``): one location per file (its
device and inode), however many file objects or descriptors reach it.

An outside review (ninth, s21) proved a counter kept in a file (``open(p).read()``, then
``open(p, "w").write(...)`` by two threads, no lock) "exhaustive (for a data-race-free program)":
a file object's methods are C code the tracer never enters, so a thread's read-modify-write of
the file was one step and no access. Now, in code under test, a call of a file object's method
that reads the file (``read``, ``readline``, ``readlines``, ``readinto``, ...) is a read of the
file, one that changes it (``write``, ``writelines``, ``truncate``, and ``flush``/``close`` of a
writable file) a write, recorded at the program's line as a container method's access is;
``open(path, "w")`` (it truncates) is a write at the line of the ``open`` (``patch_io_waits``; of
an empty file, a read: ``opened``),
and ``os.read``/``os.write``/``os.pread``/``os.pwrite`` of a regular file's descriptor are a
read or a write of it (``patch_io``: the first two are also an operation on the process's I/O,
whose ordering they then carry, as a declared atomic field's access is part of its scheduling
point). A write to a file open for appending is a read (``_appends``: an atomic append). Only
regular files (``S_ISREG``), and not the standard streams (descriptors 0-2, and the file the
streams in ``sys`` write to now: two threads printing are no race on the file the output went
to). ``Path.read_text``/``read_bytes``/``write_text``/``write_bytes`` and ``shutil.copyfile`` (their
``open``: ``opened``) read or write the file at the line that called them; so does library code's
opening to write or ``os.read``/``os.write`` of any regular file, at the program's line that
called the library (``_caller``). A loop over a file's lines after its start, a library's
file-object calls, and a file written by another process are not seen.
"""

from __future__ import annotations

import fcntl
import io
import os
import pathlib
import shutil
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
_RETIRED: list[FileLocation] = []  # (kept alive: the detector knows a location by its ``id``)


def retire(key: tuple[int, int]) -> None:
    """The file ``key`` lost its last name (a rename replaced it, or it was removed:
    ``patch_renames``): a file made later may get its inode number, and is another location
    (review 11's atomic publish: the second temporary file took the number of the version the
    first rename replaced, and its write was a race with the reads of that version). Kept while a
    descriptor of the process still has it open (its number is not free, and the accesses through
    it are still of that file: an unlinked scratch file two threads share)."""
    if key in _KNOWN and not _open_here(key):
        _RETIRED.append(_KNOWN.pop(key))


def created(fd: int) -> None:
    """``fd`` is a file just created (a new name, or ``O_TMPFILE``'s nameless file): a new inode,
    another location than any earlier file its number was given to, open or not (twelfth review:
    two threads' ``TemporaryFile``s, the second given the freed number of the first, raced)."""
    try:
        found = os.fstat(fd)
    except OSError:
        return
    key = (found.st_dev, found.st_ino)
    if key in _KNOWN:
        _RETIRED.append(_KNOWN.pop(key))


def _open_here(key: tuple[int, int]) -> bool:
    """Does a descriptor of this process refer to the file ``key`` (Linux: ``/proc/self/fd``;
    elsewhere, taken as yes)?"""
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return True
    for name in fds:
        try:
            found = os.fstat(int(name))
        except (OSError, ValueError):
            continue
        if (found.st_dev, found.st_ino) == key:
            return True
    return False


ENTRY = "<table entry>"


class Descriptor(FileLocation):
    """The descriptor table's entry ``n`` (a report names it "descriptor n")."""

    __slots__ = ()

    def __str__(self) -> str:
        return f"descriptor {self.name}"


TABLE: dict[int, Descriptor] = {}  # the entries a write (or the program's read) made locations


def new_check() -> None:
    """A check begins: no entry of the table is a location yet (what an earlier check wrote does
    not decide which of this check's library reads count)."""
    TABLE.clear()
    _RETIRED.clear()


def descriptor(fd: int, make: bool) -> Descriptor | None:
    """The location of the table's entry ``fd`` (``make``: made if there is none yet)."""
    found = TABLE.get(fd)
    if found is None and make:
        found = TABLE[fd] = Descriptor((-1, fd), fd)
    return found


def descriptor_read(
    detector: Any, tid: int, frame: Any, fd: int, name: str, known_only: bool, in_op: bool
) -> None:
    """``os.<name>(fd, ...)`` reads the table's entry ``fd`` (``known_only``: a library's call,
    recorded only where the entry was written before)."""
    if isinstance(fd, int):
        loc = descriptor(fd, not known_only)
        if loc is not None:
            detector._access(tid, loc, ENTRY, False, frame, f"{name}()", in_op=in_op)


_DESCRIPTOR_READS = frozenset({"os.read", "os.write", "os.pread", "os.pwrite"})


def location(fd: int, name: object) -> FileLocation | None:
    """The location of the regular file open as ``fd``, or None (not one, or a standard stream)."""
    if not isinstance(fd, int) or fd < 3:
        return None
    try:
        found = os.fstat(fd)
    except OSError:
        return None
    return _located(found, name)


def _located(found: os.stat_result, name: object) -> FileLocation | None:
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
    file ``fd`` at the program's line, if the race detector runs (``_caller``). ``in_op``: the
    call was just an operation (on the process's I/O), whose epoch the access belongs to."""
    found = _caller(rt, sys._getframe(2))
    if found is None:
        return
    detector, tid, frame, known_only = found
    if name in _DESCRIPTOR_READS:  # the descriptor table's entry read (``patch_descriptors``: dup2, close)
        descriptor_read(detector, tid, frame, fd, name, known_only, in_op)
    loc = location(fd, fd if path is None else path)
    if loc is not None:
        write = write and (name == "open" or not _appends(fd))
        detector._access(tid, loc, CONTENTS, write, frame, f"{name}()", in_op=in_op)


def opened(rt: Any, f: Any, mode: str, path: object, was_empty: bool = False) -> None:
    """``open(path, mode)`` (the builtin, or ``io.open``: ``patch_io_waits``) returned ``f``,
    called by the caller's caller. Opening to write (``"w"``) truncates: a write of the file; of a
    file that was empty (``was_empty``: or did not exist), a read, as it changes nothing (it races
    with a write of the file, not with another such open: review 11's two threads opening a
    ``flock`` lock file with ``"w"``). Opened
    by one of ``WHOLE_FILE`` (``Path.read_text``, ``shutil.copyfile``, ...), it is that call's read
    or write of the whole file, at the line that called it (review 9: a counter kept in a file
    through ``pathlib`` was proved "exhaustive": the opening and reading were ``pathlib``'s)."""
    if rt is None:
        return
    if TABLE:  # a number given out again is another entry (its close may have gone unseen)
        TABLE.pop(f.fileno(), None)
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None and (own(frame.f_code.co_filename) or frame.f_code is _PATH_OPEN):
        frame = frame.f_back  # (patched ``open``'s wrappers; ``Path.open`` calls ``io.open``)
    helper = None if frame is None else WHOLE_FILE.get(frame.f_code)
    if helper is not None and frame is not None:
        frame = frame.f_back  # (the line that called it, past ``shutil.copy``'s)
        while frame is not None and frame.f_code in _CALLING_HELPERS:
            frame = frame.f_back
    elif "w" not in mode:
        return
    found = _caller(rt, frame)
    if found is None:
        return
    detector, tid, at, _library = found
    fd = f.fileno()
    loc = location(fd, path)
    if loc is not None:
        write = ("w" in mode and not was_empty) or ("+" in mode and not _appends(fd))
        detector._access(tid, loc, CONTENTS, write, at, f"{helper or 'open'}()")


_PATH_OPEN = pathlib.Path.open.__code__
# the library calls that open a file to read or write it whole: what their ``open`` does is theirs
WHOLE_FILE: dict[types.CodeType, str] = {
    **{
        getattr(pathlib.Path, name).__code__: f"Path.{name}"
        for name in ("read_text", "read_bytes", "write_text", "write_bytes")
    },
    shutil.copyfile.__code__: "shutil.copyfile",
}
_CALLING_HELPERS = frozenset({shutil.copy.__code__, shutil.copy2.__code__})


def _caller(rt: Any, frame: types.FrameType | None) -> tuple[Any, int, types.FrameType, bool] | None:
    """The race detector, the running thread, the program's frame an access is made at and
    whether the call is a library's: ``frame`` past the harness's wrappers where it is code under
    test; else (library code: ``shutil``'s ``open`` of a file to write, a parser's ``os.read``)
    the nearest frame under test that called it. A library's access of a regular file counts
    whichever file it is (a frame walk and an ``fstat``): counted only for files the program's
    own accesses had made locations, a set kept for the whole process, the same check gave
    "exhaustive" and then a data race when run again (the session's code review: a
    ``logging.FileHandler`` truncating the file another thread reads). Its read of a descriptor's
    entry counts only for an entry written in this check (``descriptor_read``). None: no detector,
    or no such frame."""
    if rt is None:
        return None
    detector: Any = rt._ex.race
    tid = rt._ex.current
    if detector is None or tid is None or not hasattr(detector, "_access"):
        return None
    while frame is not None and own(frame.f_code.co_filename):  # (another wrapper of ``open``)
        frame = frame.f_back
    if frame is None:
        return None
    if under_test(frame.f_code.co_filename):
        return detector, tid, frame, False
    while frame is not None and not under_test(frame.f_code.co_filename):
        frame = frame.f_back
    return None if frame is None else (detector, tid, frame, True)


def _appends(fd: int) -> bool:
    """Is ``fd`` open for appending? Each write to it is an atomic append (``O_APPEND``: two
    threads' log lines are not lost), so it is taken as a read: it races with a truncation, not
    with another append (nor, unseen, with a reader, who may read a line half written)."""
    try:
        return bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND)
    except OSError:
        return False
