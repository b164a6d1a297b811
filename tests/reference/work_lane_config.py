"""The smallest valid Work Lane configuration, for the tests that change one thing in it."""

from __future__ import annotations

from typing import Any

from reference import LaneSpec

GOOD: dict[str, Any] = {"workers": 1, "lane_capacity": 4, "max_per_drain": 2}


def noop(context: Any, item: Any) -> None:
    return None


def lane_specs(n: int = 1) -> list[LaneSpec[Any]]:
    return [LaneSpec(noop)] * n
