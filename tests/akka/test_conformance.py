"""Traces of the Akka-mailbox reference checked against the spec: correct ones pass, mutants' fail."""

from __future__ import annotations

import threading

import pytest

from model_checks.conformance.akka_mailbox import TraceRejected, validate
from model_checks.harness import Options, check
from model_checks.mutants.akka_mailbox_reference import REFERENCE_MUTANTS, program
from reference.akka_mailbox import ActorRef, Dispatcher
from reference.tracing import RecordingTracer

pytestmark = pytest.mark.timeout(120)


def test_real_threads_trace_is_accepted_as_complete() -> None:
    tracer = RecordingTracer()
    d = Dispatcher(throughput=2, workers=2, tracer=tracer)
    refs: list[ActorRef[str]] = [d.spawn(lambda m: None) for _ in range(3)]

    def produce(p: int) -> None:
        for k in range(12):
            refs[(k + p) % 3].tell(f"p{p}.{k}")

    threads = [threading.Thread(target=produce, args=(p,), name=f"p{p}") for p in range(2)]
    for t in threads:
        t.start()
    refs[1].suspend()
    refs[1].resume()
    refs[2].close()
    for t in threads:
        t.join()
    d.shutdown()
    assert tracer.config is not None
    validate(tracer.config, tracer.events(), complete=True)


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


@pytest.mark.parametrize("name", sorted(set(REFERENCE_MUTANTS) - {"idle-store"}))
def test_failing_mutant_trace_is_rejected(name: str) -> None:
    mutant = REFERENCE_MUTANTS[name]
    result = check(program(mutant.constants, mutant.build), Options(time_limit=60))
    assert result.failure is not None
    events = [e for e in result.failure.trace_events if isinstance(e, dict)]
    with pytest.raises(TraceRejected):
        validate(
            {"throughput": mutant.constants.throughput},
            events,
            complete=result.failure.kind == "lost_wakeup",
        )


def test_idle_store_trace_shows_nothing_wrong_yet() -> None:
    """The overwritten Closed bit is invisible in the events until a later send or schedule shows it."""
    mutant = REFERENCE_MUTANTS["idle-store"]
    result = check(program(mutant.constants, mutant.build), Options(time_limit=60))
    assert result.failure is not None and result.failure.kind == "invariant"
    events = [e for e in result.failure.trace_events if isinstance(e, dict)]
    validate({"throughput": 1}, events)
