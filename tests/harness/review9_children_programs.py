"""Review 9's programs that hung patch mode or failed it falsely around processes: forking in a
worker, ``multiprocessing``'s locks between threads, ``selectors``, a child process's pipe and
exit (see ``test_review9_processes.py``)."""

from __future__ import annotations

import concurrent.futures.process
import multiprocessing
import multiprocessing.context
import os
import pickle
import selectors
import socket
import socketserver
import subprocess
import sys
import threading
import time

from tests.harness.program_kit_io import read_while_main_sends
from tests.harness.program_threads import start_and_join

CHILD = [sys.executable, "-c"]


# ------------------------------------------------------------------------------------- forking
def fork_in_a_worker() -> None:
    """s08: the child writes to a pipe and ``_exit``s; the parent reads and waits."""

    def worker() -> None:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(w, b"hi")
            os._exit(0)
        os.close(w)
        os.read(r, 2)
        os.close(r)
        os.waitpid(pid, 0)

    start_and_join(worker, lambda: None)


def _child() -> None:
    pass


def _process_in_a_worker(
    context: multiprocessing.context.ForkContext | multiprocessing.context.SpawnContext,
) -> None:
    def worker() -> None:
        p = context.Process(target=_child)
        p.start()
        p.join()

    start_and_join(worker, lambda: None)


def fork_process_in_a_worker() -> None:
    """s16: ``multiprocessing.Process`` with the "fork" start method."""
    _process_in_a_worker(multiprocessing.get_context("fork"))


def spawn_process_in_a_worker() -> None:
    """s16 with the "spawn" start method (it failed on the resource tracker's stood-in lock)."""
    _process_in_a_worker(multiprocessing.get_context("spawn"))


def process_pool_in_a_worker() -> None:
    """s07: a ``ProcessPoolExecutor`` in a worker thread."""

    def worker() -> None:
        with concurrent.futures.process.ProcessPoolExecutor(max_workers=1) as ex:
            ex.submit(abs, -7).result()

    start_and_join(worker, lambda: None)


def _child_output_beside_a_lock(code: str, timeout: float | None = None) -> list[int]:
    """A worker runs a child printing an int (``code``) and appends it under a lock, another thread
    appends 0 under it: what both appended."""
    lk = threading.Lock()
    got: list[int] = []

    def worker() -> None:
        p = subprocess.run([*CHILD, code], capture_output=True, text=True, timeout=timeout)
        with lk:
            got.append(int(p.stdout))

    def other() -> None:
        with lk:
            got.append(0)

    start_and_join(worker, other)
    return got


def subprocess_beside_a_lock() -> None:
    """s09, one worker: ``subprocess`` (``fork_exec``) still runs, the child's output read."""
    got = _child_output_beside_a_lock("print(6*7)")
    assert sorted(got) == [0, 42], got


# ----------------------------------------------------------------- multiprocessing's locks (s25)
def mp_lock_with_a_sleep_inside() -> None:
    lk = multiprocessing.Lock()
    box = [0]

    def bump() -> None:
        for _ in range(2):
            with lk:
                v = box[0]
                time.sleep(0.001)
                box[0] = v + 1

    start_and_join(bump, bump)
    assert box[0] == 4, box[0]


def mp_rlock_taken_twice_with_a_timeout() -> None:
    lk = multiprocessing.get_context("spawn").RLock()
    box = [0]

    def bump() -> None:
        if not lk.acquire(timeout=5):
            return  # (a timed wait may time out: the other thread was slow)
        with lk:
            v = box[0]
            time.sleep(0.001)
            box[0] = v + 1
        lk.release()

    start_and_join(bump, bump)
    assert box[0] in (1, 2), box[0]


def mp_semaphore_lets_one_in() -> None:
    sem = multiprocessing.BoundedSemaphore(1)
    inside = [0]

    def enter() -> None:
        with sem:
            inside[0] += 1
            time.sleep(0.001)
            assert inside[0] == 1, inside[0]
            inside[0] -= 1

    start_and_join(enter, enter)
    assert sem.get_value() == 1


def mp_event_and_condition() -> None:
    """A worker waits on an ``Event``, main on a ``Condition`` over a ``multiprocessing.Lock``."""
    ev = multiprocessing.Event()
    cond = multiprocessing.Condition(multiprocessing.Lock())
    state: list[str] = []

    def worker() -> None:
        assert ev.wait()
        with cond:
            state.append("done")
            cond.notify_all()

    t = threading.Thread(target=worker)
    t.start()
    ev.set()
    with cond:
        assert cond.wait_for(lambda: bool(state))
    t.join()


def mp_lock_sent_to_another_process() -> None:
    pickle.dumps(multiprocessing.Lock())


# -------------------------------------------------------------------------------- selectors
def _wait_in(sel: selectors.BaseSelector, sock: socket.socket) -> None:
    """Waits in the selector ``sel`` until ``sock`` is readable, then closes ``sel``."""
    with sel:
        sel.register(sock, selectors.EVENT_READ)
        sel.select()


def default_selector_on_a_socketpair() -> None:
    """s10: a worker waits in ``DefaultSelector`` (an epoll made in ``selectors``)."""
    a, b = socket.socketpair()

    def reader() -> bytes:
        _wait_in(selectors.DefaultSelector(), b)
        return b.recv(5)

    got = read_while_main_sends(reader, lambda: a.sendall(b"hello"))
    a.close()
    b.close()
    assert got == [b"hello"], got


def poll_selector_nobody_writes() -> None:
    """A worker's ``PollSelector`` wait for a socket no thread writes to: a deadlock."""
    _a, b = socket.socketpair()

    def reader() -> None:
        _wait_in(selectors.PollSelector(), b)

    start_and_join(reader)


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.sendall(self.request.recv(16).upper())


def socketserver_request() -> None:
    """s36's layout, smaller: a worker serves one request (its selector), main is the client."""
    with socketserver.TCPServer(("127.0.0.1", 0), _Echo) as srv:
        t = threading.Thread(target=srv.handle_request)
        t.start()
        with socket.create_connection(srv.server_address) as c:  # type: ignore[arg-type]
            c.sendall(b"ping")
            got = c.recv(16)
        t.join()
    assert got == b"PING", got


# ------------------------------------------------------------------ a child process's pipe (s41)
def read_a_slow_childs_pipe(delay: float = 1.0) -> None:
    got: list[bytes] = []

    def worker() -> None:
        code = f"import time; time.sleep({delay}); print('ok', flush=True)"
        with subprocess.Popen([*CHILD, code], stdout=subprocess.PIPE) as p:
            assert p.stdout is not None
            got.append(os.read(p.stdout.fileno(), 3))
            p.wait()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert got[0].startswith(b"ok"), got


def read_own_pipe_nobody_writes() -> None:
    r, _w = os.pipe()  # (the write end kept open: no thread writes to it)
    t = threading.Thread(target=lambda: os.read(r, 3))
    t.start()
    t.join()


# ---------------------------------------------------------------- subprocess with a timeout (s12)
def subprocess_with_a_timeout() -> None:
    out = _child_output_beside_a_lock("import time; time.sleep(0.2); print(7)", timeout=30)
    assert sorted(out) == [0, 7], out


def subprocess_that_times_out() -> None:
    got: list[str] = []

    def worker() -> None:
        try:
            subprocess.run([*CHILD, "import time; time.sleep(30)"], timeout=0.3)
        except subprocess.TimeoutExpired:
            got.append("timed out")

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert got == ["timed out"], got


# ------------------------------------------------------------ multiprocessing.Value between threads
def mp_value_lost_update() -> None:
    """s24 (BUGGY): ``v.value += 1`` takes the value's own lock for the read and for the write."""
    v = multiprocessing.Value("i", 0)

    def bump() -> None:
        for _ in range(2):
            v.value += 1

    start_and_join(bump, bump)
    assert v.value == 4, v.value
