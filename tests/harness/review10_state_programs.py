"""The tenth outside review's programs on the process's state (session 42): a ``contextvars``
context entered by two threads (t60), socket's default timeout (t78), the C library's time zone
(t97), the warnings module's filters (t63). Each BUGGY one returns what a real run may see
(the bad value among them); its CORRECT twin takes one lock around both sides.
``test_review10_state.py`` checks them."""

from __future__ import annotations

import contextlib
import contextvars
import datetime
import os
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterator

from tests.harness.program_threads import run_copies, start_and_join

TOKYO_HOUR = 9  # (``localtime(0)``'s hour in Tokyo, UTC+9, no summer time)


def _guarded(guard: threading.Lock | None) -> contextlib.AbstractContextManager[object]:
    return guard if guard is not None else contextlib.nullcontext()


def _context(guard: threading.Lock | None) -> int:
    """Two threads ``ctx.run`` one context, a lock's step inside: how many got ``RuntimeError``."""
    ctx = contextvars.copy_context()
    inner = threading.Lock()
    errors: list[str] = []

    def job() -> None:
        with inner:  # (a step inside the context)
            pass

    def w() -> None:
        with _guarded(guard):
            try:
                ctx.run(job)
            except RuntimeError as e:  # ("cannot enter context: ... is already entered")
                errors.append(str(e))

    run_copies(w, 2)
    return len(errors)


def context_shared() -> int:
    """t60 (BUGGY): the second thread's ``run`` inside the first's raises."""
    return _context(None)


def context_shared_locked() -> int:
    """The CORRECT twin: one lock around each ``run``."""
    return _context(threading.Lock())


def _default_timeout(guard: threading.Lock | None) -> float | None:
    """One thread sets the default timeout for a moment while the other makes a socket pair: the
    timeout its socket got."""
    inner = threading.Lock()
    seen: list[float | None] = []

    def setter() -> None:
        with _guarded(guard):
            socket.setdefaulttimeout(0.5)
            with inner:
                pass
            socket.setdefaulttimeout(None)

    def maker() -> None:
        with _guarded(guard):
            a, b = socket.socketpair()
        seen.append(a.gettimeout())
        a.close()
        b.close()

    start_and_join(setter, maker)
    return seen[0]


def default_timeout() -> float | None:
    """t78 (BUGGY): the socket made inside the window gets 0.5, not None."""
    return _default_timeout(None)


def default_timeout_locked() -> float | None:
    """The CORRECT twin."""
    return _default_timeout(threading.Lock())


@contextlib.contextmanager
def in_utc() -> Iterator[None]:
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()


def _tz(guard: threading.Lock | None, read: Callable[[], object]) -> object:
    """One thread switches the zone to Tokyo for a moment while the other reads ``read()``."""
    inner = threading.Lock()
    seen: list[object] = []

    def tokyo() -> None:
        with _guarded(guard):
            os.environ["TZ"] = "Asia/Tokyo"
            time.tzset()
            with inner:
                pass
            os.environ["TZ"] = "UTC"
            time.tzset()

    def reader() -> None:
        with _guarded(guard):
            seen.append(read())

    with in_utc():
        start_and_join(tokyo, reader)
    return seen[0]


def tz_localtime() -> object:
    """t97 (BUGGY): ``localtime(0)``'s hour is Tokyo's inside the window."""
    return _tz(None, lambda: time.localtime(0).tm_hour)


def tz_localtime_locked() -> object:
    """The CORRECT twin."""
    return _tz(threading.Lock(), lambda: time.localtime(0).tm_hour)


def tz_attribute() -> object:
    """BUGGY: ``time.timezone`` (which ``tzset`` sets) read inside the window."""
    return _tz(None, lambda: time.timezone)


def tz_datetime() -> object:
    """BUGGY: ``datetime.fromtimestamp(0)`` (local time, in C) inside the window."""
    return _tz(None, lambda: datetime.datetime.fromtimestamp(0).hour)


def tz_naive_timestamp() -> object:
    """BUGGY: a naive datetime's ``timestamp()`` (taken as local time, in C) inside the window."""
    return _tz(None, lambda: datetime.datetime(1970, 1, 1, 9).timestamp())


def _warnings(guard: threading.Lock | None) -> bool:
    """t63: two threads record their own warning with ``catch_warnings(record=True)``: did each
    list get its thread's warning and only it?"""
    inner = threading.Lock()
    results: dict[int, list[str]] = {}

    def w(k: int) -> None:
        with _guarded(guard), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with inner:
                pass
            warnings.warn(f"w{k}", stacklevel=1)
        results[k] = sorted(str(x.message) for x in caught)

    start_and_join(lambda: w(0), lambda: w(1))
    return results == {0: ["w0"], 1: ["w1"]}


def warnings_recorded() -> bool:
    """t63 (BUGGY): one thread's warning lands in the other's list, or is lost."""
    return _warnings(None)


def warnings_recorded_locked() -> bool:
    """The CORRECT twin."""
    return _warnings(threading.Lock())


def leaves_state() -> tuple[tuple[int, bool], ...]:
    """Two threads each read the hour of ``localtime(0)`` and warn, then turn warnings into errors
    and the zone to Tokyo for good: the first to read it sees the state the check began in."""
    seen: list[tuple[int, bool]] = []
    guard = threading.Lock()

    def w() -> None:
        hour = time.localtime(0).tm_hour
        try:
            warnings.warn("left", stacklevel=1)
            raised = False
        except UserWarning:
            raised = True
        with guard:
            seen.append((hour, raised))
            warnings.simplefilter("error")
            os.environ["TZ"] = "Asia/Tokyo"
            time.tzset()

    run_copies(w, 2)
    return tuple(sorted(seen))
