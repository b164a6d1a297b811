"""Review 9's programs whose shared state lives in a regular file (see ``test_review9_files.py``):
the race detector did not look at a file object's reads and writes (s21), and a long finite loop
of ``os.read`` calls was reported as a busy-wait (s17)."""

from __future__ import annotations

import os
import tempfile
import threading

from tests.harness.program_threads import run_copies

_DIR = tempfile.mkdtemp(prefix="lanecheck-review9-")
COUNTER = os.path.join(_DIR, "counter")
RECORDS = os.path.join(_DIR, "records")
SCRATCH = os.path.join(_DIR, "scratch")
for _name in (RECORDS, SCRATCH):
    with open(_name, "wb") as _fh:
        _fh.write(b"AAAABBBB")


def _bump_file(lock: threading.Lock | None) -> None:
    with open(COUNTER) as f:
        text = f.read()
    n = int(text or 0)
    with open(COUNTER, "w") as f:
        f.write(str(n + 1))


def file_counter() -> None:
    """s21: a counter kept in a file, read then rewritten by two threads with no lock."""
    with open(COUNTER, "w") as f:
        f.write("0")
    ts = [threading.Thread(target=_bump_file, args=(None,)) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    with open(COUNTER) as f:
        assert f.read() == "2"


def file_counter_locked() -> None:
    """Its twin: each read-modify-write of the file under one lock."""
    with open(COUNTER, "w") as f:
        f.write("0")
    lock = threading.Lock()

    def bump() -> None:
        with lock:
            _bump_file(lock)

    run_copies(bump, 2)
    with open(COUNTER) as f:
        assert f.read() == "2"


def pwrite_against_a_file_read() -> None:
    """A worker changes the file with ``os.pwrite`` while main reads it through a file object."""
    fd = os.open(SCRATCH, os.O_RDWR)

    def change() -> None:
        os.pwrite(fd, b"CCCC", 0)

    t = threading.Thread(target=change)
    t.start()
    with open(SCRATCH, "rb") as f:
        head = f.read(4)
    t.join()
    os.pwrite(fd, b"AAAA", 0)
    os.close(fd)
    assert head in (b"AAAA", b"CCCC")


def two_readers_of_a_file() -> None:
    """Reads only: no race, whatever the order."""
    got = [b"", b""]

    def read(i: int) -> None:
        with open(RECORDS, "rb") as f:
            got[i] = f.read()

    ts = [threading.Thread(target=read, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert got == [b"AAAABBBB"] * 2


def many_reads() -> None:
    """s17's shape without its bug: each thread reads the file 300 times through a descriptor of
    its own (a finite loop of I/O operations longer than a small ``max_steps``)."""

    def reader() -> None:
        fd = os.open(RECORDS, os.O_RDONLY)
        for _ in range(300):
            assert os.pread(fd, 4, 0) == b"AAAA"
            os.read(fd, 1)
        os.close(fd)

    run_copies(reader, 2)


def shared_descriptor_made_inside() -> None:
    """s17b: ``tempfile.mkstemp()`` inside the explored function (its first call in a process took
    a step its later ones did not: "not deterministic"), two threads ``lseek`` then ``read`` one
    descriptor: a thread reads the other's record."""
    fd, path = tempfile.mkstemp()
    os.write(fd, b"AAAABBBB")
    got: dict[str, bytes] = {}

    def reader(name: str, off: int) -> None:
        for _ in range(3):
            os.lseek(fd, off, os.SEEK_SET)
            data = os.read(fd, 4)
            if data != name.encode() * 4:
                got[name] = data

    ts = [threading.Thread(target=reader, args=("A", 0)), threading.Thread(target=reader, args=("B", 4))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    os.close(fd)
    os.unlink(path)
    assert not got, got


def two_appenders() -> None:
    """Two threads each append a line to one log (``open(p, "a")``): each write is an atomic
    append (``O_APPEND``), no line is lost: no race."""

    def log(i: int) -> None:
        with open(COUNTER, "a") as f:
            f.write(f"line {i}\n")

    ts = [threading.Thread(target=log, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
