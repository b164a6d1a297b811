"""Plain ``threading`` programs on an in-memory stream (``io.StringIO``, ``io.BytesIO``) shared by
threads. Its methods are C code the tracer does not see as accesses; before session 38 two
threads writing one stream ran in one order only, and a program that assumed that order was
proved. Each racy one has one unsynchronised access; the others must be proved race free."""

from __future__ import annotations

import io
import json
import pickle
import threading

from tests.harness.expected import Races
from tests.harness.program_threads import start_and_join


def writes_in_two_threads() -> None:
    """BUG: the order of the two texts is the schedule's, not the program's."""
    buf = io.StringIO()
    start_and_join(lambda: buf.write("a"), lambda: buf.write("b"))
    assert buf.getvalue() == "ab", buf.getvalue()


def print_to_a_shared_stream() -> None:
    """``print(..., file=buf)`` writes the stream."""
    buf = io.StringIO()
    start_and_join(lambda: print("a", file=buf), lambda: print("b", file=buf))


def json_dump_and_a_reader() -> None:
    """``json.dump(obj, buf)`` writes the stream another thread reads."""
    buf = io.StringIO()
    start_and_join(lambda: json.dump({"a": 1}, buf), lambda: buf.getvalue())


def bytes_read_while_written() -> None:
    """A read moves the stream's position: a write of it."""
    buf = io.BytesIO(b"xyz")
    start_and_join(lambda: buf.read(1), lambda: buf.seek(0))


def lines_looped_over_while_written() -> None:
    buf = io.StringIO("a\nb\n")

    def reader() -> None:
        for _line in buf:
            pass

    start_and_join(reader, lambda: buf.write("c\n"))


def writes_under_a_lock() -> None:
    buf = io.StringIO()
    lock = threading.Lock()

    def write(text: str) -> None:
        with lock:
            buf.write(text)

    start_and_join(lambda: write("a"), lambda: write("b"))
    assert sorted(buf.getvalue()) == ["a", "b"]


def a_stream_per_thread() -> None:
    """Each thread its own stream, printed to, dumped into and named in a formatted list."""

    def work() -> None:
        buf = io.BytesIO()
        pickle.dump([1], buf)
        text = io.StringIO()
        print("x", file=text)
        assert str([text]).startswith("[<_io.StringIO")

    start_and_join(work, work)


def a_stream_named_while_written() -> None:
    """Formatting names the stream (its repr) and reads nothing of it: no race."""
    buf = io.StringIO()
    start_and_join(lambda: buf.write("a"), lambda: f"{buf!r} {[buf]}")


FOUND = [
    Races(writes_in_two_threads, "StringIO (whole)", ('buf.write("a")', 'buf.write("b")')),
    Races(print_to_a_shared_stream, "StringIO (whole)", ('print("a", file=buf)',)),
    Races(json_dump_and_a_reader, "StringIO (whole)", ("json.dump({",)),
    Races(bytes_read_while_written, "BytesIO (whole)", ("buf.read(1)",)),
    Races(lines_looped_over_while_written, "StringIO (whole)", ("for _line in buf:",)),
]
PROVED = [writes_under_a_lock, a_stream_per_thread, a_stream_named_while_written]
