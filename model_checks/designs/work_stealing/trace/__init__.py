"""The work-stealing trace format and its fast validator (docs/work-stealing-trace.md).

``FORMAT`` is what ``Design.trace_format`` names (a ``conformance.fast_format.FastFormat``).
"""

from __future__ import annotations

from model_checks.designs.work_stealing.trace.rules import RULES
from model_checks.designs.work_stealing.trace.validate import FORMAT, judge

__all__ = ["FORMAT", "RULES", "judge"]
