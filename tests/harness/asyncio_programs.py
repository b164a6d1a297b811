"""Programs that run ``asyncio`` in a controlled thread (tests/harness/test_patch_asyncio.py). A
loop that waits on its selector (a timer: ``asyncio.sleep`` with a delay) ran past the time limit
with no verdict before session 38 (session 38's review); it is refused now (``patch_asyncio``). A
loop that never waits, or a program that merely imports ``asyncio``, is checked as before."""

from __future__ import annotations

import asyncio
import threading

from tests.harness.program_threads import start_and_join as _run


def timer_in_a_thread() -> None:
    """``asyncio.run`` of a delayed sleep in a thread: the loop waits for its timer."""
    out: list[int] = []
    _run(lambda: out.append(asyncio.run(asyncio.sleep(0.01, result=7))))
    assert out == [7]


def timers_in_two_threads() -> None:
    out = [0, 0]
    lock = threading.Lock()

    async def job(i: int) -> int:
        await asyncio.sleep(0.01)
        return i * 2

    def work(i: int) -> None:
        r = asyncio.run(job(i))
        with lock:
            out[i] = r

    _run(lambda: work(0), lambda: work(1))
    assert out == [0, 2]


def loop_that_never_waits() -> None:
    """Correct: the loop's coroutine yields with ``asyncio.sleep(0)`` only."""
    out: list[int] = []

    async def job() -> int:
        await asyncio.sleep(0)
        return 2

    _run(lambda: out.append(asyncio.run(job())))
    assert out == [2]


def imports_asyncio_only() -> None:
    """Correct: ``asyncio`` imported, not run (``asyncio.Lock`` is no thread's lock)."""
    total = [0]
    lock = threading.Lock()

    def bump() -> None:
        with lock:
            total[0] += 1

    _run(bump, bump)
    assert total[0] == 2 and asyncio.iscoroutinefunction(bump) is False


PROVED = [loop_that_never_waits, imports_asyncio_only]
