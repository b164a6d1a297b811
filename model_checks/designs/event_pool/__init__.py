"""The event-object pool (design 003): Win32 events, a work list, idle-first wakeups, the thread-pool API."""

from __future__ import annotations

from model_checks.design import Design
from model_checks.designs.event_pool.configs import CONFIGS
from model_checks.designs.event_pool.spec_mutants import MUTANTS
from spec.event_pool import SPEC

DESIGN = Design(
    name="event-pool",
    spec=SPEC,
    configs=CONFIGS,
    mutants=MUTANTS,
    summary="a Windows-style pool: one auto-reset event per thread, a locked work list, idle-first SetEvent",
    projections={
        "thread": lambda c, s: s.thread[c.thread_names()[0]].pc,
        "event": lambda c, s: s.events[c.thread_names()[0]].signalled,
        "list": lambda c, s: s.posted - s.next,
        "client": lambda c, s: s.client.pc,
    },
)
