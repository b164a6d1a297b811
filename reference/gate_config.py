"""What a GateScheduler is built from: its arguments checked, its defaults, its trace header."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import arguments
from .arguments import MAX_LANES, MAX_WORKERS
from .tracing import TRACE_NAME, TRACE_VERSION, Fields, default_label

# The scheduler's logger, named as before the module was split (users may filter on it).
_log = logging.getLogger("reference.schedule_gate")

DESIGN = "schedule-gate"


def log_error(actor: int, event: object, exc: BaseException) -> None:
    """The default ``on_error``: log the exception with its traceback."""
    _log.error("actor %d raised on event %r", actor, event, exc_info=exc)


def header(config: Mapping[str, int]) -> Fields:
    """The header object of a schedule-gate trace."""
    return {"trace": TRACE_NAME, "version": TRACE_VERSION, "design": DESIGN, "config": dict(config)}


def checked_config(
    actors: object, permits: object, workers: object, mailbox_capacity: object, max_per_drain: object
) -> list[Callable[[Any], object]]:
    """The actors' handlers, with every size checked; ``TypeError``/``ValueError`` naming the field."""
    handlers = arguments.sequence("actors", actors, maximum=MAX_LANES)
    for i, handler in enumerate(handlers):
        arguments.function(f"actors[{i}]", handler)
    arguments.count("permits", permits)
    arguments.count("workers", workers, maximum=MAX_WORKERS)
    arguments.count("mailbox_capacity", mailbox_capacity)
    arguments.count("max_per_drain", max_per_drain)
    return handlers


def config_error(
    actors: Sequence[Callable[[Any], object]],
    permits: int,
    workers: int,
    mailbox_capacity: int,
    max_per_drain: int,
) -> str | None:
    """Why this configuration is refused, naming the field; None when it is valid."""
    return arguments.refusal(
        lambda: checked_config(actors, permits, workers, mailbox_capacity, max_per_drain)
    )


__all__ = ["DESIGN", "checked_config", "config_error", "default_label", "header", "log_error"]
