"""Review 12's programs that a check ended with "the test is not deterministic" instead of a
verdict (c11/r05: temporary folders in two threads; c02: ``tempfile`` and ``logging`` to a
temporary file; c03: the environment and child processes), each correct one beside a buggy
variant that must still be found (see ``test_review12_nondeterminism.py``). Every program
cleans up after itself, so it can also run for real, again and again."""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from tests.harness.program_threads import join_all, start_and_join

CHILD = [sys.executable, "-c"]


def _both(work: object, join: bool = True) -> None:
    """Two threads running ``work(0)`` and ``work(1)``; joined unless ``join`` is False (the
    execution then ends when they do, as the interpreter's exit waits for them)."""
    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]  # type: ignore[arg-type]
    if join:
        join_all(threads)
    else:
        for t in threads:
            t.start()


# ------------------------------------------------------- c03: the environment, child processes
def _started(args: list[str], stdin: int | None = None, text: bool = False) -> subprocess.Popen[Any]:
    """A child with both output pipes, started by a thread that holds the lock under which the
    threads set their variables: CPython starts a child by ``vfork``, which shares the parent's
    memory until ``execve``, and the C environment's array that ``execve`` reads is moved and freed
    by another thread's ``putenv`` meanwhile: ``OSError(14, 'Bad address')`` in the merged suite
    (session 45), and 168 of 600 ``subprocess.run(["true"])`` in two threads while a third added
    variables. Setting a variable and starting a child in two threads at once is itself a race in
    CPython; the correct programs do not."""
    return subprocess.Popen(args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=text)


def child_prints_the_variable_its_thread_set() -> None:
    """c03, correct: each thread sets its own variable (under a lock) and runs a Python child that
    prints it; the child inherits the environment. Both pipes captured: ``communicate``'s
    selector loop, whose number of reads is the child's timing."""
    assert "LC_R12_A" not in os.environ  # (each execution starts from the environment as it was)
    lock = threading.Lock()

    def work(i: int) -> None:
        name = f"LC_R12_{'AB'[i]}"
        code = f"import os; print(os.environ[{name!r}])"
        with lock:  # (the child started under it too: see ``_started``)
            os.environ[name] = f"value {i}"
            child = _started([*CHILD, code], text=True)
        out, err = child.communicate()
        assert child.returncode == 0 and out == f"value {i}\n", (out, err)

    _both(work)


def shell_child_with_input_not_joined() -> None:
    """c03, correct: a shell child copies its input (4 KB, written as the pipe takes it) to its
    stdout and the thread's variable to its stderr; the main thread does not join."""
    lock = threading.Lock()

    def work(i: int) -> None:
        script = f'cat; printf %s "$LC_R12_S{i}" >&2'
        with lock:
            os.environ[f"LC_R12_S{i}"] = "x" * (i + 1)
            child = _started(["sh", "-c", script], stdin=subprocess.PIPE)
        out, err = child.communicate(b"data" * 1000)
        assert out == b"data" * 1000 and err == b"x" * (i + 1), (out, err)

    _both(work, join=False)


def check_output_of_an_inherited_variable() -> None:
    """c03, correct: the main thread sets the variable before starting the threads; each reads
    it back through a child (``check_output``: one pipe) and through ``["true"]``'s exit."""
    os.environ["LC_R12_MAIN"] = "main"

    def work() -> None:
        subprocess.run(["true"], check=True)
        assert subprocess.check_output(["sh", "-c", 'printf %s "$LC_R12_MAIN"']) == b"main"

    start_and_join(work, work)


def child_may_start_before_the_variable_is_set() -> None:
    """c03's buggy variant: one thread sets the variable (after a moment), the other's child
    reads it, nothing orders them: the child may run first (as it does in most real runs)."""

    def setter() -> None:
        time.sleep(0.01)
        os.environ["LC_R12_LATE"] = "set"

    def runner() -> None:
        done = subprocess.run(["sh", "-c", 'printf %s "$LC_R12_LATE"'], capture_output=True)
        assert done.stdout == b"set", "the child ran before the variable was set"

    try:
        start_and_join(setter, runner)
    finally:
        os.environ.pop("LC_R12_LATE", None)


# ---------------------------------------------------------------- c11/r05: temporary folders
def temporary_directories_round_trip() -> None:
    """c11/r05, correct: each thread writes a file in its own ``TemporaryDirectory`` and reads it
    back."""

    def work(i: int) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "f.txt")
            with open(path, "w") as fh:
                fh.write(f"hello {i}")
            with open(path) as fh:
                assert fh.read() == f"hello {i}"

    _both(work)


def mkdtemp_then_rmtree_not_joined() -> None:
    """c11/r05, correct: ``mkdtemp`` + ``shutil.rmtree``, bytes written, the main not joining."""

    def work(i: int) -> None:
        folder = tempfile.mkdtemp(prefix=f"lc{i}_")
        try:
            with open(os.path.join(folder, "data"), "wb") as fh:
                fh.write(bytes([i]) * 10)
            with open(os.path.join(folder, "data"), "rb") as fh:
                assert fh.read() == bytes([i]) * 10
        finally:
            shutil.rmtree(folder)

    _both(work, join=False)


def one_fixed_name_unlocked() -> None:
    """c11's buggy variant: both threads write and read back one fixed name of the temporary
    folder with no lock: one may read the other's contents."""
    path = os.path.join(tempfile.gettempdir(), f"lanecheck_r12_fixed_{os.getpid()}.txt")

    def work(i: int) -> None:
        with open(path, "w") as fh:
            fh.write(f"thread {i}")
        with open(path) as fh:
            assert fh.read() == f"thread {i}", "the other thread's contents"

    try:
        _both(work)
    finally:
        if os.path.exists(path):
            os.remove(path)


# ------------------------------------------------------------------ c02: tempfile and logging
def _log_to(path: str, name: str) -> tuple[logging.Logger, logging.Handler]:
    log = logging.getLogger(name)
    log.setLevel(logging.INFO)
    log.propagate = False
    handler = logging.FileHandler(path)
    log.addHandler(handler)
    return log, handler


def named_temporary_files_logged() -> None:
    """c02, correct: a ``FileHandler`` on a ``mkstemp`` file; each thread writes and reads its
    own ``NamedTemporaryFile`` and logs its name; two lines in the log."""
    fd, path = tempfile.mkstemp(suffix=".log")
    os.close(fd)
    log, handler = _log_to(path, "lanecheck.r12.c02")

    def work(i: int) -> None:
        with tempfile.NamedTemporaryFile("w+") as fh:
            fh.write(f"x{i}")
            fh.flush()
            fh.seek(0)
            assert fh.read() == f"x{i}"
            log.info("thread %d wrote %s", i, fh.name)

    try:
        _both(work)
    finally:
        log.removeHandler(handler)
        handler.close()
    with open(path) as fh:
        lines = fh.readlines()
    os.remove(path)
    assert len(lines) == 2, lines


def basic_config_kept_open_with_mkstemp() -> None:
    """c02, correct: ``basicConfig`` to a file of a ``mkdtemp`` folder, its handler left open (the
    check puts ``logging``'s configuration back); the threads ``mkstemp`` in the folder and log.
    (Under pytest, whose handlers the root logger has, ``basicConfig`` leaves them.)"""
    root = logging.getLogger()
    before = list(root.handlers)
    folder = tempfile.mkdtemp(prefix="lc02_")
    logging.basicConfig(filename=os.path.join(folder, "app.log"), level=logging.INFO)

    def work(i: int) -> None:
        fd, path = tempfile.mkstemp(dir=folder)
        os.write(fd, b"%d" % i)
        os.close(fd)
        logging.info("thread %d made %s", i, path)
        os.remove(path)

    _both(work)
    for handler in [h for h in root.handlers if h not in before]:
        root.removeHandler(handler)
        handler.close()
    shutil.rmtree(folder)


# configured at import, as applications do (its folder removed at the interpreter's exit)
_IMPORT_FOLDER = tempfile.mkdtemp(prefix="lc02_import_")
atexit.register(shutil.rmtree, _IMPORT_FOLDER, True)
_IMPORT_LOG, _IMPORT_HANDLER = _log_to(os.path.join(_IMPORT_FOLDER, "import.log"), "lanecheck.r12.c02.import")


def logger_configured_again() -> None:
    """c02, correct: the function configures the logger set up at import again, as
    ``basicConfig(force=True)`` does the root: the import's handler removed and closed (flushed
    first), a handler of its own to a temporary file, the threads logging the names of their
    ``NamedTemporaryFile``s. A real run closes the import's handler once; the check put it back
    closed, and the second execution's flush raised "I/O operation on closed file"."""
    for handler in _IMPORT_LOG.handlers[:]:
        _IMPORT_LOG.removeHandler(handler)
        handler.close()
    fd, path = tempfile.mkstemp(suffix=".log")
    os.close(fd)
    mine = logging.FileHandler(path)
    _IMPORT_LOG.addHandler(mine)

    def work(i: int) -> None:
        with tempfile.NamedTemporaryFile() as fh:
            _IMPORT_LOG.info("thread %d has %s", i, fh.name)

    _both(work)
    _IMPORT_LOG.removeHandler(mine)
    mine.close()
    os.remove(path)


def logged_contents_of_one_temporary_name() -> None:
    """c02's buggy variant: the threads write one name of a temporary folder unlocked and log
    what they read back: one may log the other's."""
    folder = tempfile.mkdtemp(prefix="lc02_bug_")
    log, handler = _log_to(os.path.join(folder, "bug.log"), "lanecheck.r12.c02.bug")
    shared = os.path.join(folder, "shared.txt")

    def work(i: int) -> None:
        with open(shared, "w") as fh:
            fh.write(f"thread {i}")
        with open(shared) as fh:
            seen = fh.read()
        log.info("thread %d read %s", i, seen)
        assert seen == f"thread {i}", "the other thread's contents"

    try:
        _both(work)
    finally:
        log.removeHandler(handler)
        handler.close()
        shutil.rmtree(folder)


# ------------------------------------------------- the time limit in a child's wait (left open)
def a_child_then_a_lock_beside_a_thread() -> None:
    """Correct: one thread runs a child that sleeps 0.2 s, then takes the lock three times; the
    other takes it three times. With a time limit of a few of its executions, the limit is
    reached in the child's wait while the search replays a prefix."""
    lock = threading.Lock()
    taken: list[int] = []

    def after_a_child() -> None:
        subprocess.run(["sleep", "0.2"], check=True)
        for k in range(3):
            with lock:
                taken.append(k)

    def alone() -> None:
        for k in range(3):
            with lock:
                taken.append(k)

    start_and_join(after_a_child, alone)
    assert len(taken) == 6
