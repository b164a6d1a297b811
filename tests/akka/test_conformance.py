"""Traces of the Akka-mailbox reference checked against the spec: correct ones pass, mutants' fail."""

from __future__ import annotations

import pytest

from model_checks.designs.akka_mailbox.bench import akka_real_threads
from model_checks.designs.akka_mailbox.reference_mutants import REFERENCE_MUTANTS, program
from model_checks.designs.akka_mailbox.trace import (
    LOGS_APPEND,
    WHOLE_RUN_FAILURES,
    TraceRejected,
    validate,
    without_append_events,
)
from model_checks.harness import Options, check

pytestmark = pytest.mark.timeout(120)


def test_real_threads_trace_is_accepted_as_complete_in_both_formats() -> None:
    config, events = akka_real_threads(12)
    assert config[LOGS_APPEND] is True
    sends = [e["item"] for e in events if e["event"] == "send" and e["result"] == "ok"]
    assert sorted(e["item"] for e in events if e["event"] == "append") == sorted(sends)
    validate(config, events, complete=True)
    validate(*without_append_events(config, events), complete=True)


def test_a_forged_double_schedule_is_rejected_with_its_seq() -> None:
    events = [
        {"seq": 1, "thread": "p0", "event": "send", "mailbox": 0, "item": "a", "result": "ok"},
        {"seq": 2, "thread": "p0", "event": "schedule", "mailbox": 0},
        {"seq": 3, "thread": "p1", "event": "send", "mailbox": 0, "item": "b", "result": "ok"},
        {"seq": 4, "thread": "p1", "event": "schedule", "mailbox": 0},
    ]
    with pytest.raises(TraceRejected) as caught:
        validate({"throughput": 1}, events)
    assert caught.value.seq == 4
    validate({"throughput": 1}, events[:3])  # a prefix the spec allows


@pytest.mark.parametrize("name", sorted(REFERENCE_MUTANTS))
def test_failing_mutant_trace_is_rejected_alike_in_both_formats(name: str) -> None:
    """The reference's trace (with its append events) and the same run with them dropped: both
    rejected, at the same event with the same words."""
    mutant = REFERENCE_MUTANTS[name]
    result = check(program(mutant.constants, mutant.build), Options(time_limit=60))
    assert result.failure is not None
    events = [e for e in result.failure.trace_events if isinstance(e, dict)]
    assert any(e["event"] == "append" for e in events)
    logged: dict[str, object] = {"throughput": mutant.constants.throughput, LOGS_APPEND: True}
    whole = result.failure.kind in WHOLE_RUN_FAILURES
    said = []
    for config, trace in ((logged, events), without_append_events(logged, events)):
        with pytest.raises(TraceRejected) as caught:
            validate(config, trace, complete=whole)
        # A message never settled shows only when the run is known to be over; every other bug at its event.
        assert (caught.value.seq is None) == whole, caught.value.message
        at = None if caught.value.seq is None else {**trace[caught.value.seq - 1], "seq": 0}
        said.append((at, caught.value.rule, caught.value.message.split(": ", 1)[1]))
    assert said[0] == said[1]


def test_idle_store_is_shown_by_the_status_word_of_run_end() -> None:
    """The store that overwrote the close logs the word it wrote: Open, where the spec has Closed."""
    mutant = REFERENCE_MUTANTS["idle-store"]
    result = check(program(mutant.constants, mutant.build), Options(time_limit=60))
    assert result.failure is not None and result.failure.kind == "invariant"
    events = [e for e in result.failure.trace_events if isinstance(e, dict)]
    config = {"throughput": 1, LOGS_APPEND: True}
    with pytest.raises(TraceRejected) as caught:
        validate(config, events)
    bad = events[(caught.value.seq or 0) - 1]
    assert bad["event"] == "run_end" and bad["status"] == 0, bad
    assert caught.value.rule == 5 and "status = 1" in caught.value.message
    # Without the optional word the same trace is a prefix the spec allows: the field is what shows it.
    validate(config, [{k: v for k, v in e.items() if k != "status"} for e in events])


def test_run_end_status_must_be_the_spec_word_when_present() -> None:
    events: list[dict[str, object]] = [
        {"seq": 1, "thread": "p0", "event": "send", "mailbox": 0, "item": "a", "result": "ok"},
        {"seq": 2, "thread": "p0", "event": "schedule", "mailbox": 0, "status": 2},
        {"seq": 3, "thread": "p0", "event": "execute", "mailbox": 0},
        {"seq": 4, "thread": "w0", "event": "run_begin", "mailbox": 0},
        {"seq": 5, "thread": "w0", "event": "process", "mailbox": 0, "item": "a"},
        {"seq": 6, "thread": "w0", "event": "run_end", "mailbox": 0, "processed": 1, "status": 0},
    ]
    validate({"workers": 1, "throughput": 1}, events, complete=True)
    with pytest.raises(TraceRejected) as caught:
        validate({"workers": 1, "throughput": 1}, [*events[:5], {**events[5], "status": 2}])
    assert caught.value.seq == 6


def test_more_worker_threads_than_the_header_says_are_rejected() -> None:
    events: list[dict[str, object]] = []
    for mb in (0, 1):
        events += [
            {"thread": "p0", "event": "send", "mailbox": mb, "item": f"m{mb}", "result": "ok"},
            {"thread": "p0", "event": "schedule", "mailbox": mb},
            {"thread": "p0", "event": "execute", "mailbox": mb},
        ]
    events += [
        {"thread": "w7", "event": "run_begin", "mailbox": 0},
        {"thread": "w8", "event": "run_begin", "mailbox": 1},
    ]
    numbered = [{"seq": n, **e} for n, e in enumerate(events, start=1)]
    validate({"workers": 2, "throughput": 1}, numbered)
    with pytest.raises(TraceRejected) as caught:
        validate({"workers": 1, "throughput": 1}, numbered)
    assert caught.value.seq == 8 and "config.workers" in caught.value.message
