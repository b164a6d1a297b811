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
