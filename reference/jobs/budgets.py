"""Weighted budgets per queue and per concurrency group, and the one rule they impose at enqueue.

A budget caps the sum of ``cost_units`` of the jobs currently ``processing`` in a queue (or in a
concurrency group, across queues). A job whose cost alone exceeds a budget could never be admitted:
waiting would never help, so it is refused when enqueued (``BudgetRefusal``) and, should the budget
shrink after it was queued, failed with that reason at claim time, never deferred forever.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from reference import arguments
from reference.jobs.model import MAX_COST, name

MAX_BUDGETS = 10_000


class BudgetRefusal(ValueError):
    """The job's cost alone exceeds a budget: it can never run, so the store does not take it."""


def _table(fieldname: str, value: object) -> dict[str, int]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{fieldname} must be a mapping of names to cost budgets, got {type(value).__name__}")
    if len(value) > MAX_BUDGETS:
        raise ValueError(f"{fieldname} may hold at most {MAX_BUDGETS} budgets, got {len(value)}")
    table: dict[str, int] = {}
    for key, budget in value.items():
        label = name(f"{fieldname} key", key)
        assert label is not None
        table[label] = arguments.count(f"{fieldname}[{label!r}]", budget, minimum=0, maximum=MAX_COST)
    return table


@dataclass(frozen=True)
class Budgets:
    """``queues``: queue name -> budget; ``groups``: concurrency group -> budget. Unlisted: unlimited."""

    queues: Mapping[str, int] = field(default_factory=dict)
    groups: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "queues", _table("queues", self.queues))
        object.__setattr__(self, "groups", _table("groups", self.groups))

    def as_json(self) -> dict[str, dict[str, int]]:
        return {"queues": dict(self.queues), "groups": dict(self.groups)}


def cost_refusal(queue: str, group: str | None, cost: int, budgets: Budgets) -> str | None:
    """Why a job of this cost can never be admitted under ``budgets`` (or None if it can)."""
    queue_budget = budgets.queues.get(queue)
    if queue_budget is not None and cost > queue_budget:
        return f"cost_exceeds_budget: cost_units {cost} exceeds queue {queue!r} budget {queue_budget}"
    group_budget = budgets.groups.get(group) if group is not None else None
    if group_budget is not None and cost > group_budget:
        return f"cost_exceeds_budget: cost_units {cost} exceeds group {group!r} budget {group_budget}"
    return None
