"""Review 10's process-wide rebindings (rows 4, 5, 7; see ``test_review10_rebind.py``): a builtin
rebound by one thread while another looks it up (t100), ``mock.patch`` of a module's function in
one thread while another calls it (t80), and descriptor 2's capture with ``os.dup2`` while another
thread writes to it (t107). Each racy program was proved "exhaustive, no race"; each locked twin
must stay proved."""

from __future__ import annotations

import builtins
import os
import threading
from collections.abc import Callable
from typing import Any
from unittest import mock

from tests.harness.program_threads import start_and_join

CONFIG = {"mode": "real"}


def pause() -> None:
    """A call between two stores: where a real thread may be switched out."""


def fetch() -> str:
    return "real"


def _rebinder(lock: threading.Lock | None, by_setattr: bool = False) -> None:
    if lock is not None:
        lock.acquire()
    real = builtins.oct
    if by_setattr:
        setattr(builtins, "oct", lambda x: "-1")  # noqa: B010 (the rebinding by name is the case)
    else:
        builtins.oct = lambda x: "-1"
    pause()
    builtins.oct = real
    if lock is not None:
        lock.release()


def _oct_user(seen: list[str], lock: threading.Lock | None) -> None:
    if lock is None:
        seen.append(oct(8))
        return
    with lock:
        n = oct(8)
    seen.append(n)


def _writer_and_reader(
    writer: Callable[[], None], reader: Callable[[list[str]], None], expected: str, reader_first: bool = False
) -> None:
    """``writer`` and ``reader`` (which appends what it saw) in two threads; the reader saw ``expected``."""
    seen: list[str] = []
    threads = [writer, lambda: reader(seen)]
    start_and_join(*(reversed(threads) if reader_first else threads))
    assert seen == [expected], seen


def builtin_rebound() -> None:
    """t100b: ``builtins.oct`` rebound for a moment while another thread calls ``oct`` (t100b rebinds
    ``len``, which the harness itself calls while the program runs: a builtin it does not use)."""
    _writer_and_reader(lambda: _rebinder(None), lambda seen: _oct_user(seen, None), "0o10")


def builtin_rebound_by_setattr_reader_first() -> None:
    """The same with ``setattr(builtins, ...)``, the reading thread started first (its look-up in
    the first execution precedes any rebinding: the search starts again once one is seen)."""
    _writer_and_reader(
        lambda: _rebinder(None, by_setattr=True),
        lambda seen: _oct_user(seen, None),
        "0o10",
        reader_first=True,
    )


def builtin_rebound_locked() -> None:
    lock = threading.Lock()
    _writer_and_reader(lambda: _rebinder(lock), lambda seen: _oct_user(seen, lock), "0o10")


def _while_patched(patching: Any) -> Callable[[], None]:
    """A thread's body that enters ``patching`` (a ``mock`` patch) and leaves it after a call."""

    def patcher() -> None:
        with patching:  # (where a report names the patch's entry and exit)
            pause()

    return patcher


def builtin_mock_patched() -> None:
    """``mock.patch("builtins.oct")`` in one thread while another calls ``oct``."""
    patching = mock.patch("builtins.oct", return_value="-1")
    _writer_and_reader(_while_patched(patching), lambda seen: _oct_user(seen, None), "0o10")


def _patched_user(lock: threading.Lock | None) -> None:
    if lock is not None:
        lock.acquire()
    with mock.patch(__name__ + ".fetch", return_value="fake"):
        pause()
    if lock is not None:
        lock.release()


def _fetcher(got: list[str], lock: threading.Lock | None) -> None:
    if lock is None:
        got.append(fetch())
        return
    with lock:
        got.append(fetch())


def mock_patched_function() -> None:
    """t80: ``mock.patch`` of this module's ``fetch`` in one thread while another calls it."""
    _writer_and_reader(lambda: _patched_user(None), lambda got: _fetcher(got, None), "real")


def mock_patched_function_locked() -> None:
    lock = threading.Lock()
    _writer_and_reader(lambda: _patched_user(lock), lambda got: _fetcher(got, lock), "real")


def mock_patched_dict() -> None:
    """``mock.patch.dict`` of a module's dict in one thread while another reads a key of it."""
    patching = mock.patch.dict(CONFIG, {"mode": "test"})
    _writer_and_reader(_while_patched(patching), lambda got: got.append(CONFIG["mode"]), "real")


def _capturer(target: int, lock: threading.Lock | None) -> None:
    r, w = os.pipe()
    if lock is not None:
        lock.acquire()
    saved = os.dup(target)
    os.dup2(w, target)  # (as pytest's capfd captures descriptor 2)
    pause()
    os.dup2(saved, target)
    if lock is not None:
        lock.release()
    os.close(saved)
    os.close(w)
    os.close(r)


def _logger(target: int, lock: threading.Lock | None) -> None:
    if lock is None:
        os.write(target, b"log line\n")
        return
    with lock:
        os.write(target, b"log line\n")


def _with_target(lock: threading.Lock | None) -> None:
    # (a descriptor of its own, not 2: a failing check must leave the test run's stderr alone)
    target = os.open(os.devnull, os.O_WRONLY)
    try:
        start_and_join(lambda: _capturer(target, lock), lambda: _logger(target, lock))
    finally:
        os.close(target)


def descriptor_captured() -> None:
    """t107: a descriptor captured with ``os.dup2`` while another thread writes to it."""
    _with_target(None)


def descriptor_captured_locked() -> None:
    _with_target(threading.Lock())


def _own_file() -> None:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.write(fd, b"x")
    os.close(fd)


def own_descriptors() -> None:
    """Two threads each opening, writing and closing a descriptor of their own: a number one
    closed and the other was given again is another entry, no race."""
    start_and_join(_own_file, _own_file)
