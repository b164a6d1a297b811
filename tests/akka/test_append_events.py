"""The optional ``append`` event (docs/akka-mailbox.md, *Trace events*): a header with
``config.logs_append: true`` promises one per ok send, by its sender, after the send and before the
sender's next event and before the message is taken out; without the key none may appear and the
append is placed by the search, as before the event existed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from model_checks.conformance.validator import validate_lines
from model_checks.designs.akka_mailbox.trace import (
    LOGS_APPEND,
    AkkaChecker,
    TraceRejected,
    validate,
    without_append_events,
)
from reference.akka_mailbox import trace_header

LOGGED = {"workers": 1, "throughput": 4, LOGS_APPEND: True}


def send(thread: str, item: str, mailbox: int = 0) -> dict[str, Any]:
    return {"thread": thread, "event": "send", "mailbox": mailbox, "item": item, "result": "ok"}


def append(thread: str, item: str, mailbox: int = 0) -> dict[str, Any]:
    return {"thread": thread, "event": "append", "mailbox": mailbox, "item": item}


def ev(thread: str, kind: str, mailbox: int = 0, **fields: Any) -> dict[str, Any]:
    return {"thread": thread, "event": kind, "mailbox": mailbox, **fields}


def numbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"seq": seq, **e} for seq, e in enumerate(events, start=1)]


# p0 and p1 each send one message to mailbox 0; p1's append comes first, so b is processed first.
TWO_SENDERS = [
    send("p0", "a"),
    send("p1", "b"),
    append("p1", "b"),
    ev("p1", "schedule"),
    ev("p1", "execute"),
    append("p0", "a"),
    ev("w0", "run_begin"),
    ev("w0", "process", item="b"),
    ev("w0", "process", item="a"),
    ev("w0", "run_end", processed=2, status=0),
]


def test_a_valid_trace_is_accepted_in_both_formats() -> None:
    validate(LOGGED, numbered(TWO_SENDERS), complete=True)
    validate(*without_append_events(LOGGED, numbered(TWO_SENDERS)), complete=True)


def test_without_appends_the_other_order_is_allowed_too_with_them_it_is_not() -> None:
    """The appends say b is ahead of a: processing a first is refused only when they are logged."""
    swapped = [*TWO_SENDERS[:7], TWO_SENDERS[8], TWO_SENDERS[7], TWO_SENDERS[9]]
    validate(*without_append_events(LOGGED, numbered(swapped)), complete=True)
    with pytest.raises(TraceRejected) as caught:
        validate(LOGGED, numbered(swapped), complete=True)
    assert caught.value.seq == 8 and caught.value.rule == 4, caught.value.message


def test_without_appends_a_sender_cleaning_up_after_a_racing_close_is_accepted_in_both_formats() -> None:
    events = [send("p0", "m0"), ev("s0", "close"), append("p0", "m0"), ev("p0", "dead_letter", items=["m0"])]
    validate(LOGGED, numbered(events), complete=True)
    validate(*without_append_events(LOGGED, numbered(events)), complete=True)


def _refused(events: list[dict[str, Any]], complete: bool = False) -> TraceRejected:
    with pytest.raises(TraceRejected) as caught:
        validate(LOGGED, numbered(events), complete=complete)
    return caught.value


@pytest.mark.parametrize(
    ("events", "seq", "words"),
    [
        # missing: the sender logs its next event first
        ([send("p0", "a"), ev("p0", "schedule")], 2, "before the append of p0's send of 'a'"),
        ([send("p0", "a"), send("p0", "b")], 2, "before the append of p0's send of 'a'"),
        # missing: the message is processed without one
        (
            [
                *(send("p1", "b"), append("p1", "b"), ev("p1", "schedule"), ev("p1", "execute")),
                *(send("p0", "a"), ev("w0", "run_begin"), ev("w0", "process", item="b")),
                ev("w0", "process", item="a"),
            ],
            8,
            "'a' is processed before its append",
        ),
        # duplicate
        ([send("p0", "a"), append("p0", "a"), append("p0", "a")], 3, "owes no append here"),
        # misplaced: before any send, on another thread, to another mailbox, of another item
        ([append("p0", "a")], 1, "p0 has logged no send"),
        ([send("p0", "a"), append("w0", "a")], 2, "w0 has logged no send"),
        ([send("p0", "a"), send("p1", "b"), append("p1", "a")], 3, "item = 'b'"),
        ([send("p0", "a"), append("p0", "a", mailbox=1)], 2, "mailbox = 0"),
        ([send("p0", "a"), append("p0", "b")], 2, "item = 'a'"),
        # a thread with two roles: its close cannot pass its own owed append
        ([send("main", "a"), ev("main", "close")], 2, "main logs close before the append of main's send"),
        # out of order: processed against the appends' order
        (
            [
                *(send("p0", "a"), send("p1", "b"), append("p1", "b"), append("p0", "a")),
                *(ev("p1", "schedule"), ev("p1", "execute"), ev("w0", "run_begin")),
                ev("w0", "process", item="a"),
            ],
            8,
            "item = 'b'",
        ),
    ],
    ids=[
        "missing-next-event",
        "missing-next-send",
        "missing-processed",
        "duplicate",
        "before-send",
        "other-role",
        "other-sender",
        "other-mailbox",
        "other-item",
        "two-roles",
        "out-of-order",
    ],
)
def test_each_misuse_of_append_is_refused(events: list[dict[str, Any]], seq: int, words: str) -> None:
    refused = _refused(events)
    assert refused.seq == seq and refused.rule == 4 and words in refused.message, refused.message


def test_a_trace_ending_before_an_append_is_a_prefix_not_a_complete_run() -> None:
    events = [send("p0", "a")]
    validate(LOGGED, numbered(events))
    refused = _refused(events, complete=True)
    assert refused.seq is None and refused.rule == 4, refused.message
    assert "append of p0's send of 'a' to mailbox 0 never logged" in refused.message


def test_an_append_without_the_header_key_is_refused() -> None:
    events = numbered([send("p0", "a"), append("p0", "a")])
    for config in ({"workers": 1, "throughput": 4}, {"workers": 1, "throughput": 4, LOGS_APPEND: False}):
        with pytest.raises(TraceRejected) as caught:
            validate(config, events)
        assert caught.value.seq == 2 and f"config.{LOGS_APPEND}: true" in caught.value.message


def test_the_header_key_is_a_boolean() -> None:
    with pytest.raises(ValueError, match=LOGS_APPEND):
        AkkaChecker({"throughput": 1, LOGS_APPEND: 1})
    header = {
        **trace_header({"workers": 1, "throughput": 1}),
        "config": {"workers": 1, "throughput": 1, LOGS_APPEND: "yes"},
    }
    verdict = validate_lines([json.dumps(header)])
    assert verdict.code == 2 and LOGS_APPEND in verdict.message, verdict.message
    good = trace_header({"workers": 1, "throughput": 1, LOGS_APPEND: True})
    lines = [json.dumps(good), *(json.dumps(e) for e in numbered([send("p0", "a"), append("p0", "a")]))]
    assert validate_lines(lines).code == 0


def test_without_the_header_key_the_format_is_todays() -> None:
    """No ``append`` and no key: the append is the search's to place (the older ports' format)."""
    events = numbered([send("p0", "a"), ev("p0", "schedule"), ev("p0", "execute")])
    validate({"workers": 1, "throughput": 4}, events)
    with pytest.raises(TraceRejected):
        validate(LOGGED, events)


def test_exported_spec_traces_log_append_and_validate_in_both_formats(tmp_path: Any) -> None:
    """`lanecheck traces export --design akka-mailbox`: the spec's Enqueue logs `append`, the header
    says so, and each behaviour validates as written and with its appends dropped."""
    from model_checks.conformance.export import export
    from model_checks.designs.akka_mailbox.configs import CONFIGS
    from spec.akka_mailbox import SPEC

    written = export(tmp_path, SPEC, CONFIGS["small"], name="akka", design="akka-mailbox")
    assert written
    for path in written:
        header, *rest = (json.loads(line) for line in path.read_text().splitlines())
        assert header["config"][LOGS_APPEND] is True
        oks = sorted(e["item"] for e in rest if e["event"] == "send" and e["result"] == "ok")
        assert sorted(e["item"] for e in rest if e["event"] == "append") == oks
        config, bare = without_append_events(header["config"], rest)
        lines = [json.dumps({**header, "config": config}), *(json.dumps(e) for e in bare)]
        verdict = validate_lines(lines, complete=True)
        assert verdict.code == 0 and not verdict.prefix, (path.name, verdict.message)


def test_the_append_bench_judges_both_formats_of_each_seed() -> None:
    from model_checks.designs.akka_mailbox.append_bench import measure, summary

    rows = measure(10, range(2), cap=60.0)
    for row in rows:
        assert row["with"]["verdict"] == row["without"]["verdict"] == "accepted", row
        assert row["with"]["events"] > row["without"]["events"] == row["without"]["done"]
    assert set(summary(rows)) == {"with", "without"}


def test_the_append_bench_says_when_it_stopped_at_its_cap() -> None:
    from model_checks.designs.akka_mailbox.append_bench import judge
    from model_checks.designs.akka_mailbox.bench import akka_scheduled

    config, events = akka_scheduled(30, 0)
    capped = judge(config, events, cap=0.0)
    assert capped["verdict"] == "capped" and capped["done"] == 50 < capped["events"]
    refused = judge(config, [*events[:1], *events], cap=60.0)  # the first send twice
    assert refused["verdict"].startswith("rejected")
