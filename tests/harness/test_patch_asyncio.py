"""``asyncio``'s event loop waiting on its selector in a controlled thread is refused, not hung on
(``patch_asyncio``; session 38's review: ``asyncio.run`` of ``asyncio.sleep(0.01)`` in a thread ran
past the time limit with no verdict). The programs that still run are catalogued
(tests/harness/asyncio_programs.py)."""

from __future__ import annotations

import selectors
from collections.abc import Callable
from functools import partial

import pytest

from model_checks.harness import patched
from model_checks.harness.rt.scheduler import UsageError
from tests.harness import asyncio_programs as prog
from tests.harness.patched_runs import run_patched

run = partial(run_patched, prog)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("program", [prog.timer_in_a_thread, prog.timers_in_two_threads], ids=["one", "two"])
def test_an_event_loop_that_would_wait_is_refused(program: Callable[[], None]) -> None:
    with pytest.raises(UsageError, match=r"asyncio's event loop .* would wait on its real selector"):
        run(program, time_limit=10)


@pytest.mark.timeout(60)
def test_a_selector_of_the_programs_own_still_waits() -> None:
    # not an event loop's (``subprocess`` waits on one): a real wait, as before
    def program() -> None:
        with selectors.DefaultSelector() as selector:
            assert selector.select(0.001) == []

    result = run(program, time_limit=10)
    assert result.verdict == "exhaustive", result.report()


def _selects() -> dict[type, object]:
    return {
        cls: vars(cls)["select"]
        for cls in vars(selectors).values()
        if isinstance(cls, type) and "select" in vars(cls)
    }


@pytest.mark.timeout(60)
def test_the_selectors_come_back() -> None:
    before = _selects()
    with patched(prog):
        assert _selects() != before
    assert _selects() == before


@pytest.mark.timeout(60)
def test_a_loop_another_part_of_the_process_runs_here_is_set_aside() -> None:
    """A synchronous Playwright session keeps its loop set as this OS thread's running loop; the
    controlled threads, on this same thread, must not see it (``asyncio.run`` in one raised
    "cannot be called from a running event loop" in the whole suite's run)."""
    import asyncio

    outer = asyncio.new_event_loop()
    asyncio.events._set_running_loop(outer)
    try:
        result = run(prog.loop_that_never_waits)
        assert asyncio.events._get_running_loop() is outer  # set back
    finally:
        asyncio.events._set_running_loop(None)
        outer.close()
    assert result.verdict == "exhaustive", result.report()
