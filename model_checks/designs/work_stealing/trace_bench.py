"""Benchmark of the work-stealing trace validator (``lanecheck bench work-stealing-trace``).

Writes a valid trace of about 1M events (``trace.generate``: a random sequential
schedule of the model, 4 workers, fork/join, steals, parking, a drain stop) to a
temporary file and measures events/s of the validator reading it the way
`lanecheck validate` does, and peak traced memory on a shorter trace
(``bench.traces.goal_figures``). The goal is 50,000 events/s on the 1M-event trace.
"""

from __future__ import annotations

from pathlib import Path

from model_checks.bench.traces import TraceBench, dump
from model_checks.designs.work_stealing.trace.generate import events, header

GOAL = 50_000  # events/s on a 1M-event trace (issue 17)


def write_trace(path: Path, n: int, seed: int = 0) -> int:
    """A generated trace of about ``n`` events (the generator's defaults); the number written."""
    return dump(path, header(4, 4), events(n, seed=seed))


# Events of the long and the short trace; also measured by `lanecheck bench validate`.
# The generic engine holds up to thousands of states an event here (docs/performance.md, "Session
# 27"): its traces are hundreds of events, not a million.
TRACE_BENCH = TraceBench.own_engine(write_trace, generic_sizes=(400, 100), generic_quick_sizes=(150, 50))
