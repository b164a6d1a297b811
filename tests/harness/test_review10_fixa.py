"""Review 10, rows 11, 12 and 14.

Row 11: a failure whose message holds an object whose repr takes a controlled lock (a
``Future``, a program's own class) ended lanecheck with "acquire on rlock#5 outside a controlled
thread" and no report; the message is now rendered as the failing thread would render it
(``rt/inspection.py``). Row 12: ``multiprocessing.dummy.Process`` failed with "Thread.__init__()
not called" (its class is rebased as a program's is); its ``Pool`` is refused by name, as
``ThreadPool`` is. Row 14: an empty ``select``/``poll``/selector with a timeout is a sleep of the
virtual clock, not a step of real time (a poll loop pausing so was called a livelock)."""

from __future__ import annotations

import re
import time
from typing import Any, cast

import pytest

from model_checks.harness import Options
from model_checks.harness.rt.scheduler import UsageError
from tests.harness import review10_fixa_programs as prog
from tests.harness.patched_runs import assert_fails, assert_outcomes, run_patched, run_with_outcomes

pytestmark = pytest.mark.timeout(120)


def test_a_failure_whose_message_holds_futures_is_reported_and_replays() -> None:
    result = run_patched(prog, prog.futures_in_message, options=Options(time_limit=60))
    words = ("AssertionError: [<Future at ", "state=finished returned int>, <Future at ")
    failure = assert_fails(result, "assertion", *words)
    assert "assert sum(f.result() for f in fs) == 4, fs" in failure.details, failure.details
    assert words[1] in failure.details, failure.details  # the traceback's last line too
    assert failure.schedule.startswith("lc1."), failure.schedule
    again = run_patched(prog, prog.futures_in_message, options=Options(replay=failure.schedule))
    assert_fails(again, "assertion", *words)


def test_a_programs_own_repr_taking_a_free_lock_is_shown() -> None:
    result = run_patched(prog, prog.own_repr_in_message, options=Options(time_limit=60))
    assert_fails(result, "assertion", "raised AssertionError: Box(n=1)")


def test_a_repr_that_would_wait_for_a_held_lock_says_so() -> None:
    result = run_patched(prog, prog.repr_waits_in_message, options=Options(time_limit=60))
    failure = assert_fails(
        result, "assertion", "AssertionError: <message not shown: its str() would wait for "
    )
    assert "held by main" in failure.message, failure.message


def test_a_repr_raising_while_it_holds_a_lock_leaves_it_free() -> None:
    result = run_patched(prog, prog.repr_raises_holding_a_lock, options=Options(time_limit=60))
    assert_fails(
        result, "assertion", "AssertionError: <message not shown: its str() raised ValueError: no repr>"
    )
    lock: Any = prog.MADE[0].lock
    assert lock._st.owner is None and lock._st.count == 0, (lock._st.owner, lock._st.count)


def test_multiprocessing_dummy_processes_are_controlled_threads() -> None:
    assert_outcomes(run_with_outcomes(prog, prog.dummy_processes), {(2, 0, 0)})


def test_multiprocessing_dummy_pool_is_refused_by_name() -> None:
    with pytest.raises(
        UsageError, match=r"multiprocessing\.dummy\.Pool is multiprocessing\.pool's ThreadPool"
    ):
        run_patched(prog, prog.dummy_pool, options=Options(time_limit=60))


def test_an_empty_select_poll_or_selector_pausing_a_poll_loop_is_a_sleep() -> None:
    began = time.monotonic()
    result = run_patched(prog, prog.empty_waits_loop, options=Options(time_limit=60))
    assert result.verdict == "exhaustive", result.report()
    assert time.monotonic() - began < 20, "the empty waits took real time"


def test_an_empty_wait_moves_the_virtual_clock_by_its_timeout() -> None:
    began = time.monotonic()
    assert_outcomes(run_with_outcomes(prog, prog.empty_waits_clock), {15.0})
    assert time.monotonic() - began < 10, "the empty waits took real time"


def _masked(text: str) -> str:
    """A repr without what differs between runs: addresses and thread idents."""
    return re.sub(r"0x[0-9a-f]+|(?<=owner=)[1-9]\d*|(?<=started )\d+|(?<=daemon )\d+", "N", text)


def test_the_controlled_objects_reprs_are_cpythons() -> None:
    real = tuple(map(_masked, prog.reprs_seen()))  # plain threads, unpatched
    result = run_with_outcomes(prog, prog.reprs_seen)
    assert result.verdict == "exhaustive", result.report()
    seen = {tuple(_masked(str(text)) for text in cast(tuple[str, ...], one)) for one in result.outcomes}
    assert seen == {real}, (real, result.outcomes)
