"""Plain ``threading`` programs where patch mode must do what a real run does (session 37's outside
review found each answered "exhaustive" or no verdict at all): each execution starts with the
functions' default arguments and closures as the module made them; an object is freed, and its
``__del__`` run, when its last reference goes; a ``KeyboardInterrupt`` the program raises in a
thread is that thread's exception; an endless loop over local variables ends the check. And
(the second review) a dataclass formatted in two threads is no race, a thread's ``ident`` is what
``get_ident()`` gives in it, and ``multiprocessing``'s thread pool is refused, not hung on."""

from __future__ import annotations

import functools
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.pool import ThreadPool

from tests.harness.expected import Fails
from tests.harness.program_threads import join_all, start_and_join

a = threading.Lock()
b = threading.Lock()


def first_call(_done: list[bool] = [False]) -> bool:  # noqa: B006 (the default is the state)
    cold = not _done[0]
    _done[0] = True
    return cold


def _make_once() -> Callable[[], bool]:
    done = False

    def once() -> bool:
        nonlocal done
        cold = not done
        done = True
        return cold

    return once


once = _make_once()


def _ordered(first: Callable[[], bool]) -> None:
    """The first call of a real run takes ``a`` then ``b``; another thread takes ``b`` then ``a``."""

    def t1() -> None:
        x, y = (a, b) if first() else (b, a)
        with x, y:
            pass

    def t2() -> None:
        with b, a:
            pass

    p, q = threading.Thread(target=t1), threading.Thread(target=t2)
    p.start()
    q.start()
    p.join()
    q.join()


def default_argument_deadlock() -> None:
    """A deadlock on the path the mutable default takes in a real run (its first call)."""
    _ordered(first_call)


def closure_deadlock() -> None:
    """The same, with the state in a closure's variable made at import."""
    _ordered(once)


lock = threading.Lock()
log: list[str] = []


class Resource:
    def __init__(self) -> None:
        self.open = True

    def __del__(self) -> None:
        with lock:  # the finalizer takes the lock its last owner's thread holds: a self-deadlock
            log.append("closed")


def finalizer_deadlock() -> None:
    def work() -> None:
        with lock:
            r = Resource()
            del r

    start_and_join(work)


def keyboard_interrupt_in_a_thread() -> None:
    def work() -> None:
        raise KeyboardInterrupt

    start_and_join(work)


def endless_local_loop() -> None:
    def spin() -> None:
        n = 0
        while True:
            n += 1

    threading.Thread(target=spin, daemon=False).start()


@dataclass(frozen=True)
class Config:
    host: str = "localhost"
    port: int = 8080


CONFIG = Config()


def dataclass_formatted_in_two_threads() -> None:
    """Read-only use of a frozen dataclass: its ``__repr__``'s recursion guard is the library's."""

    def use() -> None:
        assert "8080" in f"using {CONFIG}"

    start_and_join(use, use)


def thread_identities() -> None:
    """``get_ident()``, ``get_native_id()``, ``current_thread().ident`` and ``t.ident`` agree."""
    seen: list[tuple[int, int, int | None, int | None]] = []

    def work() -> None:
        me = threading.current_thread()
        seen.append((threading.get_ident(), threading.get_native_id(), me.ident, me.native_id))

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen == [(t.ident, t.ident, t.ident, t.native_id)], (seen, t.ident)
    main = threading.main_thread()
    # (the main thread's ident and native id are the real main thread's, as a module's import took
    # them: eighth review, r114; in CPython the two differ)
    assert threading.get_ident() == main.ident != t.ident
    assert threading.get_native_id() == main.native_id != t.native_id
    assert main.getName() == "MainThread" and not main.isDaemon()


def multiprocessing_thread_pool() -> None:
    with ThreadPool(2) as pool:
        assert pool.map(abs, [-1]) == [1]


built: list[int] = []
built_lock = threading.Lock()


def _build(lock: threading.Lock, made: list[int], mark: int = 1) -> object:
    """A new client, counted in ``made`` (with ``mark``) under ``lock``."""
    with lock:
        made.append(mark)
    return object()


@functools.cache
def client() -> object:
    """Built once per process, the program assumes: the cache's look-up and store are apart."""
    return _build(built_lock, built)


def cached_built_twice() -> None:
    """Two threads both miss the cache and both build (session 37's second review: proved absent)."""
    built.clear()
    start_and_join(client, client)
    assert len(built) == 1, "two clients built"


@functools.lru_cache(maxsize=128)
def square(n: int) -> int:
    return n * n


def cached_pure_function() -> None:
    out: list[int] = []

    def use() -> None:
        v = square(3)
        with built_lock:
            out.append(v)

    start_and_join(use, use)
    assert out == [9, 9] and square.cache_info().currsize == 1


class Clients:
    @functools.lru_cache(maxsize=64)  # noqa: B019 (the instance lives as long as the module)
    def client(self, name: str) -> object:
        return _build(built_lock, built, 2)


CLIENTS = Clients()


def cache_made_inside_built_twice() -> None:
    """The same with the cache made by the explored code (session 38: proved absent before)."""
    made: list[int] = []
    lock = threading.Lock()

    @functools.cache
    def connect() -> object:
        return _build(lock, made)

    start_and_join(connect, connect)
    assert len(made) == 1, "two clients built"


def cached_method_made_inside() -> None:
    """A class made by the explored code, its cached method called by two threads on two
    objects: one build each (the cache keys on the instance)."""
    made: list[int] = []
    lock = threading.Lock()

    class Pool:
        @functools.lru_cache(maxsize=8)  # noqa: B019 (the objects live as long as the execution)
        def client(self) -> object:
            return _build(lock, made)

    first, second = Pool(), Pool()
    start_and_join(first.client, second.client)
    assert first.client() is first.client() and len(made) == 2
    assert Pool.client.cache_info().currsize == 2


def library_function_cached_inside() -> None:
    """A library's function cached by the explored code keeps the real cache (it is no code of
    the program's, and a library's cache may outlive the execution)."""

    def work() -> None:
        base = functools.lru_cache(maxsize=None)(os.path.basename)
        assert type(base) is functools._lru_cache_wrapper and base("/a/b") == "b"

    start_and_join(work, work)


class Connection:
    @functools.cached_property
    def client(self) -> object:
        return _build(built_lock, built)


def cached_property_built_once() -> None:
    """``functools.cached_property`` (CPython 3.11) computes under a lock made with the class: the
    second thread waits and finds the value (a false alarm before session 38: the real lock,
    re-entrant on the greenlets' one OS thread, let both compute)."""
    built.clear()
    conn = Connection()
    start_and_join(lambda: conn.client, lambda: conn.client)
    assert len(built) == 1, "two clients built"


def cached_property_made_inside() -> None:
    """The same with the class made by the explored code (its lock made then)."""
    made: list[int] = []
    lock = threading.Lock()

    class Session:
        @functools.cached_property
        def client(self) -> object:
            return _build(lock, made)

    session = Session()
    start_and_join(lambda: session.client, lambda: session.client)
    assert len(made) == 1, "two clients built"


def cached_method_built_twice() -> None:
    """The same with a cached method of an object made at import."""
    built.clear()
    join_all([threading.Thread(target=CLIENTS.client, args=("db",)) for _ in range(2)])
    assert len(built) == 1, "two clients built"


def cached_method_per_key() -> None:
    """Two keys, one build each: correct."""
    built.clear()
    join_all([threading.Thread(target=CLIENTS.client, args=(name,)) for name in ("a", "b")])
    assert sorted(built) == [2, 2] and CLIENTS.client("a") is CLIENTS.client("a")


def event_poll_loop() -> None:
    """``ev.wait(0)`` polls: it returns the flag at once, as in CPython (it was a timed wait, and
    the loop was "bounded by timeout_limit", never proved)."""
    ev = threading.Event()
    t = threading.Thread(target=ev.set)
    t.start()
    while not ev.wait(0):
        time.sleep(0.001)
    t.join()


def ctrl_c_pressed() -> None:
    """The user presses Ctrl-C while a thread runs (a SIGINT sent to the process)."""

    def work() -> None:
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=work)
    t.start()
    t.join()


# What each program gives (tests/harness/test_patched_catalogue.py): each was "exhaustive", or no
# verdict at all, before session 37.
FOUND = [
    Fails(default_argument_deadlock, "deadlock", "no thread can run"),
    Fails(closure_deadlock, "deadlock", "no thread can run"),
    Fails(finalizer_deadlock, "deadlock", "no thread can run"),
    Fails(keyboard_interrupt_in_a_thread, "exception", "raised KeyboardInterrupt"),
    Fails(endless_local_loop, "livelock", "an endless loop"),
    Fails(cached_built_twice, "assertion", "two clients built"),
    Fails(cached_method_built_twice, "assertion", "two clients built"),
    Fails(cache_made_inside_built_twice, "assertion", "two clients built"),
]
PROVED = [
    dataclass_formatted_in_two_threads,
    thread_identities,
    cached_pure_function,
    cached_method_per_key,
    cached_method_made_inside,
    library_function_cached_inside,
    event_poll_loop,
]
