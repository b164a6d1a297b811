"""Words a streaming checker (``streamed.Checker``) of any design uses for a rejection or a
pending prefix: the event as the reader sees it, the threads mid-step, the spec's own values
where the trace's differ, the few states the spec could be in."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from model_checks.conformance.verdict import Rejected, plain

S = TypeVar("S")
SHOWN_STATES = 8  # a rejection lists this many of the states the spec could be in, no more
_NOT_SHOWN = ("seq", "thread", "event")


def show_event(ev: Mapping[str, Any], hidden: Collection[str] = ()) -> str:
    """``thread event {fields}``: an event as a rejection names it."""
    fields = {k: v for k, v in ev.items() if k not in _NOT_SHOWN and k not in hidden}
    return f"{ev['thread']} {ev['event']} {fields}"


def some_of(first: Sequence[str], count: int) -> str:
    """``first`` (the first few of ``count`` names) joined, saying how many more there are: a
    message that names only some of the threads or jobs must not read as naming them all."""
    more = count - len(first)
    return ", ".join(first) + (f" and {more} more" if more > 0 else "")


def mid_step(threads: Mapping[str, str]) -> str:
    """The pending phrase for threads between the events of one step (thread -> where)."""
    return "threads mid-step: " + ", ".join(f"{t} ({what})" for t, what in sorted(threads.items()))


def cannot_stop(rule: int, phrases: list[str]) -> Rejected:
    """A complete trace ends where no behaviour of the spec stops: what is still owed."""
    return Rejected(
        rule, "the run is over but the spec cannot stop here: " + ("; ".join(phrases) or "a step is owed")
    )


def could_be(subject: str, words: Iterable[str], sep: str = ", ") -> str:
    """`` (subject could be: a, b)`` of the states the spec could be in; empty without words."""
    said = sep.join(words)
    return f" ({subject} could be: {said})" if said else ""


def spec_logs(parts: Mapping[tuple[str, str], set[str]], label: str = "") -> str:
    """The spec's own values for the fields the trace logs otherwise: (field, value) -> the
    words of the states they come from (an empty word says nothing)."""
    said = []
    for (k, v), words in sorted(parts.items()):
        shown = sorted(w for w in words if w)
        said.append(
            f"the spec's step here logs {k} = {v}" + (f" ({label}{', '.join(shown)})" if shown else "")
        )
    return "; or ".join(said)


def shown_states(show: Callable[[S], Any], states: Iterable[S]) -> list[dict[str, Any]]:
    """A few of the states the spec could be in, for people (``Checker.describe``)."""
    return [plain(show(s)) for s in sorted(states, key=repr)[:SHOWN_STATES]]
