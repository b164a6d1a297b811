"""The ninth outside review's programs on the process's streams, cached functions and a queue's
size (session 41, ``test_review9_streams_cache.py`` checks them). A ``_buggy`` program fails in
some real runs; its ``_correct`` twin in none. This module names no redirection and assigns no
stream: its rebindings of ``sys.stdout`` happen in libraries (``unittest.mock``,
``review9_streams_helper``, pytest's capture), which the scan at patching does not read."""

from __future__ import annotations

import functools
import io
import queue
import sys
import threading
from collections.abc import Callable
from unittest import mock

from tests.harness.program_threads import start_and_join


def _spawn(*targets: Callable[[], object]) -> list[threading.Thread]:
    threads = [threading.Thread(target=t) for t in targets]
    for t in threads:
        t.start()
    return threads


def _chatter() -> None:
    print("worker line")


# --- sys.stdout rebound by a library while another thread prints (review 9's s44) ---


def mock_stdout_buggy() -> None:
    """``mock.patch("sys.stdout")`` while a worker prints: its line may land in main's capture."""
    (t,) = _spawn(_chatter)
    with mock.patch("sys.stdout", new=io.StringIO()) as buf:
        print("main line")
    t.join()
    assert buf.getvalue() == "main line\n", repr(buf.getvalue())


def mock_stdout_correct() -> None:
    """The worker is joined before the capture: its line never lands in it."""
    (t,) = _spawn(_chatter)
    t.join()
    with mock.patch("sys.stdout", new=io.StringIO()) as buf:
        print("main line")
    assert buf.getvalue() == "main line\n", repr(buf.getvalue())


def patch_object_buggy() -> None:
    """``mock.patch.object(sys, "stdout", buf)`` while a worker prints."""
    buf = io.StringIO()
    (t,) = _spawn(_chatter)
    with mock.patch.object(sys, "stdout", buf):
        print("main line")
    t.join()
    assert buf.getvalue() == "main line\n", repr(buf.getvalue())


def helper_redirect_buggy() -> None:
    """A helper library's ``contextlib.redirect_stdout`` while a worker prints."""
    from tests.harness import review9_streams_helper as helper

    (t,) = _spawn(_chatter)
    got = helper.captured(lambda: print("main line"))
    t.join()
    assert got == "main line\n", repr(got)


def helper_redirect_correct() -> None:
    from tests.harness import review9_streams_helper as helper

    (t,) = _spawn(_chatter)
    t.join()
    got = helper.captured(lambda: print("main line"))
    assert got == "main line\n", repr(got)


def pytest_capture_buggy() -> None:
    """A library's own assignment of ``sys.stdout`` (pytest's ``SysCapture``: ``setattr(sys,
    "stdout", ...)``) while a worker prints."""
    from _pytest.capture import SysCapture

    (t,) = _spawn(_chatter)
    cap = SysCapture(1)
    cap.start()
    print("main line")
    got = cap.snap()
    cap.done()
    t.join()
    assert got == "main line\n", repr(got)


def _counted_under_a_lock(chatter: Callable[[], None]) -> int:
    """Two workers each run ``chatter``, then add one to a count under a lock: the count."""
    lk = threading.Lock()
    n = [0]

    def w() -> None:
        chatter()
        with lk:
            n[0] += 1

    start_and_join(w, w)
    return n[0]


def _print_three_lines() -> None:
    for i in range(3):
        print("line", i)
        sys.stdout.write("x\n")


def quiet_printers() -> int:
    """Two workers print and never rebind a stream: their prints are no steps."""
    return _counted_under_a_lock(_print_three_lines)


def quiet_silent() -> int:
    """``quiet_printers`` without its prints."""
    return _counted_under_a_lock(lambda: None)


# --- a cached function's cache_clear and cache_info (review 9's s28) ---


def _config_cache() -> tuple[threading.Lock, dict[str, int], Callable[[], int]]:
    lk = threading.Lock()
    data = {"v": 1}

    @functools.cache
    def current() -> int:
        with lk:
            return data["v"]

    return lk, data, current


def cache_clear_buggy() -> None:
    """A reader computes from old data, the updater changes it and clears the cache, then the
    reader stores the stale value."""
    lk, data, current = _config_cache()

    def updater() -> None:
        with lk:
            data["v"] = 2
        current.cache_clear()  # type: ignore[attr-defined]

    start_and_join(current, updater)
    assert current() == 2, "stale value cached after cache_clear"


def cache_clear_correct() -> None:
    """The cache is cleared once both threads are done: no stale value survives."""
    lk, data, current = _config_cache()

    def updater() -> None:
        with lk:
            data["v"] = 2

    start_and_join(current, updater)
    current.cache_clear()  # type: ignore[attr-defined]
    assert current() == 2, "stale value cached after cache_clear"


def cache_info_misses() -> int:
    """Main reads the misses while a worker calls: 0 or 1, by the order."""

    @functools.cache
    def f(x: int) -> int:
        return x

    (t,) = _spawn(lambda: f(1))
    misses = f.cache_info().misses
    t.join()
    return misses


# --- a bounded cache's evictions in CPython's LRU order (review 9's s32) ---


def lru_calls(maxsize: int | None, keys: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int | None, ...]]:
    """The computations of ``f(k)`` for ``keys`` called in a worker, and the cache's info."""
    calls: list[int] = []

    @functools.lru_cache(maxsize=maxsize)
    def f(x: int) -> int:
        calls.append(x)
        return x * 10

    def worker() -> None:
        for k in keys:
            f(k)

    start_and_join(worker)
    return tuple(calls), tuple(f.cache_info())


def lru_evict_one() -> None:
    """review 9's s32 as written: ``maxsize=1``, f(1), f(2), f(1) computes three times."""
    calls, _ = lru_calls(1, (1, 2, 1))
    assert calls == (1, 2, 1), calls


def lru_hits_order() -> list[int]:
    """Two workers' hits of a full ``maxsize=2`` cache decide which key the next store evicts."""
    calls: list[int] = []

    @functools.lru_cache(maxsize=2)
    def f(x: int) -> int:
        calls.append(x)
        return x

    f(1)
    f(2)
    start_and_join(lambda: f(1), lambda: f(2))
    f(3)  # evicts the key hit first
    f(1)
    f(2)
    return calls


# --- a queue's maxsize changed after it was made (review 9's s40) ---


def queue_raised_correct() -> None:
    """A worker raises a bounded queue's maxsize: CPython's ``put`` reads it at each call."""
    q: queue.Queue[int] = queue.Queue(maxsize=1)
    out: list[int] = []

    def worker() -> None:
        q.put(0)
        q.maxsize = 2
        q.put_nowait(1)
        out.append(q.qsize())

    start_and_join(worker)
    assert out == [2] and q.maxsize == 2, (out, q.maxsize)


def queue_lowered_buggy() -> None:
    """A worker lowers the maxsize while main fills the queue without blocking: ``Full`` when the
    lowering comes first."""
    q: queue.Queue[int] = queue.Queue(maxsize=2)

    def lower() -> None:
        q.maxsize = 1

    (t,) = _spawn(lower)
    q.put_nowait(0)
    q.put_nowait(1)
    t.join()


def queue_maxsize_read() -> int:
    """Main reads the maxsize a worker sets: 1 or 3, by the order."""
    q: queue.Queue[int] = queue.Queue(maxsize=1)

    def raise_it() -> None:
        q.maxsize = 3

    (t,) = _spawn(raise_it)
    seen = q.maxsize
    t.join()
    return int(seen)


def warm_hits(maxsize: int | None) -> tuple[str, ...]:
    """Three workers hit a cache main warmed; it never evicts."""
    lk = threading.Lock()
    out: list[str] = []

    @functools.lru_cache(maxsize=maxsize)
    def config(name: str) -> str:
        return name

    config("a")
    config("b")

    def w() -> None:
        v = config("a") + config("b")
        with lk:
            out.append(v)

    start_and_join(w, w, w)
    return tuple(out)
