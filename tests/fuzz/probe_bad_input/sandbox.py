"""Run one probe case in a forked child under a memory cap and a wall-clock limit, and class it."""

from __future__ import annotations

import json
import logging
import os
import resource
import select
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable

GOOD = ("named error", "right answer")
BAD = ("TRACEBACK", "HANG", "RUNAWAY", "LOST ITEM", "SILENTLY WRONG")
WALL_SECONDS = 20.0
MEMORY_BYTES = 1 << 30

Outcome = tuple[str, str]
Case = tuple[str, Callable[[], Outcome]]


def _child(fn: Callable[[], Outcome], out: int) -> None:
    # Threads reserve their stack as address space: keep them small so the cap measures data.
    threading.stack_size(512 * 1024)
    logging.disable(logging.CRITICAL)  # the references log the user callbacks' errors: not findings
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    try:
        cls, detail = fn()
    except MemoryError:
        cls, detail = "RUNAWAY", "MemoryError"
    except BaseException as exc:
        cls, detail = "TRACEBACK", f"{type(exc).__name__}: {exc}"[:300]
        if os.environ.get("PROBE_TRACEBACK"):
            traceback.print_exc()
    os.write(out, json.dumps([cls, detail]).encode()[:60000])
    os._exit(0)


def run_case(fn: Callable[[], Outcome]) -> Outcome:
    """Run ``fn`` in a forked child under the memory and time limits."""
    sys.stdout.flush()
    sys.stderr.flush()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        _child(fn, write)
    os.close(write)
    deadline = time.monotonic() + WALL_SECONDS
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            return "HANG", f"still running after {WALL_SECONDS:g} s"
        ready, _, _ = select.select([read], [], [], left)
        if ready:
            chunk = os.read(read, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        if os.WIFSIGNALED(status):
            return "RUNAWAY", f"killed by signal {os.WTERMSIG(status)}"
        return "TRACEBACK", f"the child died (status {status}) without a word"
    cls, detail = json.loads(b"".join(chunks))
    return str(cls), str(detail)
