"""The event-pool trace validator on valid traces: complete ones are allowed, prefixes (a trace cut
before stop_end or before a bad event) are allowed as prefixes with what is pending.

``test_spec_search`` replaces this module's ``validate_lines`` to check its valid-trace tests with both
engines: they call it through this module.
"""

from __future__ import annotations

import json

import pytest

from model_checks.conformance.verdict import ALLOWED, NOT_ALLOWED
from model_checks.designs.event_pool.trace import FORMAT, RULES, validate_lines
from model_checks.designs.event_pool.trace.generate import lines as generated
from model_checks.designs.event_pool.trace.rules import PREFIX_RULE
from model_checks.designs.event_pool.trace.validate import judge
from tests.event_pool.trace_cases import (
    CASES,
    GOOD_ONE,
    T0_PICKED,
    W0,
    Ev,
    cancel,
    cycle,
    discard,
    done,
    post,
    rejected,
    run,
    shutdown,
    signal,
    stop_begin,
    stop_end,
    take,
    trace,
    wait,
    wake,
)


def test_a_complete_trace_is_allowed() -> None:
    verdict = validate_lines(trace(*GOOD_ONE, threads=1))
    assert verdict.code == ALLOWED and not verdict.prefix, verdict.message
    assert verdict.events == len(GOOD_ONE)


def test_two_threads_idle_first_timeouts_coalesced_signals_cancel_and_a_callback_post() -> None:
    events: list[Ev] = [
        *T0_PICKED,
        post(1, "t1"),
        wake("t0"),
        take("t0", 0),
        run("t0", 0),
        post(2, None, thread="t0"),  # a callback posts while both threads are busy
        done("t0", 0, raised=True),
        take("t0", 1),  # t1 was picked but t0 finished first: it takes t1's work
        signal("t1"),
        run("t0", 1),
        wake("t1"),
        *cycle("t1", 2),
        take("t1", None),  # nothing left: t1 is idle again
        done("t0", 1),
        take("t0", None),
        wait("t0"),
        wake("t0", "timeout"),  # a timed-out wait looks at the list again
        post(3, "t1"),
        signal("t1"),
        post(4, "t0", thread="other"),  # t0 timed out and is still idle: it can be picked
        cancel(4),
        *cycle("t0", 3),  # t0 is awake: it takes the work posted for t1
        take("t0", None),
        signal("t0", thread="other"),
        wait("t1"),
        wake("t1"),  # t1's second signal: it finds nothing (its work was taken) and waits again
        take("t1", None),
        wait("t0"),
        wake("t0"),
        take("t0", None),
        *shutdown("t0", "t1"),
    ]
    verdict = validate_lines(trace(*events))
    assert verdict.code == ALLOWED and not verdict.prefix, verdict.message


def test_a_signal_may_come_after_stop_end_and_after_its_thread_exited() -> None:
    events: list[Ev] = [
        wait("t0"),
        post(0, "t0", thread="poster"),  # the poster is preempted before its SetEvent
        wake("t0", "timeout"),
        *cycle("t0", 0),
        take("t0", None),
        *shutdown("t0"),
        signal("t0", thread="poster"),
        post(None, None, result="invalid_state"),
    ]
    verdict = validate_lines(trace(*events, threads=1))
    assert verdict.code == ALLOWED and not verdict.prefix, verdict.message


def test_stop_discard_drops_the_list_and_running_work_finishes() -> None:
    events: list[Ev] = [
        wait("t0"),
        post(0, "t0"),
        signal("t0"),
        post(1, None),
        post(2, None),
        wake("t0"),
        take("t0", 0),
        ("main", "stop_begin", {"mode": "discard"}),
        discard(1, 2),
        post(None, None, result="invalid_state"),
        run("t0", 0),
        done("t0", 0),
        take("t0", None),
        wait("t0"),
        wake("t0", "stop"),
        stop_end("discard"),
    ]
    verdict = validate_lines(trace(*events, threads=1))
    assert verdict.code == ALLOWED and not verdict.prefix, verdict.message


def test_wake_stop_may_come_between_the_last_done_and_its_take_and_an_empty_list_is_not_discarded() -> None:
    # The last settle is in the critical section of the take after done, which sets the stop
    # event's precondition before that take is logged: another thread may log wake stop between.
    events: list[Ev] = [
        *T0_PICKED,
        wake("t0"),
        take("t0", 0),
        run("t0", 0),
        stop_begin("discard"),  # the list is empty: no discard follows
        done("t0", 0),
        wake("t1", "stop"),
        take("t0", None),
        wait("t0"),
        wake("t0", "stop"),
        stop_end("discard"),
    ]
    verdict = validate_lines(trace(*events))
    assert verdict.code == ALLOWED and not verdict.prefix, verdict.message
    # One event earlier, t1's wake stop comes before work 0 settled.
    early = [*events[:8], events[9], events[8], *events[10:]]
    rejected(early, 9, 8, "t0 runs 0", validate=validate_lines)  # this module's: see the module doc


def test_a_trace_without_stop_end_is_a_prefix_with_what_is_pending() -> None:
    verdict = validate_lines(trace(*GOOD_ONE[:6], threads=1))
    assert verdict.code == ALLOWED and verdict.prefix and verdict.rule == PREFIX_RULE
    assert verdict.pending == {"listed": [1], "taken or running": {"t0": 0}}
    assert "1 works in the list [1]" in verdict.message


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("stop", ["drain", "discard"])
def test_generated_traces_are_complete_and_allowed(seed: int, stop: str) -> None:
    text = list(generated(2_000, threads=1 + seed % 3, seed=seed, stop=stop, timeouts=0.05, cancels=0.05))
    verdict = validate_lines(text)
    assert verdict.code == ALLOWED and not verdict.prefix, verdict.message


def test_the_format_object_has_the_rules_and_refuses_another_engine() -> None:
    assert FORMAT.design == "event-pool" and set(FORMAT.rules) == set(range(1, 11)) and FORMAT.rules is RULES
    text = trace(*GOOD_ONE, threads=1)
    head = json.loads(text[0])
    assert FORMAT.validate(head, iter(text[1:]), engine="fast", complete=False).code == ALLOWED
    assert judge(head, iter(text[1:-1])).prefix  # without stop_end: a prefix
    with pytest.raises(ValueError, match="one engine"):
        FORMAT.validate(head, iter([]), engine="spec", complete=False)


def test_the_same_traces_cut_before_the_bad_event_are_allowed_prefixes() -> None:
    for name, (events, threads, complete, seq, _, _) in CASES.items():
        if seq is None or complete:
            continue
        verdict = validate_lines(trace(*events[: seq - 1], threads=threads))
        assert verdict.code == ALLOWED and verdict.prefix, (name, verdict.message)


def test_a_complete_run_without_stop_is_allowed_when_nothing_is_owed() -> None:
    events = [*W0, *cycle("t0", 0), take("t0", None), wait("t0")]
    assert validate_lines(trace(*events, threads=1), complete=True).code == ALLOWED
    assert validate_lines(trace(*events[:-3], threads=1), complete=True).code == NOT_ALLOWED
