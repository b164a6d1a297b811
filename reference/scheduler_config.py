"""What a Worker Scheduler is built from: its lanes, its sizes and how they are checked.

``checked_config`` is the one place the scheduler's arguments are validated
(``TypeError``/``ValueError`` naming the field); ``config_error`` says why a
configuration would be refused without building anything. ``Sizing`` chooses
between the ToolKit factory's sizes and the small ones the model checks use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, NamedTuple, TypeVar

from . import arguments
from .arguments import MAX_LANES, MAX_SIZE, MAX_WORKERS

T = TypeVar("T")


class StopMode(Enum):
    DRAIN = "drain"  # finish every accepted item
    DISCARD = "discard"  # drop what is queued; drains already running still finish


class Sizing(Enum):
    """Which sizes a scheduler accepts for its queues.

    ``TOOLKIT`` (the default, what users get): the ToolKit factory's rule, lane
    and ready capacities are powers of two, at least 2; the ready capacity
    defaults to the next power of two at least ``max(2, lanes)``.

    ``CHECKING`` (for model checks, scenarios, trace generators and mutants
    only): any capacity of at least 1, and the ready capacity defaults to the
    number of lanes, as in the spec. The small configurations that keep
    exhaustive checks tractable (a lane of capacity 1, three lanes sharing a
    ready queue of three) need it; the algorithm is the same for every size.
    """

    TOOLKIT = "toolkit"
    CHECKING = "checking"


@dataclass(frozen=True)
class LaneSpec(Generic[T]):
    """One lane to register: ``invoke(context, item)`` is called for each of its items."""

    invoke: Callable[[Any, T], object]
    context: Any = None


class LaneHandle(NamedTuple):
    """Names one lane of one scheduler. ``LaneHandle()`` is the invalid handle."""

    scheduler: object | None = None
    lane: int = -1


@dataclass(frozen=True)
class SchedulerConfig:
    lanes: int
    workers: int
    lane_capacity: int
    max_per_drain: int
    ready_capacity: int

    def as_trace_config(self) -> dict[str, int]:
        """A trace header's ``config`` object: these fields, by their names, in this order."""
        # (a display, not ``asdict``, which deep-copies each value, nor a comprehension over the
        # fields: a traced scheduler's construction paid for either, and the harness builds one
        # per execution)
        return {
            "lanes": self.lanes,
            "workers": self.workers,
            "lane_capacity": self.lane_capacity,
            "max_per_drain": self.max_per_drain,
            "ready_capacity": self.ready_capacity,
        }


def checked_config(
    lanes: object,
    workers: object,
    lane_capacity: object,
    max_per_drain: object,
    ready_capacity: object,
    sizing: object = Sizing.TOOLKIT,
) -> tuple[list[LaneSpec[Any]], SchedulerConfig]:
    """The lanes and the configuration, checked; ``TypeError``/``ValueError`` naming the field if refused.

    Limits: at most ``MAX_LANES`` lanes and ``MAX_WORKERS`` workers; capacities
    and the budget at most ``MAX_SIZE``.
    """
    size_rule = arguments.member("sizing", sizing, Sizing)
    specs = arguments.sequence("lanes", lanes, maximum=MAX_LANES)
    for i, spec in enumerate(specs):
        if type(spec) is not LaneSpec or not callable(spec.invoke):  # the field names only if refused
            arguments.instance(f"lanes[{i}]", spec, LaneSpec)
            arguments.function(f"lanes[{i}].invoke", spec.invoke)
    worker_count = arguments.count("workers", workers, maximum=MAX_WORKERS)
    toolkit = size_rule is Sizing.TOOLKIT
    size = arguments.power_of_two if toolkit else arguments.count
    capacity = size("lane_capacity", lane_capacity, maximum=MAX_SIZE)
    budget = arguments.count("max_per_drain", max_per_drain)
    if ready_capacity is None:
        ready = arguments.next_power_of_two(len(specs)) if toolkit else len(specs)
    else:
        ready = size("ready_capacity", ready_capacity, maximum=MAX_SIZE)
        if ready < len(specs):
            raise ValueError(
                f"ready_capacity must be at least the number of lanes ({len(specs)}), got {ready}: "
                "every lane may be queued at once"
            )
    # (positional: a frozen dataclass's construction by keywords costs a third more, and the
    # harness builds a scheduler per execution)
    return specs, SchedulerConfig(len(specs), worker_count, capacity, budget, ready)


def config_error(
    lanes: Sequence[LaneSpec[Any]],
    workers: int,
    lane_capacity: int,
    max_per_drain: int,
    ready_capacity: int | None,
    sizing: Sizing = Sizing.TOOLKIT,
) -> str | None:
    """Why this configuration is refused, naming the field; None when it is valid."""
    return arguments.refusal(
        lambda: checked_config(lanes, workers, lane_capacity, max_per_drain, ready_capacity, sizing)
    )


def check_options(
    *,
    runtime: object,
    tracer: object,
    on_error: object,
    on_discard: object,
    item_label: object,
    lane_factory: object,
    pool_factory: object,
) -> None:
    """The scheduler's other arguments, in this order; ``TypeError`` naming the first refused."""
    arguments.runtime(runtime)
    arguments.tracer(tracer)
    for name, hook in (("on_error", on_error), ("on_discard", on_discard), ("item_label", item_label)):
        if hook is not None:  # (``None``, the default, needs no call)
            arguments.function(name, hook)
    arguments.function("lane_factory", lane_factory)
    arguments.function("pool_factory", pool_factory)


__all__ = [
    "LaneHandle",
    "LaneSpec",
    "SchedulerConfig",
    "Sizing",
    "StopMode",
    "check_options",
    "checked_config",
    "config_error",
]
