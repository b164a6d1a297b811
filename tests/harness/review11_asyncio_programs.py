"""Review 11's row 19 (see ``test_review11_asyncio.py``): an event loop run in a controlled thread
that another thread hands work with ``run_coroutine_threadsafe`` or ``call_soon_threadsafe``. The
loop learns of the work only from its selector, which the explorer refuses to wait on; but in the
first order explored the loop's thread had not run yet, the poster's timed wait expired (a
virtual timeout) and the check reported the program's ``TimeoutError`` with a replay. The
programs that post without a wait still run."""

from __future__ import annotations

import asyncio
import threading

from tests.harness.program_threads import start_and_join


async def _add(a: int, b: int) -> int:
    await asyncio.sleep(0)
    return a + b


def submitted_to_a_loop_thread() -> None:
    """u45: ``Thread(target=loop.run_forever)``; main submits a coroutine and waits 5 s for it."""
    loop = asyncio.new_event_loop()
    t = threading.Thread(target=loop.run_forever)
    t.start()
    fut = asyncio.run_coroutine_threadsafe(_add(2, 3), loop)
    r = fut.result(timeout=5)
    loop.call_soon_threadsafe(loop.stop)
    t.join()
    loop.close()
    assert r == 5, r


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    loop.run_forever()


def posted_to_a_loop_thread() -> None:
    """The other common shape: the loop's thread runs a function of the program, and main posts
    a callback with ``call_soon_threadsafe`` and waits on an event it sets."""
    loop = asyncio.new_event_loop()
    done = threading.Event()
    t = threading.Thread(target=_serve, args=(loop,))
    t.start()
    loop.call_soon_threadsafe(done.set)
    assert done.wait(timeout=5)
    loop.call_soon_threadsafe(loop.stop)
    t.join()
    loop.close()


def posted_to_its_own_loop() -> None:
    """Correct, still run: a loop's coroutine, in a thread, posts to its own loop (no wait: the
    callback is ready) while main lives (waiting to join it)."""
    out: list[int] = []

    async def job() -> int:
        loop = asyncio.get_running_loop()
        got: asyncio.Future[int] = loop.create_future()
        loop.call_soon_threadsafe(got.set_result, 4)
        return await got

    def work() -> None:
        out.append(asyncio.run(job()))

    start_and_join(work)
    assert out == [4], out


def posted_by_the_only_thread() -> None:
    """Correct, still run: the execution's only thread posts to a loop it then runs itself."""
    loop = asyncio.new_event_loop()
    got: list[int] = []
    loop.call_soon_threadsafe(got.append, 1)
    loop.run_until_complete(asyncio.sleep(0))
    loop.close()
    assert got == [1], got
