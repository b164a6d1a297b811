"""Review 11's atomic publish (see ``test_review11_renames.py``): a writer writes ``P.tmp`` and
renames it over ``P``; a reader opens ``P``. It was a data race on ``P`` whose "write" was the
temporary file's (u52): the rename ordered nothing. Its twins write ``P`` in place, or go on
writing the published file after the rename: races."""

from __future__ import annotations

import os
import pathlib
import tempfile

from tests.harness.program_threads import start_and_join

_DIR = tempfile.mkdtemp(prefix="lanecheck-review11-renames-")
CONFIG = os.path.join(_DIR, "config.txt")


def _reader(seen: list[str]) -> None:
    for _ in range(2):
        with open(CONFIG) as f:
            seen.append(f.read())


def _start(writer: object) -> tuple[str, ...]:
    with open(CONFIG, "w") as f:
        f.write("v0-complete")
    seen: list[str] = []
    start_and_join(writer, lambda: _reader(seen))  # type: ignore[arg-type]
    return tuple(sorted(set(seen)))


def publish() -> tuple[str, ...]:
    """u52: each version written to a temporary file, then ``os.replace``d over the config."""

    def writer() -> None:
        for i in (1, 2):
            tmp = CONFIG + ".tmp"
            with open(tmp, "w") as f:
                f.write(f"v{i}-")
                f.write("complete")
            os.replace(tmp, CONFIG)

    return _start(writer)


def publish_by_pathlib() -> tuple[str, ...]:
    """The same with ``Path.write_text`` and ``Path.rename``."""

    def writer() -> None:
        tmp = pathlib.Path(CONFIG + ".tmp")
        tmp.write_text("v1-complete")
        tmp.rename(CONFIG)

    return _start(writer)


def in_place() -> tuple[str, ...]:
    """BUGGY: the config rewritten in place: a reader may see it empty or half written."""

    def writer() -> None:
        with open(CONFIG, "w") as f:
            f.write("v1-")
            f.write("complete")

    return _start(writer)


def written_after_publishing() -> tuple[str, ...]:
    """BUGGY: the writer goes on writing the file it published, through its open file."""

    def writer() -> None:
        tmp = CONFIG + ".tmp"
        with open(tmp, "w") as f:
            f.write("v1-")
            f.flush()
            os.replace(tmp, CONFIG)
            f.write("late")

    return _start(writer)


OLD = os.path.join(_DIR, "old.txt")
NEW = os.path.join(_DIR, "new.txt")


def removed_then_made() -> str:
    """One thread reads a file and removes it; the other makes another file and writes it (which
    may get the removed file's inode number): two files, no race."""
    with open(OLD, "w") as f:
        f.write("old")
    got: list[str] = []

    def reader() -> None:
        with open(OLD) as f:
            got.append(f.read())
        os.remove(OLD)

    def maker() -> None:
        with open(NEW, "w") as f:
            f.write("new")

    start_and_join(reader, maker)
    os.remove(NEW)
    return got[0]


def unlinked_scratch() -> None:
    """BUGGY: a scratch file unlinked while open, written by one thread and read by the other
    through its descriptor, with no lock: a race on the file (still one file after the unlink)."""
    fd = os.open(OLD, os.O_RDWR | os.O_CREAT)

    def unlinker() -> None:
        os.unlink(OLD)
        os.pread(fd, 1, 0)

    start_and_join(lambda: os.pwrite(fd, b"x", 0), unlinker)
    os.close(fd)


RESULT = os.path.join(_DIR, "result.res")


def made_for_good() -> str:
    """CORRECT (twelfth review, r08): a worker makes its result file with ``open(..., "x")``; the
    file is kept, as results are. Each execution, and the next check, must find the name free."""

    def worker() -> None:
        with open(RESULT, "x") as f:
            f.write("r")

    start_and_join(worker)
    with open(RESULT) as f:
        return f.read()


def two_temporary_files() -> int:
    """CORRECT (twelfth review, c10): each thread writes and reads back its own nameless
    ``TemporaryFile``; the second may be given the inode number the first freed."""
    bad: list[str] = []

    def worker(text: str) -> None:
        with tempfile.TemporaryFile("w+") as f:
            f.write(text)
            f.seek(0)
            if f.read() != text:
                bad.append(text)

    start_and_join(lambda: worker("a"), lambda: worker("b"))
    return len(bad)
