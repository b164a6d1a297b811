"""Pieces of the harness programs in which producer threads post to a scheduler that is then
stopped: the lane-style designs' scenarios build theirs from these (designs share no code),
and the checks they make alike: the conservation of the accepted items when Stop returns, and
(``drain_watch.py``, compiled) one drainer per lane, read from the trace's events."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, TypeVar

from model_checks.harness.runtime import ControlledRuntime

R = TypeVar("R")
Program = Callable[[ControlledRuntime], object]
Record = tuple[str, str, Mapping[str, Any]]  # (thread, event, fields), as a tracer's ``emit`` got them
_NOT_SHOWN = ("seq", "thread", "event")


class Recording(Protocol):
    def events(self) -> Sequence[Mapping[str, Any]]: ...


def shown_trace(tracer: Recording) -> Callable[[], list[object]]:
    """The trace a failure report shows (``rt.trace``): one line per recorded event."""

    def lines() -> list[object]:
        return [_line(e["seq"], e["thread"], e["event"], e) for e in tracer.events()]

    return lines


def _line(seq: int, thread: str, event: str, fields: Mapping[str, Any]) -> str:
    shown = " ".join(f"{k}={v}" for k, v in fields.items() if k not in _NOT_SHOWN)
    return f"{seq:>3} {thread:>5} {event} {shown}"


class ReportedTrace:
    """The trace a failure report shows, for a program whose state keeps no history.

    A program checked with state pruning (``harness.stateful.check_states``) must not keep the
    events it observed: a recorded trace makes two orders of independent steps two states that
    never meet again. Such a program checks each step's events as they come (an invariant) and
    hands them here with ``keep``; each batch becomes a trace source of its own (``rt.trace``).
    Trace sources are read only by the report (the program cannot read them back), and the
    harness's state (``rt/fingerprint.py``) holds the invariants, final checks and pending-work
    predicates but not the report's sources: what is kept here is no state, by construction. The
    lines are ``shown_trace``'s, numbered from 1 in the order the events were kept."""

    def __init__(self, rt: ControlledRuntime) -> None:
        self._rt = rt
        self._shown = 0  # lines numbered so far; moves only while a report reads the sources
        rt.trace(self._restart)  # the first source: numbering starts again at every reading

    def keep(self, records: Sequence[Record]) -> None:
        """The events of one step, in the order they were recorded."""
        if records:
            self._rt.trace(partial(self._lines, tuple(records)))

    def _restart(self) -> list[object]:
        self._shown = 0
        return []

    def _lines(self, records: tuple[Record, ...]) -> list[object]:
        first = self._shown + 1
        self._shown += len(records)
        return [_line(first + i, thread, event, fields) for i, (thread, event, fields) in enumerate(records)]


@dataclass(frozen=True)
class LaneRace:
    """The race every lane scenario sets up: producers post, workers drain, then a Stop. A
    design's scenario adds its own knobs."""

    producers: int = 2  # threads p0, p1, ...
    items: int = 2  # posts per producer: producer p posts its item i to lane (p + i) % lanes
    lanes: int = 2
    workers: int = 2
    budget: int = 1  # items a worker invokes from one lane before it moves on (max_per_drain)
    capacity: int = 4  # items a lane holds
    stop_races_posts: bool = False  # Stop starts before the producers are joined


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


class DrainOverlap(AssertionError):
    """Two workers drained one lane at once, or an invoke ran outside its lane's drain
    (``drain_watch.py``; an exception class of its own here: the compiled core cannot define one)."""


def assert_conserved(drain: bool, accepted: list[Any], invoked: list[Any], discarded: list[Any]) -> None:
    """Every accepted item was invoked once and none discarded (Stop(drain), ``drain``), or invoked
    or reported discarded once (Stop(discard)); a refused item neither. The three lists are
    sorted by the caller."""
    if drain:
        assert invoked == accepted, f"conservation: accepted {accepted}, invoked {invoked}"
        assert not discarded, f"Stop(drain) discarded {discarded}"
    else:
        assert sorted(invoked + discarded) == accepted, (
            f"conservation: accepted {accepted}, invoked {invoked} + discarded {discarded}"
        )
