"""The golden corpus's traces under a configuration other than ``CONFIG`` (written by
``make_corpus``): file name -> (steps, configuration, what the manifest expects of it)."""

from __future__ import annotations

from typing import Any

from tests.conformance.corpus_steps import CONFIG, Step, begin, disc, ln, sb, se, submitted

# One worker: w0 holds lane 0's work item when w1 takes lane 1. Only Stop(discard) lets a
# worker give a work item up undrained, and Stop takes effect at its stop_begin (session 37's
# review: accepted before session 41, the give-up put at an unlogged Stop call before the take).
ONE_WORKER = dict(CONFIG, workers=1)
TAKEN_TWICE = [*submitted("p0", 0, "a"), *submitted("p1", 1, "b"), ln("w0", "take", 0)]
STOP_DISCARD = [disc("main", 0, ["a"]), disc("main", 1, ["b"]), se("main", "discard")]

CONFIGURED: dict[str, tuple[list[Step], dict[str, int], dict[str, Any]]] = {
    "invalid_r1_ready_queue_overflow": (
        [*submitted("p0", 0, "a"), *submitted("p1", 1, "b")],
        dict(CONFIG, ready_capacity=1),
        {"code": 1, "seq": 4, "rule": 1},
    ),
    "invalid_r3_too_many_workers": (
        [
            *submitted("p0", 0, "a"),
            *submitted("p0", 1, "b"),
            *submitted("p0", 2, "c"),
            *begin("w0", 0),
            *begin("w1", 1),
            ln("w2", "take", 2),
        ],
        dict(CONFIG, lanes=3, ready_capacity=3),
        {"code": 1, "seq": 11, "rule": 3},
    ),
    "invalid_r3_take_beyond_workers_before_stop_begin": (
        [*TAKEN_TWICE, ln("w1", "take", 1), sb("main", "discard"), *STOP_DISCARD],
        ONE_WORKER,
        {"code": 1, "seq": 6, "rule": 3},
    ),
    "valid_take_beyond_workers_after_stop_begin": (
        [*TAKEN_TWICE, sb("main", "discard"), ln("w1", "take", 1), *STOP_DISCARD],
        ONE_WORKER,
        {"code": 0, "prefix": False},
    ),
}
