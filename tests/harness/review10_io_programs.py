"""Review 9's I/O defects left open (see ``test_review10_io.py``): two controlled threads entering
one C ``io`` buffered object whose raw stream parks (s51: ``RuntimeError: reentrant call inside
<_io.BufferedWriter>``, a correct program), and a counter kept in a file through ``pathlib`` (its
reads and writes were no accesses: the lost update was proved "exhaustive")."""

from __future__ import annotations

import io
import json
import logging
import pathlib
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable
from typing import Any, Literal

from tests.harness.program_threads import join_all, run_copies, start_and_join

_DIR = pathlib.Path(tempfile.mkdtemp(prefix="lanecheck-review10-"))
COUNTER = _DIR / "counter"
SOURCE = _DIR / "source"
COPY = _DIR / "copy"
RECORD = _DIR / "record.json"
LOG = _DIR / "log"  # (a test gives each check a file of its own: ``fresh_log``)
SOURCE.write_text("new")


class Sink(io.RawIOBase):
    """A raw stream whose ``write`` takes a lock (``on_write``: called inside it, once)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.data = bytearray()
        self.on_write: list[Callable[[], object]] = []

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        with self.lock:
            self.data += bytes(b)
            while self.on_write:
                self.on_write.pop()()
            return len(bytes(b))


def _two_writers(write: Callable[[str], object]) -> None:
    """Threads ``a`` and ``b`` each ``write`` their letter times 8, three times."""

    def writer(ch: str) -> None:
        for _ in range(3):
            write(ch * 8)

    join_all(threading.Thread(target=writer, args=(ch,)) for ch in ("a", "b"))


def buffered_raw_writers() -> None:
    """s51: two threads write through one ``BufferedWriter`` over a raw stream that locks."""
    sink = Sink()
    bw = io.BufferedWriter(sink, buffer_size=4)
    _two_writers(lambda s: bw.write(s.encode()))
    bw.flush()
    assert sorted(sink.data) == sorted(b"a" * 24 + b"b" * 24), bytes(sink.data)


def text_over_buffered_raw() -> None:
    """The same through a ``TextIOWrapper`` over the ``BufferedWriter``."""
    sink = Sink()
    text = io.TextIOWrapper(io.BufferedWriter(sink, buffer_size=4), write_through=True)
    _two_writers(text.write)
    text.flush()
    assert sorted(sink.data) == sorted(b"a" * 24 + b"b" * 24), bytes(sink.data)


def buffered_first_writer() -> None:
    """BUGGY: which thread's bytes reach the sink first depends on which enters the buffer first."""
    sink = Sink()
    bw = io.BufferedWriter(sink, buffer_size=4)
    _two_writers(lambda s: bw.write(s.encode()))
    bw.flush()
    assert sink.data.startswith(b"a"), bytes(sink.data)


def buffered_deadlock() -> None:
    """BUGGY: a worker inside the buffer waits for a lock main holds while main writes to it."""
    sink = Sink()
    bw = io.BufferedWriter(sink, buffer_size=4)
    held = threading.Lock()
    inside = threading.Event()

    def wait_for_main() -> None:
        inside.set()
        with held:
            pass

    sink.on_write.append(wait_for_main)
    with held:
        t = threading.Thread(target=lambda: bw.write(b"x" * 8))
        t.start()
        inside.wait()
        bw.write(b"y" * 8)
    t.join()


def reentrant_write() -> None:
    """The raw stream's ``write`` writes to its own buffer: CPython's ``RuntimeError``."""
    sink = Sink()
    bw = io.BufferedWriter(sink, buffer_size=4)
    sink.on_write.append(lambda: bw.write(b"z" * 8))
    start_and_join(lambda: bw.write(b"x" * 8))


def _makefile_writers(mode: Literal["wb", "rwb"]) -> None:
    a, b = socket.socketpair()
    out: Any = a.makefile(mode, buffering=8)

    def send() -> None:
        for _ in range(2):
            out.write(b"0123456789\n")
        out.flush()

    run_copies(send, 2)
    out.close()
    a.close()
    got = b""
    while len(got) < 44:
        got += b.recv(64)
    b.close()
    assert got == b"0123456789\n" * 4, got


def makefile_writers() -> None:
    """Two threads write lines through one ``sock.makefile("wb")`` (each ``send`` parks)."""
    _makefile_writers("wb")


def makefile_pair_writers() -> None:
    """The same through ``makefile("rwb")``, a ``BufferedRWPair``."""
    _makefile_writers("rwb")


def makefile_two_readers() -> None:
    """s52, BUGGY on CPython 3.11: two threads read a line each from one ``sock.makefile("rb")``
    while main sends both lines at once. The second reader looked at the buffer while the first
    was inside its raw read, waited, then emptied the buffer, losing the second line: every real
    run hangs."""
    a, b = socket.socketpair()
    f = b.makefile("rb")
    got: list[bytes] = []
    lock = threading.Lock()

    def reader() -> None:
        line = f.readline()
        with lock:
            got.append(line)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    a.sendall(b"one\ntwo\n")
    for t in threads:
        t.join()
    f.close()
    a.close()
    b.close()
    assert sorted(got) == [b"one\n", b"two\n"], got


def _bump_path() -> None:
    n = int(COUNTER.read_text())
    COUNTER.write_text(str(n + 1))


def path_counter() -> None:
    """BUGGY: a counter kept in a file through ``pathlib``, read and rewritten by two threads."""
    COUNTER.write_text("0")
    run_copies(_bump_path, 2)
    assert COUNTER.read_text() == "2", COUNTER.read_text()


def path_counter_locked() -> None:
    """Its twin: each read-modify-write under one lock."""
    COUNTER.write_bytes(b"0")
    lock = threading.Lock()

    def bump() -> None:
        with lock:
            _bump_path()

    run_copies(bump, 2)
    assert COUNTER.read_bytes() == b"2", COUNTER.read_bytes()


def copy_against_read() -> None:
    """BUGGY: ``shutil.copyfile`` into a file another thread reads."""
    COPY.write_text("old")
    seen: list[str] = []

    def copy() -> None:
        shutil.copyfile(SOURCE, COPY)

    def read() -> None:
        seen.append(COPY.read_text())

    start_and_join(copy, read)
    assert seen == ["new"], seen


def two_copies_into_one_file() -> None:
    """BUGGY: two threads ``shutil.copy`` different files into one new file."""
    COPY.unlink(missing_ok=True)

    def copy_source() -> None:
        shutil.copy(SOURCE, COPY)

    def copy_counter() -> None:
        shutil.copy2(COUNTER, COPY)

    COUNTER.write_text("0")
    start_and_join(copy_source, copy_counter)
    assert COPY.read_text() == "0"


def dump_against_read() -> None:
    """BUGGY: ``json.dump`` to a file (written through) while another thread reads it."""
    out = io.TextIOWrapper(open(RECORD, "wb", buffering=0), write_through=True)  # noqa: SIM115
    seen: list[str] = []

    def dump() -> None:
        json.dump({"n": 1}, out)

    def read() -> None:
        seen.append(RECORD.read_text())

    start_and_join(dump, read)
    out.close()
    assert seen == ['{"n": 1}'], seen


def fresh_log(n: int) -> pathlib.Path:
    """A file no check has seen yet (made now), the one ``library_truncate_against_read`` uses."""
    global LOG
    LOG = _DIR / f"log{n}"
    LOG.write_text("line\n")
    return LOG


def library_truncate_against_read() -> None:
    """BUGGY: ``logging.FileHandler(mode="w")`` truncates a file (its ``open``, in the library)
    while another thread reads it."""
    path = LOG

    def truncate() -> None:
        logging.FileHandler(path, mode="w").close()

    def read() -> None:
        with open(path) as f:
            f.read()

    start_and_join(truncate, read)
