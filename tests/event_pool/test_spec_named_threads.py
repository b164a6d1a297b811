"""The event-pool spec engine holds the threads the trace names, not the header's ``threads``
(docs/trace-format.md, "Limits"; the third outside review, session 47, T5: two events under
``threads: 65536`` took 43 s and 437 MB, and the verdict listed all 65,536 threads). The threads
never named are one stand-in (``trace/named.py``); the verdicts stay the spec's (the corpus's
traces with 32,768 and 65,536 threads, tests/event_pool/corpus, for both engines). Sizes and
counts are asserted, never times."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from model_checks.conformance import validate_file
from model_checks.designs.event_pool.trace.generate import lines as generated
from model_checks.designs.event_pool.trace.named import SPARE
from model_checks.designs.event_pool.trace.spec_search import PoolSearch

pytestmark = pytest.mark.timeout(300)

CORPUS = Path(__file__).parent / "corpus"

POST_AND_SIGNAL = [
    {"seq": 1, "thread": "c", "event": "post", "item": 0, "to": "t5", "result": "ok"},
    {"seq": 2, "thread": "c", "event": "signal", "to": "t5"},
    {"seq": 3, "thread": "t5", "event": "wait"},
    {"seq": 4, "thread": "t5", "event": "wake", "result": "event"},
]


def _held(threads: int, events: list[dict[str, Any]]) -> tuple[tuple[str, ...], int, int, int]:
    """The threads the search holds, its peak of states, the states held, their largest thread map."""
    checker = PoolSearch({"threads": threads})
    for ev in events:
        checker.step(ev)
    states = checker.search.states
    return (
        checker.c.thread_names(),
        checker.search.peak,
        len(states),
        max(len(s.thread.domain()) for s in states),
    )


@pytest.mark.parametrize("threads", [64, 8192])
def test_the_search_is_sized_by_the_threads_the_trace_names(threads: int) -> None:
    assert _held(threads, POST_AND_SIGNAL) == _held(6, POST_AND_SIGNAL)
    assert _held(threads, POST_AND_SIGNAL)[0] == ("t5", SPARE)


def test_threads_are_held_in_the_order_the_trace_names_them_and_the_spare_goes_with_the_last() -> None:
    checker = PoolSearch({"threads": 3})
    for thread in ("t2", "t0"):
        checker.step({"seq": 0, "thread": thread, "event": "wait"})
    assert checker.c.thread_names() == ("t2", "t0", SPARE)
    checker.step({"seq": 0, "thread": "t1", "event": "wait"})
    assert checker.c.thread_names() == ("t2", "t0", "t1")


@pytest.mark.parametrize(
    "name",
    [
        "valid_prefix_threads_65536_one_post.jsonl",
        "invalid_r8_stop_end_while_65535_threads_never_named.jsonl",
        "invalid_r4_post_to_null_while_65535_threads_never_named.jsonl",
    ],
)
def test_the_verdict_never_lists_the_threads_never_named(name: str) -> None:
    v = validate_file(CORPUS / name, engine="spec")
    said = json.dumps(dataclasses.asdict(v))  # the words, what is pending, the states shown
    assert len(said) < 4_000, len(said)
    assert "65535 more, never named" in said, said
    assert '"t1"' not in said and "'t1'" not in said


def test_generated_traces_name_every_thread_and_complete() -> None:
    # The reference's runs: every thread named at last (the spare gone), and Stop returns.
    for seed in range(6):
        lines = list(generated(300, seed=seed, threads=5, stop="drain" if seed % 2 else "discard"))
        checker = PoolSearch(json.loads(lines[0])["config"])
        for line in lines[1:]:
            checker.step(json.loads(line))
        checker.finish(complete=True)
        assert SPARE not in checker.c.thread_names()
