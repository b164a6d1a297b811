"""The work-stealing trace format and its fast validator (docs/work-stealing-trace.md).

``FORMAT`` is what ``Design.trace_format`` names: ``validate.WorkStealingFormat``.
"""

from __future__ import annotations

from model_checks.designs.work_stealing.trace.rules import RULES
from model_checks.designs.work_stealing.trace.validate import FORMAT, WorkStealingFormat, judge

__all__ = ["FORMAT", "RULES", "WorkStealingFormat", "judge"]
