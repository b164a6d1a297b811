"""The Schedule Gate reference's deliberate GIL-atomic field, declared for the race detector.

Imported by the modules that build the design's harness programs, so the declaration is in
force whenever they run.
"""

from __future__ import annotations

from model_checks.harness import declare_atomic

declare_atomic(
    "reference.schedule_gate:GateScheduler",
    "_stopping",
    "written under the state lock, read without a lock by a worker returning a permit; Dekker's "
    "pattern with Stop's quiescence check under the ready lock (permit count, then flag)",
)
