"""The event-pool trace format and its fast validator (docs/event-pool.md, "The trace").

``FORMAT`` is what ``Design.trace_format`` names (a ``conformance.fast_format.FastFormat``);
``validate_lines`` judges a whole trace without the registry.
"""

from __future__ import annotations

from model_checks.designs.event_pool.trace.rules import RULES
from model_checks.designs.event_pool.trace.validate import FORMAT, judge, validate_lines

__all__ = ["FORMAT", "RULES", "judge", "validate_lines"]
