"""The Work Lane reference's deliberate GIL-atomic field, declared for the race detector.

Documented in docs/reference.md as an unlocked access the design relies on; under the detector
every load and store of it is a scheduling point. Imported by the modules that build the
design's harness programs, so the declaration is in force whenever they run.
"""

from __future__ import annotations

from model_checks.harness import declare_atomic

declare_atomic(
    "reference.work_lane:WorkLane",
    "probing",
    "Dekker's protocol between a publishing producer and the lock-free drainer "
    "(docs/reference.md, 'Trace order against lock-free pops')",
)
