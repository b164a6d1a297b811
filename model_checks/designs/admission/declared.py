"""The job store's deliberate GIL-atomic field, declared for the race detector.

The in-memory store's scenarios share one ``RecordingTracer`` between their worker threads (a
deployment gives each process its own trace file). Each committed batch is handed to it after
the transaction, outside the store's lock, by one ``list.extend`` of a list: one call that runs no
Python code, atomic under the GIL. The batches may arrive out of ``seq`` order, which is why a
trace is ordered by ``seq`` and never by arrival (``reference/jobs/tracing.py``). Imported by the
module that builds the design's harness programs, so the declaration is in force whenever they run.
"""

from __future__ import annotations

from model_checks.harness import declare_atomic

declare_atomic(
    "reference.jobs.tracing:RecordingTracer",
    "events",
    "a committed batch appended by one list.extend (GIL-atomic); a trace is ordered by seq, not arrival",
)
