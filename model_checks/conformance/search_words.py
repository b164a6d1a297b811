"""Words a streaming checker built on ``search.TraceSearch`` says of its states: where the spec's
step logs other values than the trace (its near misses), and what a prefix leaves pending — the
state with the least queued, what its queues hold, which threads are mid-step."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from typing import Any, TypeVar

from model_checks.conformance.search import Miss
from model_checks.conformance.wording import mid_step, spec_logs

S = TypeVar("S")


def misses_logged(misses: Iterable[Miss], word: Callable[[Miss], str], label: str = "") -> str:
    """The spec's own values for the fields the trace logs otherwise, each with the ``word`` of
    the states it comes from (``wording.spec_logs``; an empty word says nothing)."""
    parts: dict[tuple[str, str], set[str]] = {}
    for m in misses:
        for k in m.differing:
            parts.setdefault((k, repr(m.fields[k])), set()).add(word(m))
    return spec_logs(parts, label)


def least_queued(states: Iterable[S], queues: Callable[[S], Iterable[Sized]]) -> S:
    """The state whose ``queues`` hold the fewest entries (the first by ``repr`` among equals):
    the one a pending prefix is described by, so the words are the same from run to run."""
    return min(states, key=lambda s: (sum(len(q) for q in queues(s)), repr(s)))


def pending_phrases(
    said: str, unit: str, queued: Mapping[str, Sequence[Any]], threads: Mapping[str, str]
) -> list[str]:
    """The phrases of what a prefix leaves pending: per ``unit``, what is ``queued`` (``said`` of
    them, e.g. "messages not yet processed"), then the threads mid-step (thread -> where)."""
    phrases = []
    if queued:
        shown = "; ".join(f"{unit} {u}: {', '.join(map(repr, items))}" for u, items in queued.items())
        phrases.append(f"{said}: {shown}")
    if threads:
        phrases.append(mid_step(threads))
    return phrases


__all__ = ["least_queued", "misses_logged", "pending_phrases"]
