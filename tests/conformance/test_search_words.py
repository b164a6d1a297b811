"""The words of a streaming checker's near misses and pending prefix (``conformance.search_words``)."""

from __future__ import annotations

from typing import Any

from model_checks.conformance.search import Miss
from model_checks.conformance.search_words import least_queued, misses_logged, pending_phrases


def _miss(state: Any, **fields: Any) -> Miss:
    return Miss(state, "Act", "p:t", fields, differing=("result",))


def test_misses_logged_says_each_value_once_with_the_words_of_its_states() -> None:
    misses = [_miss("A", result="ok"), _miss("B", result="ok"), _miss("C", result="full")]
    said = misses_logged(misses, lambda m: str(m.state), "word ")
    assert said.split("; or ") == [
        "the spec's step here logs result = 'full' (word C)",
        "the spec's step here logs result = 'ok' (word A, B)",
    ]


def test_misses_logged_omits_empty_words() -> None:
    assert misses_logged([_miss("A", result="ok")], lambda m: "") == "the spec's step here logs result = 'ok'"


def test_least_queued_takes_the_fewest_then_the_first_by_repr() -> None:
    states = [("b", ((1,), (2,))), ("a", ((1, 2), ())), ("c", ((), ()))]
    assert least_queued(states, lambda s: s[1]) == ("c", ((), ()))
    assert least_queued(states[:2], lambda s: s[1]) == ("a", ((1, 2), ()))


def test_pending_phrases_say_the_queues_then_the_threads_mid_step() -> None:
    phrases = pending_phrases("items not yet run", "lane", {"0": ["x", 1]}, {"w1": "drain lane 0"})
    assert phrases == ["items not yet run: lane 0: 'x', 1", "threads mid-step: w1 (drain lane 0)"]


def test_pending_phrases_are_empty_when_nothing_is_pending() -> None:
    assert pending_phrases("items not yet run", "lane", {}, {}) == []
