"""The event-object pool (design 003): Win32 events, a work list, idle-first wakeups, the thread-pool API."""

from __future__ import annotations

from model_checks.design import built_in

DESIGN = built_in(
    __name__,
    "event-pool",
    spec_trace_format=".trace.spec_search:SPEC_FORMAT",
    exporter=".trace.export:export",
    verify_rows=(("conformance", ".rows:rows"),),
    reference_modules=(
        "reference.event_pool",
        "reference.event_pool_records",
        "reference.event_pool_threads",
        "reference.event_pool_api",
        "reference.win32_events",
    ),
    benches={
        "event-pool": (
            ".bench",
            "reference event pool vs ThreadPoolExecutor: no-op and 10 µs tasks, post-to-run p50/p99",
        ),
        "event-pool-trace": (
            ".trace_bench",
            "event-pool trace validator: events/s on a 1M-event trace (goal 50k)",
        ),
    },
    summary="a Windows-style pool: one auto-reset event per thread, a locked work list, idle-first SetEvent",
    projections={
        "thread": lambda c, s: s.thread[c.thread_names()[0]].pc,
        "event": lambda c, s: s.events[c.thread_names()[0]].signalled,
        "list": lambda c, s: s.posted - s.next,
        "client": lambda c, s: s.client.pc,
    },
)
