"""Pieces of the harness programs in which producer threads post to a scheduler that is then
stopped: the lane-style designs' scenarios build theirs from these (designs share no code)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from model_checks.harness.runtime import ControlledRuntime

R = TypeVar("R")
_NOT_SHOWN = ("seq", "thread", "event")


class Recording(Protocol):
    def events(self) -> Sequence[Mapping[str, Any]]: ...


def shown_trace(tracer: Recording) -> Callable[[], list[object]]:
    """The trace a failure report shows (``rt.trace``): one line per recorded event."""

    def lines() -> list[object]:
        return [f"{e['seq']:>3} {e['thread']:>5} {e['event']} {_fields(e)}" for e in tracer.events()]

    return lines


def _fields(e: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in e.items() if k not in _NOT_SHOWN)


def produce_then_stop(
    rt: ControlledRuntime,
    producer: Callable[[int], Callable[[], None]],
    producers: int,
    stop: Callable[[], R],
    stop_races_posts: bool,
) -> R:
    """Run ``producer(p)`` on threads ``p0``, ``p1``, ...; call ``stop`` after they have all
    posted, or while they post with ``stop_races_posts``; every producer joined, what ``stop``
    returned."""
    threads = [rt.start_thread(producer(p), f"p{p}") for p in range(producers)]
    if not stop_races_posts:
        for t in threads:
            t.join()
    result = stop()
    for t in threads:
        t.join()
    return result
