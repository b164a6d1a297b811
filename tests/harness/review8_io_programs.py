"""Review 8's programs that hung patch mode: a worker's blocking call the harness did not model
blocked the one OS thread the controlled threads share (see ``test_review8_io.py``)."""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import select
import signal
import socket
import tempfile
import threading
from collections.abc import Callable
from types import FrameType

from tests.harness.program_kit_io import read_while_main_sends


def poll_on_a_pipe() -> None:
    """r017: the worker waits with ``select.poll`` on a pipe; main writes."""
    r, w = os.pipe()

    def worker() -> bytes:
        p = select.poll()
        p.register(r, select.POLLIN)
        events = p.poll()
        assert events == [(r, select.POLLIN)], events
        return os.read(r, 10)

    res = read_while_main_sends(worker, lambda: os.write(w, b"x"))
    os.close(r)
    os.close(w)
    assert res == [b"x"], res


def poll_times_out() -> None:
    """``poll(10)``: 10 ms of the virtual clock, nothing written: an empty list."""
    r, w = os.pipe()
    p = select.poll()
    p.register(r, select.POLLIN)
    got: list[object] = []
    t = threading.Thread(target=lambda: got.append(p.poll(10)))
    t.start()
    t.join()
    os.close(r)
    os.close(w)
    assert got == [[]], got


def epoll_on_a_socket() -> None:
    """r020: the worker waits with ``select.epoll`` on a socket; main sends."""
    a, b = socket.socketpair()

    def worker() -> bytes:
        with select.epoll() as ep:
            ep.register(b.fileno(), select.EPOLLIN)
            events = ep.poll()
            assert [fd for fd, _ in events] == [b.fileno()], events
            return b.recv(10)

    res = read_while_main_sends(worker, lambda: a.sendall(b"x"))
    a.close()
    b.close()
    assert res == [b"x"], res


def _sent_in_two_pieces(read: Callable[[socket.socket], object]) -> list[object]:
    """What a worker's ``read`` of one end got while main sent 4 bytes to the other in two pieces."""
    a, b = socket.socketpair()

    def send() -> None:
        a.sendall(b"ab")
        a.sendall(b"cd")

    res = read_while_main_sends(lambda: read(b), send)
    a.close()
    b.close()
    return res


def recv_waitall_in_two_pieces() -> None:
    """r021: ``recv(4, MSG_WAITALL)`` gets all 4 bytes though they are sent in two pieces."""
    res = _sent_in_two_pieces(lambda b: b.recv(4, socket.MSG_WAITALL))
    assert res == [b"abcd"], res


def recv_into_waitall_in_two_pieces() -> None:
    buf = bytearray(4)
    res = _sent_in_two_pieces(lambda b: b.recv_into(buf, 4, socket.MSG_WAITALL))
    assert res == [4] and bytes(buf) == b"abcd", (res, buf)


def fifo_opened_by_a_worker() -> None:
    """r084: opening a FIFO blocks in the kernel until the other end is opened."""
    d = tempfile.mkdtemp()
    path = os.path.join(d, "f")
    os.mkfifo(path)

    def worker() -> bytes:
        with open(path, "rb") as f:
            return f.read()

    def send() -> None:
        with open(path, "wb") as f:
            f.write(b"hi")

    res = read_while_main_sends(worker, send)
    os.unlink(path)
    os.rmdir(d)
    assert res == [b"hi"], res


def multiprocessing_pipe_between_threads() -> None:
    """r124: a worker's ``Connection.recv`` of what main sends."""
    a, b = multiprocessing.Pipe()
    got = read_while_main_sends(b.recv, lambda: a.send({"k": 1}))
    a.close()
    b.close()
    assert got == [{"k": 1}], got


def multiprocessing_pipe_poll() -> None:
    a, b = multiprocessing.Pipe(duplex=False)

    def worker() -> object:
        assert a.poll(None)
        return a.recv()

    got = read_while_main_sends(worker, lambda: b.send(1))
    a.close()
    b.close()
    assert got == [1], got


def pty_read() -> None:
    """r122: a worker reads a pseudo-terminal's master end; main writes to the other end."""
    m, s = os.openpty()
    res = read_while_main_sends(lambda: os.read(m, 100), lambda: os.write(s, b"hi\n"))
    os.close(m)
    os.close(s)
    assert res and res[0].strip() == b"hi", res


LK = threading.Lock()


def _signalled_while(handler: Callable[[int, FrameType | None], object], main: Callable[[], None]) -> None:
    """With ``handler`` SIGUSR1's, a worker sends SIGUSR1 to the process while main runs ``main``."""
    old = signal.signal(signal.SIGUSR1, handler)
    try:
        t = threading.Thread(target=lambda: os.kill(os.getpid(), signal.SIGUSR1))
        t.start()
        main()
        t.join()
    finally:
        signal.signal(signal.SIGUSR1, old)


def handler_takes_a_lock_main_takes_in_a_loop() -> None:
    """r030: the handler takes a lock main takes three times; a signal sent while main holds it
    is a self-deadlock. The worker sends with no sleep: the kill's order with main's steps is the
    explorer's to vary (it was dependent with main's next operation only: one execution)."""

    def handler(signum: int, frame: object) -> None:
        with LK:
            pass

    def main() -> None:
        for _ in range(3):
            with LK:
                pass

    _signalled_while(handler, main)


def where_the_handler_ran() -> object:
    """Correct: the handler records how far main had gone (each point is a possible outcome)."""
    at = [0]
    seen: list[int] = []

    def handler(signum: int, frame: object) -> None:
        seen.append(at[0])

    def main() -> None:
        for i in range(3):
            with LK:
                at[0] = i + 1

    _signalled_while(handler, main)
    assert len(seen) == 1, seen
    return lambda: seen[0]  # (the final check: its value is the execution's outcome)


def prints_to_one_buffer_where_redirect_is_named() -> None:
    """r071: two threads print to one StringIO (no lock): a race; the program also uses
    ``redirect_stdout`` (so ``print`` is the harness's, ``patch_streams``)."""
    buf = io.StringIO()
    a = threading.Thread(target=lambda: print("a", file=buf))
    b = threading.Thread(target=lambda: print("b", file=buf))
    a.start()
    b.start()
    a.join()
    b.join()
    with contextlib.redirect_stdout(io.StringIO()):
        print("done")
    assert buf.getvalue() == "a\nb\n", repr(buf.getvalue())
