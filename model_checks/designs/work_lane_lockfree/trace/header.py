"""The work-lane-lockfree trace header's config: lanes (the events' ``lane`` joins the checker's
state as the trace names one), workers, and the sizes it compares."""

from __future__ import annotations

from model_checks.conformance.header_config import HeaderConfig

HEADER = HeaderConfig(
    index="lane",
    units="lanes",
    indexed=("workers",),
    sizes=("lane_capacity", "max_per_drain", "ready_capacity"),
)

__all__ = ["HEADER"]
