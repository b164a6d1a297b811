"""Plain ``threading`` programs whose behaviour depends on the OS thread, which the greenlet back
end's controlled threads share (seventh review, session 40; ``test_review7_one_thread.py``). Each
says CORRECT or BUGGY as CPython 3.11 runs it."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import select
import signal
import socket
import sqlite3
import threading
from types import FrameType

from tests.harness.program_kit_main_signal import signal_the_main_thread
from tests.harness.program_threads import join_all, run_copies, start_and_join


# ------------------------------------------------------------------------------------- sqlite3
def sqlite_connection_used_by_a_worker() -> None:
    """BUGGY: a connection made in main, used by a worker: ``ProgrammingError`` in every real run."""
    conn = sqlite3.connect(":memory:")
    conn.execute("create table t (x)")
    lk = threading.Lock()

    def w() -> None:
        with lk:
            conn.execute("insert into t values (1)")

    t = threading.Thread(target=w)
    t.start()
    t.join()
    assert conn.execute("select count(*) from t").fetchone()[0] == 1
    conn.close()


def sqlite_cursor_used_by_a_worker() -> None:
    """BUGGY: a cursor of main's connection, fetched from in a worker."""
    conn = sqlite3.connect(":memory:")
    cur = conn.execute("select 1")
    got: list[object] = []
    t = threading.Thread(target=lambda: got.append(cur.fetchone()))
    t.start()
    t.join()
    conn.close()


def sqlite_shared_without_the_check() -> None:
    """CORRECT: ``check_same_thread=False``, every use under one lock."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.execute("create table t (x)")
    lk = threading.Lock()

    def w() -> None:
        with lk:
            conn.execute("insert into t values (1)")

    run_copies(w)
    with lk:
        assert conn.execute("select count(*) from t").fetchone()[0] == 2
    conn.close()


def sqlite_connection_per_thread() -> None:
    """CORRECT: each thread connects, uses and closes its own connection."""
    out: list[int] = []
    lk = threading.Lock()

    def w() -> None:
        conn = sqlite3.connect(":memory:")
        value = conn.execute("select 2").fetchone()[0]
        conn.close()
        with lk:
            out.append(value)

    t = threading.Thread(target=w)
    t.start()
    t.join()
    assert out == [2]


# ------------------------------------------------------------------------------------- asyncio
def asyncio_loop_asked_for_in_a_worker() -> None:
    """BUGGY: main sets its loop; a worker's ``get_event_loop()`` raises ``RuntimeError``."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:

        def w() -> None:
            asyncio.get_event_loop().run_until_complete(asyncio.sleep(0))

        t = threading.Thread(target=w)
        t.start()
        t.join()
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def asyncio_loop_of_each_thread() -> None:
    """CORRECT: the worker sets its own loop; main's stays main's."""
    main_loop = asyncio.new_event_loop()
    asyncio.set_event_loop(main_loop)
    seen: list[bool] = []

    def w() -> None:
        mine = asyncio.new_event_loop()
        asyncio.set_event_loop(mine)
        try:
            asyncio.get_event_loop().run_until_complete(asyncio.sleep(0))
            seen.append(asyncio.get_event_loop() is mine)
        finally:
            asyncio.set_event_loop(None)
            mine.close()

    try:
        t = threading.Thread(target=w)
        t.start()
        t.join()
        assert asyncio.get_event_loop() is main_loop
        assert seen == [True]
    finally:
        asyncio.set_event_loop(None)
        main_loop.close()


# ------------------------------------------------------------------------------ redirect_stdout
def print_inside_another_threads_redirect() -> None:
    """BUGGY: ``redirect_stdout`` is process-wide: B's print may land in A's buffer."""
    lk = threading.Lock()
    res: dict[str, str] = {}

    def a() -> None:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            print("A")
            with lk:
                pass
        res["a"] = buf.getvalue()

    def b() -> None:
        print("B")

    start_and_join(a, b)
    assert res["a"] == "A\n", res


def print_locked_against_the_redirect() -> None:
    """CORRECT: the redirection and the other thread's print hold one lock."""
    lk = threading.Lock()
    res: dict[str, str] = {}

    def a() -> None:
        buf = io.StringIO()
        with lk, contextlib.redirect_stdout(buf):
            print("A")
        res["a"] = buf.getvalue()

    def b() -> None:
        with lk:
            print("B")

    start_and_join(a, b)
    assert res["a"] == "A\n", res


# ------------------------------------------------------------------------------------- signals
def handler_records_its_thread() -> None:
    """CORRECT: a handler runs in the main thread, whoever sends the signal."""
    seen: list[str] = []

    def handler(sig: int, frame: FrameType | None) -> None:
        seen.append(threading.current_thread().name)

    old = signal.signal(signal.SIGUSR1, handler)
    try:
        t = threading.Thread(target=lambda: os.kill(os.getpid(), signal.SIGUSR1))
        t.start()
        t.join()
    finally:
        signal.signal(signal.SIGUSR1, old)
    assert seen == ["MainThread"], seen


def pthread_kill_of_the_main_thread() -> None:
    """CORRECT: a worker interrupts the main thread; its handler records the signal."""
    got: list[int] = []
    old = signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))
    try:
        signal_the_main_thread(signal.SIGUSR1)
    finally:
        signal.signal(signal.SIGUSR1, old)
    assert got == [signal.SIGUSR1], got


def two_signals_while_main_waits() -> None:
    """CORRECT: two workers signal the main thread (two signals: neither is merged into the other);
    both handlers run in it, by signal number when both are pending, and its joins go on."""
    got: list[tuple[int, str]] = []

    def handler(sig: int, frame: FrameType | None) -> None:
        got.append((sig, threading.current_thread().name))

    old = signal.signal(signal.SIGUSR1, handler), signal.signal(signal.SIGUSR2, handler)
    try:
        join_all(
            [
                threading.Thread(target=os.kill, args=(os.getpid(), sig))
                for sig in (signal.SIGUSR2, signal.SIGUSR1)
            ]
        )
    finally:
        signal.signal(signal.SIGUSR1, old[0])
        signal.signal(signal.SIGUSR2, old[1])
    assert sorted(got) == [(signal.SIGUSR1, "MainThread"), (signal.SIGUSR2, "MainThread")], got


def handler_and_worker_update_a_counter() -> None:
    """BUGGY: the handler (main thread, which it interrupts in its ``join``) and the worker update
    one counter without a lock."""
    count = {"n": 0}

    def handler(sig: int, frame: FrameType | None) -> None:
        count["n"] += 1

    old = signal.signal(signal.SIGUSR1, handler)
    try:

        def w() -> None:
            os.kill(os.getpid(), signal.SIGUSR1)
            count["n"] += 1

        t = threading.Thread(target=w)
        t.start()
        t.join()
    finally:
        signal.signal(signal.SIGUSR1, old)


def handler_takes_the_lock_main_holds() -> None:
    """BUGGY: the handler runs in the main thread, which holds the (non-reentrant) lock it takes:
    a self-deadlock in every real run."""
    lk = threading.Lock()
    old = signal.signal(signal.SIGUSR1, lambda s, f: lk.acquire())
    try:
        with lk:
            t = threading.Thread(target=lambda: os.kill(os.getpid(), signal.SIGUSR1))
            t.start()
            t.join()
    finally:
        signal.signal(signal.SIGUSR1, old)


# ---------------------------------------------------------------------------- blocking reads
def socket_reader_first() -> None:
    """CORRECT (p113): the reader says it is ready, then blocks in ``recv``; main then sends."""
    r, w = socket.socketpair()
    ready = threading.Event()
    got: list[bytes] = []

    def reader() -> None:
        ready.set()
        got.append(r.recv(1))

    t = threading.Thread(target=reader)
    t.start()
    ready.wait()
    w.send(b"x")
    t.join()
    r.close()
    w.close()
    assert got == [b"x"]


def pipe_reader_first() -> None:
    """CORRECT (p110, the reader made to block first): a worker blocks reading a pipe; main
    writes once it is ready."""
    rfd, wfd = os.pipe()
    ready = threading.Event()
    got: list[bytes] = []

    def reader() -> None:
        ready.set()
        got.append(os.read(rfd, 1))

    t = threading.Thread(target=reader)
    t.start()
    ready.wait()
    os.write(wfd, b"y")
    t.join()
    os.close(rfd)
    os.close(wfd)
    assert got == [b"y"]


def reader_waits_for_a_second_byte() -> None:
    """BUGGY: the reader waits for two messages, one is sent: it blocks for ever."""
    r, w = socket.socketpair()
    try:

        def reader() -> None:
            r.recv(1)
            r.recv(1)

        t = threading.Thread(target=reader)
        t.start()
        w.sendall(b"x")
        t.join()
    finally:
        r.close()
        w.close()


def reader_with_a_timeout() -> None:
    """BUGGY: the reader's ``recv`` may time out before main sends (a slow main)."""
    r, w = socket.socketpair()
    r.settimeout(0.5)
    got: list[bytes | None] = []

    def reader() -> None:
        try:
            got.append(r.recv(1))
        except TimeoutError:
            got.append(None)

    t = threading.Thread(target=reader)
    t.start()
    w.send(b"x")
    t.join()
    r.close()
    w.close()
    assert got == [b"x"], got


def local_server_and_client() -> None:
    """CORRECT: a server thread accepts one connection on the loopback and echoes a line."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.sendall(conn.recv(16).upper())

    t = threading.Thread(target=serve)
    t.start()
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.sendall(b"ping")
        reply = client.recv(16)
    t.join()
    server.close()
    assert reply == b"PING", reply


def select_then_read() -> None:
    """CORRECT: a worker waits in ``select`` for either of two pipes, then reads the one ready."""
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    waiting = threading.Event()
    got: list[bytes] = []

    def reader() -> None:
        waiting.set()
        ready, _, _ = select.select([r1, r2], [], [])
        got.append(os.read(ready[0], 1))

    t = threading.Thread(target=reader)
    t.start()
    waiting.wait()
    os.write(w2, b"z")
    t.join()
    for fd in (r1, w1, r2, w2):
        os.close(fd)
    assert got == [b"z"], got


def select_times_out() -> None:
    """BUGGY: the worker's ``select`` may time out before main writes."""
    rfd, wfd = os.pipe()
    got: list[bool] = []
    t = threading.Thread(target=lambda: got.append(bool(select.select([rfd], [], [], 0.2)[0])))
    t.start()
    os.write(wfd, b"y")
    t.join()
    os.close(rfd)
    os.close(wfd)
    assert got == [True], got


def prints_and_fails() -> None:
    """For ``lanecheck explore --json``: the program's prints are not the JSON's."""
    print("CLOCK", 1.0)
    print("{not json")
    assert False, "prints then fails"
