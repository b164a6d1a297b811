"""The akka-mailbox validator's own tables agree with the spec, and it streams."""

from __future__ import annotations

import json

import pytest

from model_checks.conformance import ENGINES
from model_checks.conformance.validator import validate_lines
from model_checks.designs.akka_mailbox.configs import CONFIGS
from model_checks.designs.akka_mailbox.trace_search import ENABLED_AT, SPEC_WITHOUT_APPEND_EVENTS
from reference.akka_mailbox import trace_header
from spec import akka_mailbox as am
from tests.spec_helpers import assert_enabled_only_at


def test_enabled_at_is_the_first_guard_of_each_internal_action() -> None:
    """Every internal action, in every reachable state of `small`, is enabled only at its listed pcs:
    in both formats (without `append` events the append is internal too)."""
    pc = lambda s, p: am.Local(s, str(p))[0]  # noqa: E731
    assert_enabled_only_at(SPEC_WITHOUT_APPEND_EVENTS, CONFIGS["small"], ENABLED_AT, pc)
    logged = {name: pcs for name, pcs in ENABLED_AT.items() if name != "Enqueue"}
    assert_enabled_only_at(am.SPEC, CONFIGS["small"], logged, pc)


def _send_and_run(n: int) -> list[str]:
    events: list[dict[str, object]] = []
    for k in range(n):
        events += [
            {"thread": "p0", "event": "send", "mailbox": k % 2, "item": f"m{k}", "result": "ok"},
            {"thread": "p0", "event": "schedule", "mailbox": k % 2},
            {"thread": "p0", "event": "execute", "mailbox": k % 2},
            {"thread": "w0", "event": "run_begin", "mailbox": k % 2},
            {"thread": "w0", "event": "process", "mailbox": k % 2, "item": f"m{k}"},
            {"thread": "w0", "event": "run_end", "mailbox": k % 2, "processed": 1, "status": 0},
        ]
    numbered = [{"seq": i, **e} for i, e in enumerate(events, start=1)]
    return [json.dumps(trace_header({"workers": 1, "throughput": 1}))] + [json.dumps(e) for e in numbered]


def test_cli_path_judges_akka_traces_complete_or_prefix() -> None:
    lines = _send_and_run(50)
    prefix = validate_lines(lines)
    assert prefix.code == 0 and prefix.prefix and prefix.design == "akka-mailbox", prefix.message
    done = validate_lines(lines, complete=True)
    assert done.code == 0 and not done.prefix, done.message
    cut = validate_lines(lines[:-2], complete=True)  # the last message is never processed
    assert cut.code == 1 and cut.seq is None and cut.rule == 6, cut.message
    assert "m49" in cut.message


def _lines(events: list[dict[str, object]]) -> list[str]:
    numbered = [{"seq": i, **e} for i, e in enumerate(events, start=1)]
    return [json.dumps(trace_header({"workers": 1, "throughput": 1}))] + [json.dumps(e) for e in numbered]


# A send accepted by its first read, then a close and its (empty) cleanUp before the append: the
# sender reads Closed after appending and cleans up its own message.
_ACCEPTED_THEN_CLOSED: list[dict[str, object]] = [
    {"thread": "p0", "event": "send", "mailbox": 0, "item": "m0", "result": "ok"},
    {"thread": "s0", "event": "close", "mailbox": 0},
    {"thread": "p0", "event": "dead_letter", "mailbox": 0, "items": ["m0"]},
]


def test_a_sender_cleaning_up_after_a_racing_close_is_accepted() -> None:
    verdict = validate_lines(_lines(_ACCEPTED_THEN_CLOSED), complete=True)
    assert verdict.code == 0 and not verdict.prefix, verdict.message


def test_a_sender_leaving_its_message_in_a_closed_mailbox_is_rejected_when_complete() -> None:
    """The bug of the mutant send-no-clean-up: a prefix, but no complete run ends there."""
    lines = _lines(_ACCEPTED_THEN_CLOSED[:-1])
    assert validate_lines(lines).code == 0
    verdict = validate_lines(lines, complete=True)
    assert verdict.code == 1 and verdict.rule == 6 and "m0" in verdict.message, verdict.message


def test_a_send_accepted_after_the_close_is_rejected() -> None:
    """The send event is the first read: once the word is Closed, a send can only be a dead letter."""
    events = [
        {"thread": "s0", "event": "close", "mailbox": 0},
        {"thread": "p0", "event": "send", "mailbox": 0, "item": "m0", "result": "ok"},
    ]
    verdict = validate_lines(_lines(events))
    assert verdict.code == 1 and verdict.seq == 2 and verdict.rule == 5, verdict.message


def test_an_event_before_the_execute_a_schedule_owes_names_rule_1() -> None:
    """A thread that logged ``schedule`` owes its ``execute`` before any other event of its own:
    the refusal names that (rule 1), not the closed-mailbox words of the event it logged instead."""
    scheduled: list[dict[str, object]] = [
        {"thread": "p0", "event": "send", "mailbox": 0, "item": "m0", "result": "ok"},
        {"thread": "p0", "event": "schedule", "mailbox": 0},
    ]
    for then in (
        {"thread": "p0", "event": "send", "mailbox": 1, "item": "m1", "result": "ok"},
        {"thread": "p0", "event": "send", "mailbox": 0, "item": "m1", "result": "ok"},
        {"thread": "p0", "event": "close", "mailbox": 1},
    ):
        verdict = validate_lines(_lines([*scheduled, then]))
        assert verdict.code == 1 and verdict.seq == 3 and verdict.rule == 1, verdict.message
        assert "p0 logged schedule of mailbox 0 and owes its execute" in verdict.message
    # Another thread's event is no business of p0's schedule.
    other = {"thread": "p1", "event": "send", "mailbox": 1, "item": "m1", "result": "ok"}
    assert validate_lines(_lines([*scheduled, other])).code == 0


def _appends_logged(events: list[dict[str, object]]) -> list[str]:
    header = {"trace": "lanecheck", "version": 1, "design": "akka-mailbox"}
    config = {"workers": 2, "throughput": 2, "logs_append": True}
    numbered = [{"seq": i, **e} for i, e in enumerate(events, start=1)]
    return [json.dumps({**header, "config": config})] + [json.dumps(e) for e in numbered]


def _send(thread: str, mailbox: int, item: str) -> list[dict[str, object]]:
    return [
        {"thread": thread, "event": "send", "mailbox": mailbox, "item": item, "result": "ok"},
        {"thread": thread, "event": "append", "mailbox": mailbox, "item": item},
    ]


RUN_ONE = [
    {"thread": "s0", "event": "schedule", "mailbox": 0},
    {"thread": "s0", "event": "execute", "mailbox": 0},
    {"thread": "w0", "event": "run_begin", "mailbox": 0},
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mailbox", [0, 1])
def test_an_item_id_in_flight_twice_is_refused(engine: str, mailbox: int) -> None:
    """An item id is unique per trace (docs/akka-mailbox.md): a second ok send of one still queued
    is rule 4, whichever mailbox; both engines allowed it, sent twice and processed twice (the
    outside review of the validators, session 42)."""
    events = [*_send("s0", 0, "a"), *RUN_ONE[:2], *_send("s1", mailbox, "a")]
    verdict = validate_lines(_appends_logged(events), engine=engine)
    assert (verdict.code, verdict.seq, verdict.rule) == (1, 5, 4), verdict.message
    assert 'item "a" was already accepted (seq 1, mailbox 0)' in verdict.message


@pytest.mark.parametrize("engine", ENGINES)
def test_an_item_id_sent_again_after_its_process_is_allowed(engine: str) -> None:
    """As the lane designs' ids (docs/trace-format.md, "Still accepted"): unique while in flight."""
    again = [
        {"thread": "w0", "event": "process", "mailbox": 0, "item": "a"},
        {"thread": "w0", "event": "run_end", "mailbox": 0, "processed": 1, "status": 0},
    ]
    events = [*_send("s0", 0, "a"), *RUN_ONE, *again, *_send("s1", 0, "a")]
    verdict = validate_lines(_appends_logged(events), engine=engine)
    assert verdict.code == 0, verdict.message


_CLOSED_THEN: list[dict[str, object]] = [
    {"thread": "p0", "event": "send", "mailbox": 0, "item": "a", "result": "ok"},
    {"thread": "s0", "event": "close", "mailbox": 0},
    {"thread": "s0", "event": "dead_letter", "mailbox": 0, "items": ["a"]},
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("closer", ["s0", "s1"])
def test_a_second_close_of_one_mailbox_is_refused(engine: str, closer: str) -> None:
    """``close`` is the ``becomeClosed`` CAS: on a Closed word it logs nothing (docs/akka-mailbox.md,
    *Trace events*; ``reference.akka_actor.Mailbox.become_closed``), so no run logs two closes of
    one mailbox, whoever logs the second. Both engines allowed it (the second outside review of
    the validators, session 44, F5: /tmp/tracereview2/traces/akka-mailbox/ak02, ak03, ak32)."""
    again = {"thread": closer, "event": "close", "mailbox": 0}
    verdict = validate_lines(_lines([*_CLOSED_THEN, again]), engine=engine, complete=True)
    assert (verdict.code, verdict.seq, verdict.rule) == (1, 4, 5), verdict.message
    assert "mailbox 0 was closed at seq 2" in verdict.message
    # Another mailbox's close is its own first.
    other = {"thread": closer, "event": "close", "mailbox": 1}
    assert validate_lines(_lines([*_CLOSED_THEN, other]), engine=engine, complete=True).code == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_a_message_left_in_a_closed_mailbox_is_not_called_a_lost_wakeup(engine: str) -> None:
    """Rule 6 has two ways to leave a message (docs/akka-mailbox.md): a lost wakeup in an open
    mailbox, or a closed mailbox whose cleanUp is missing; both engines called the second a lost
    wakeup (the second outside review of the validators, session 44, F10: ak16_closed_left)."""
    closed = validate_lines(_lines(_ACCEPTED_THEN_CLOSED[:-1]), engine=engine, complete=True)
    assert (closed.code, closed.rule) == (1, 6), closed.message
    assert closed.message.endswith(
        "messages left in a closed mailbox, no cleanUp dead-lettered them: mailbox 0: ['m0']"
    )
    assert "lost wakeup" not in closed.message
    open_ = validate_lines(_send_and_run(2)[:-2], engine=engine, complete=True)
    assert open_.message.endswith("messages never processed (lost wakeup): mailbox 1: ['m1']"), open_.message
