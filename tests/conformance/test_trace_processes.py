"""``TraceProcesses``: a streaming checker's constants name the processes bound to the trace's
threads, not the spec's scripted ones."""

from __future__ import annotations

from dataclasses import dataclass

from model_checks.conformance.trace_processes import TraceProcesses
from spec import schedule_gate as sg


@dataclass(frozen=True, eq=False)
class _Bound(TraceProcesses, sg.Constants):
    pass


def test_the_names_are_the_bound_processes_in_binding_order() -> None:
    c = _Bound(actors=1, workers=2, permits=1, mailbox_capacity=1, max_per_drain=1, script=((0,), (0,)))
    assert sg.Constants.producer_names(c) == ("p0", "p1")  # what the spec's script would say
    assert (c.producer_names(), c.worker_names()) == ((), ())
    c.producers.extend(["p:main", "p:t1"])
    c.bound_workers.append("w:pool-0")
    assert (c.producer_names(), c.worker_names()) == (("p:main", "p:t1"), ("w:pool-0",))


def test_each_constants_has_its_own_lists() -> None:
    a = _Bound(actors=1, workers=1, permits=1, mailbox_capacity=1, max_per_drain=1)
    b = _Bound(actors=1, workers=1, permits=1, mailbox_capacity=1, max_per_drain=1)
    a.producers.append("p:x")
    assert b.producer_names() == ()
