"""The event pool's two engines agree (spec_search_checks.py says how): the hand-written ``FORMAT``
and the streaming search of the spec's own actions (``trace.spec_search.SPEC_FORMAT``). Here, the
format itself, hand-made traces (each rule's minimal bad trace, the fast format's own valid traces,
the orders of SetEvents and waits the reference may log) and ``lanecheck validate --engine spec``.
Generated traces and real-thread runs, with their edits: test_spec_search_runs.py; every harness
execution of small scenarios and each reference mutant's failing trace: test_spec_search_harness.py.

Two differences the fast model once had are rules of its own now (rule 8), so no longer tolerated:
a ``wake stop`` before every accepted work settled (``stop`` sets the stop event only after the last
settle), and a ``stop(discard)`` that does not log the whole list right after its ``stop_begin``."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from model_checks.conformance.search import TraceSearch
from model_checks.conformance.streamed import DesignFormat
from model_checks.conformance.verdict import ALLOWED, MALFORMED, NOT_ALLOWED, Verdict
from model_checks.design import load
from model_checks.designs.event_pool import DESIGN
from model_checks.designs.event_pool.trace import validate_lines
from model_checks.designs.event_pool.trace.generate import lines as generated
from model_checks.designs.event_pool.trace.late_signals import MAX_LATE, PoolState
from model_checks.designs.event_pool.trace.spec_search import SPEC_FORMAT
from spec import event_pool as ep
from tests.event_pool import test_trace
from tests.event_pool.spec_search_checks import agree, check_agreement, spec_verdict
from tests.event_pool.trace_cases import CASES, GOOD_ONE, done, post, run, signal, take, trace, wait, wake

# ------------------------------------------------------------------ the format itself


def test_the_design_names_the_spec_format_and_its_search_is_observable() -> None:
    named = load(DESIGN.spec_trace_format or "")
    assert named is SPEC_FORMAT and isinstance(named, DesignFormat)
    seen: list[int] = []

    def observe(search: TraceSearch) -> None:
        assert all(isinstance(s, PoolState) for s in search.states)
        seen.append(len(search.states))

    lines = trace(*GOOD_ONE, threads=1)
    verdict = SPEC_FORMAT.validate(
        json.loads(lines[0]), iter(lines[1:]), engine="spec", complete=False, observe=observe
    )
    assert verdict.code == ALLOWED and not verdict.prefix, verdict.message
    assert len(seen) == len(GOOD_ONE) + 1  # before the first event, then after each


@pytest.mark.parametrize(
    "line",
    [
        '{"seq": 1, "thread": "main", "event": "post", "item": null, "to": null, "result": "ok"}',
        '{"seq": 1, "thread": "main", "event": "post", "item": 0, "to": "t0", "result": "invalid_state"}',
        '{"seq": 1, "thread": "t0", "event": "wake", "result": "maybe"}',
        '{"seq": 1, "thread": "t0", "event": "done", "item": 0}',
        '{"seq": 2, "thread": "t0", "event": "wait"}',
        '{"seq": 1, "thread": "t0", "event": "jump"}',
        '{"seq": 1, "thread": "t0", "event": "take", "item": 1.0}',
        "not json",
    ],
)
def test_a_malformed_line_is_malformed_for_both_at_its_line(line: str) -> None:
    fast, spec = agree([*trace(threads=1), line])
    assert fast.code == MALFORMED and spec.line == 2, spec.message


def test_a_malformed_header_is_malformed_for_both() -> None:
    head = {"trace": "lanecheck", "version": 1, "design": "event-pool", "config": {"threads": 2.0}}
    fast, _ = agree([json.dumps(head)])
    assert fast.code == MALFORMED and fast.line == 1


# ------------------------------------------------------------------ hand-made traces


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_rules_bad_trace_is_rejected_by_both(name: str) -> None:
    events, threads, complete, seq, _, _ = CASES[name]
    fast, _ = agree(trace(*events, threads=threads), complete)
    assert fast.code == NOT_ALLOWED and fast.seq == seq, fast.message
    # Cut before the bad event, both allow the prefix.
    if seq is not None and not complete:
        assert agree(trace(*events[: seq - 1], threads=threads))[0].code == ALLOWED


def test_the_seqs_may_differ_only_at_an_unanswered_wait_at_the_end() -> None:
    events, threads, _, _, _, _ = CASES["lost wakeup (pulse)"]
    lines = trace(*events, threads=threads)
    fast, spec = agree(lines, complete=True)
    assert (fast.seq, spec.seq) == (4, None), (fast.message, spec.message)
    # Any other difference is refused: a seq named by the search, another rule, a trace that is
    # not judged complete, a wait its thread got past.
    for other in (
        (lines, True, fast, replace(spec, seq=3)),
        (lines, True, replace(fast, rule=8), spec),
        (lines, False, fast, spec),
        ([*lines, trace(*events, wake("t0", "stop"), threads=threads)[-1]], True, fast, spec),
    ):
        with pytest.raises(AssertionError):
            check_agreement(*other)


@pytest.mark.parametrize(
    "test",
    [
        test_trace.test_two_threads_idle_first_timeouts_coalesced_signals_cancel_and_a_callback_post,
        test_trace.test_a_signal_may_come_after_stop_end_and_after_its_thread_exited,
        test_trace.test_stop_discard_drops_the_list_and_running_work_finishes,
        test_trace.test_a_complete_run_without_stop_is_allowed_when_nothing_is_owed,
        test_trace.test_wake_stop_may_come_between_the_last_done_and_its_take_and_an_empty_list_is_not_discarded,
    ],
)
def test_the_fast_formats_own_valid_traces_agree(
    test: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each of test_trace's tests of a valid trace, with every verdict it asks for checked by both."""
    asked: list[int] = []

    def both(lines: list[str], complete: bool = False) -> Verdict:
        asked.append(agree(lines, complete)[0].code)
        return validate_lines(lines, complete=complete)

    monkeypatch.setattr(test_trace, "validate_lines", both)
    test()
    assert ALLOWED in asked


def test_the_hand_made_valid_traces_are_allowed_by_both() -> None:
    fast, _ = agree(trace(*GOOD_ONE, threads=1))
    assert fast.code == ALLOWED and not fast.prefix
    fast, _ = agree(trace(*GOOD_ONE[:6], threads=1))
    assert fast.code == ALLOWED and fast.prefix


def test_a_signal_logged_after_a_wait_may_coalesce_before_it() -> None:
    """``wait`` is logged just before the wait and ``signal`` just before SetEvent: a SetEvent
    logged after a thread's ``wait`` may still come before that wait and coalesce with a signal
    left set, so the thread's next wait may time out. A generated 20k-event trace showed it: the
    search once bound ``wait`` to the wait itself and refused the timeout."""
    events = [
        wait("t0"),
        wake("t0", "timeout"),
        post(0, "t0"),  # t0 is idle (awake, it has not looked at the list yet): picked
        take("t0", 0),
        signal("t0"),  # t0 is awake: its event stays set
        run("t0", 0),
        done("t0", 0),
        take("t0", None),
        wait("t0"),  # logged; the wait itself may come after the next SetEvent
        post(1, "t0"),
        signal("t0"),  # may coalesce with the one left set; then the wait consumes both
        wake("t0"),
        take("t0", 1),
        run("t0", 1),
        done("t0", 1),
        take("t0", None),
        wait("t0"),
        wake("t0", "timeout"),
    ]
    fast, _ = agree(trace(*events, threads=1))
    assert fast.code == ALLOWED and fast.prefix, fast.message
    # Or the wait came first and consumed the old signal: the last wait returns at once.
    fast, _ = agree(trace(*events[:-1], wake("t0"), threads=1))
    assert fast.code == ALLOWED and fast.prefix, fast.message
    # One signal, two wakes by the event: an auto-reset event releases one wait per SetEvent.
    fast, spec = agree(trace(*events[:9], wake("t0"), take("t0", None), wait("t0"), wake("t0"), threads=1))
    assert fast.code == NOT_ALLOWED and fast.rule == spec.rule == 6, (fast.message, spec.message)


def test_a_signals_setevent_may_come_after_the_thread_timed_out() -> None:
    """``signal`` is logged just before SetEvent, so the signalled thread may log its wait and time
    out before the SetEvent; the SetEvent comes before the poster's next event, though. Found in
    session 32: the search bound ``signal`` to the SetEvent itself and refused a reference trace."""
    late = [post(0, "t0"), signal("t0"), wait("t0"), wake("t0", "timeout"), take("t0", 0)]
    fast, _ = agree(trace(*late, threads=1))
    assert fast.code == ALLOWED and fast.prefix, fast.message
    # The SetEvent was made meanwhile and left the event set: the next wait returns at once ...
    again = [*late, run("t0", 0), done("t0", 0), take("t0", None), wait("t0")]
    fast, _ = agree(trace(*again, wake("t0"), threads=1))
    assert fast.code == ALLOWED and fast.prefix, fast.message
    # ... or the SetEvent is still to come (the poster logged nothing since): a timeout again.
    fast, _ = agree(trace(*again, wake("t0", "timeout"), threads=1))
    assert fast.code == ALLOWED and fast.prefix, fast.message


def test_a_signals_setevent_comes_before_the_posters_next_event() -> None:
    """Both engines hold the SetEvent to program order: a signal logged after the thread's last wake,
    whose poster logged its next event before the thread's wait, left the event set for that wait,
    which cannot time out (rule 6). The fast engine once matched wakes against the signals logged
    before them and never their timing, and allowed these (the outside review's row 3)."""
    # main posts again, so its SetEvent on t0 was made: t0's wait, logged after, finds the event set.
    events = [post(0, "t0"), signal("t0"), post(1, None), wait("t0"), wake("t0", "timeout")]
    fast, spec = agree(trace(*events, threads=1))
    assert fast.code == spec.code == NOT_ALLOWED and fast.seq == spec.seq == 5, (fast.message, spec.message)
    assert fast.rule == spec.rule == 6 and "set before its wait at seq 4" in fast.message
    # The same two SetEvents made in a callback by a pool thread (a client inside its callback).
    inner = [
        wait("t1"),
        post(0, "t1"),
        signal("t1"),
        wake("t1"),
        take("t1", 0),
        run("t1", 0),
        post(1, "t0", thread="t1"),
        signal("t0", thread="t1"),
        wait("t0"),
        wake("t0", "timeout"),
    ]
    fast, _ = agree(trace(*inner, threads=2))
    assert fast.code == ALLOWED, fast.message
    # t1's done comes after its SetEvent: t0's wait logged after that done finds the event set.
    fast, spec = agree(trace(*inner[:8], done("t1", 0), *inner[8:], threads=2))
    assert fast.code == spec.code == NOT_ALLOWED and fast.seq == spec.seq == 11, (fast.message, spec.message)
    # A wake between the signal and the wait may have consumed that SetEvent: no conclusion.
    consumed = [post(0, "t0"), signal("t0"), wait("t0"), wake("t0"), take("t0", 0), run("t0", 0)]
    consumed += [done("t0", 0), post(1, None), take("t0", 1), run("t0", 1), done("t0", 1)]
    fast, _ = agree(trace(*consumed, take("t0", None), wait("t0"), wake("t0", "timeout"), threads=1))
    assert fast.code == ALLOWED, fast.message
    # Made while t0 waits: if that wait times out, the SetEvent came after it, so the next wait
    # finds the event set and cannot time out; if it woke by the event, it consumed it.
    during = [post(0, "t0"), signal("t0"), wait("t0"), post(1, None), wake("t0", "timeout")]
    again = [take("t0", 0), run("t0", 0), done("t0", 0), take("t0", 1), run("t0", 1), done("t0", 1)]
    again += [take("t0", None), wait("t0")]
    fast, spec = agree(trace(*during, *again, wake("t0", "timeout"), threads=1))
    assert fast.code == spec.code == NOT_ALLOWED and fast.seq == spec.seq == 14, (fast.message, spec.message)
    assert fast.rule == 6
    consumed_during = [*during[:4], wake("t0"), *again, wake("t0", "timeout")]
    fast, _ = agree(trace(*consumed_during, threads=1))
    assert fast.code == ALLOWED, fast.message
    # Logged before the done, the wait may have blocked and timed out before the SetEvent.
    fast, _ = agree(trace(*inner[:9], done("t1", 0), inner[9], threads=2))
    assert fast.code == ALLOWED, fast.message


def test_the_search_state_is_the_specs_vars_and_the_setevents_owed() -> None:
    # ``PoolState`` repeats ``Vars``'s fields (``bound`` builds one from a Vars by position): a field
    # added to the spec must be added there too.
    assert PoolState._fields == (*ep.Vars._fields, "late")


def test_more_setevents_owed_at_once_than_the_search_keeps_is_said_so() -> None:
    # Seventeen clients each pick t0 and log their signal; none has made its SetEvent yet.
    events: list[Any] = []
    for i in range(MAX_LATE + 1):
        client = f"c{i}"
        events += [post(i, "t0", thread=client), signal("t0", thread=client), wait("t0")]
        events += [wake("t0", "timeout"), take("t0", i), run("t0", i), done("t0", i), take("t0", None)]
    lines = trace(*events, threads=1)
    spec = spec_verdict(lines)
    line = 8 * MAX_LATE + 3  # the seventeenth signal
    assert spec.code == MALFORMED and spec.line == line, spec.message
    assert f"more than {MAX_LATE} SetEvents logged and not yet made" in spec.message
    # One SetEvent fewer is judged: every client may make its SetEvent after t0's timeouts.
    assert spec_verdict(lines[: line - 1]).code == ALLOWED


def test_a_wake_by_stop_before_a_work_settled_is_refused_by_both() -> None:
    """No behaviour of the reference logs it: stop sets the stop event after the last settle."""
    events = [
        *CASES["take of a cancelled work"][0][:4],  # t0 woken for work 0
        ("t0", "take", {"item": 0}),
        ("t0", "run", {"item": 0}),
        ("main", "stop_begin", {"mode": "drain"}),
        ("t1", "wait", {}),
        ("t1", "wake", {"result": "stop"}),  # the stop event is set only after work 0 settles
        ("t0", "done", {"item": 0, "raised": False}),
        ("t0", "take", {"item": None}),
        ("t0", "wait", {}),
        ("t0", "wake", {"result": "stop"}),
        ("main", "stop_end", {"mode": "drain", "result": "ok"}),
    ]
    fast, spec = agree(trace(*events))
    assert fast.code == NOT_ALLOWED and fast.seq == 9 and fast.rule == spec.rule == 8, fast.message
    # With the done first, both allow it.
    fast, _ = agree(trace(*events[:7], events[9], events[7], events[8], *events[10:]))
    assert fast.code == ALLOWED and not fast.prefix, fast.message


def test_stop_discard_must_log_the_whole_list_before_anything_under_its_lock() -> None:
    head: list[tuple[str, str, dict[str, Any]]] = [
        ("t0", "wait", {}),
        ("main", "post", {"item": 0, "to": "t0", "result": "ok"}),
        ("main", "signal", {"to": "t0"}),
        ("main", "post", {"item": 1, "to": None, "result": "ok"}),
        ("main", "stop_begin", {"mode": "discard"}),
    ]
    # A take between stop_begin(discard) and its discard: both refuse it, at that take.
    between = trace(*head, ("t0", "wake", {"result": "event"}), ("t0", "take", {"item": None}), threads=1)
    fast, spec = agree(between)
    assert fast.code == NOT_ALLOWED and spec.seq == 7 and spec.rule == 8, spec.message
    # A discard of part of the list: both refuse it there (the reference discards the whole list).
    part = trace(*head, ("main", "discard", {"items": [1]}), ("t0", "wake", {"result": "event"}), threads=1)
    fast, spec = agree(part)
    assert fast.code == NOT_ALLOWED and fast.seq == 6 and "works [0, 1]" in fast.message, fast.message
    assert "works [0, 1]" in spec.message, spec.message
    # The whole list: both allow it.
    whole = trace(
        *head, ("main", "discard", {"items": [0, 1]}), ("t0", "wake", {"result": "event"}), threads=1
    )
    assert agree(whole)[0].code == ALLOWED


# ------------------------------------------------------------------ the command line


def test_validate_engine_spec_judges_an_event_pool_trace_by_the_spec_search(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from model_checks.cli import app

    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(generated(40, threads=2, seed=3, stop="drain")) + "\n")
    bad = tmp_path / "bad.jsonl"
    events, threads = CASES["wake stop with work never run"][:2]
    bad.write_text("\n".join(trace(*events, threads=threads)) + "\n")
    for path, code in ((good, 0), (bad, 1)):
        fast = CliRunner().invoke(app, ["validate", str(path), "--json"])
        spec = CliRunner().invoke(app, ["validate", str(path), "--engine", "spec", "--json"])
        assert (fast.exit_code, spec.exit_code) == (code, code), (fast.output, spec.output)
        assert json.loads(fast.stdout)["engine"] == "fast"
        assert json.loads(spec.stdout)["engine"] == "spec"
