"""Benchmark of the event-pool trace validator (``lanecheck bench event-pool-trace``).

Writes a valid trace of about 1M events (``trace.generate``: a random sequential schedule of
the pool, 4 threads, posts from the client and from callbacks, cancels, timeouts, a drain
stop) to a temporary file and measures events/s of the validator reading it the way
`lanecheck validate` does, and peak traced memory on a shorter trace (``bench.traces.goal_figures``).
The goal is 50,000 events/s on the 1M-event trace (issue 18).
"""

from __future__ import annotations

from pathlib import Path

from model_checks.bench.traces import TraceBench, dump
from model_checks.designs.event_pool.trace.generate import events, header

GOAL = 50_000  # events/s on a 1M-event trace (issue 18)


def write_trace(path: Path, n: int, seed: int = 0) -> int:
    """A generated trace of about ``n`` events (the generator's defaults); the number written."""
    return dump(path, header(4), events(n, seed=seed))


# Events of the long and the short trace; also measured by `lanecheck bench validate`.
TRACE_BENCH = TraceBench.own_engine(write_trace)
