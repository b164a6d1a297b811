"""Words of the Work Lane's refusals and prefixes that named a reason the trace contradicts, from the
second outside review of the validators (session 44, /tmp/tracereview2/REPORT.md): the spec engine
refused a discard or a stop_end with a sentence whose every clause was false (F6), and the pending
words named a Stop's mode no event had logged, or left a logged Stop out (F7). Both engines now say
the same, true, reason."""

from __future__ import annotations

import json
from typing import Any

import pytest

from model_checks.conformance import ENGINES
from model_checks.conformance.validator import validate_lines
from tests.conformance.corpus_steps import (
    CONFIG,
    Step,
    begin,
    disc,
    inv,
    lines_of,
    post,
    rej,
    sb,
    se,
    submitted,
)

ONE_PER_DRAIN = {**CONFIG, "max_per_drain": 1}
TWO_QUEUED = [*submitted("p0", 0, "a"), post("p0", 0, "b"), *begin("w0", 0)]

REFUSED: dict[str, tuple[list[Step], dict[str, int], str]] = {
    # wl102: the discard comes before the running drain ended
    "discard_while_draining": (
        [*TWO_QUEUED, sb("m", "discard"), disc("m", 0, ["b"])],
        CONFIG,
        "seq 7: discard on lane 0 while workers are still busy: w0 (drain lane 0)",
    ),
    # wl226: the discard comes while the drainer owes its resubmission
    "discard_while_a_resubmit_is_owed": (
        [
            *TWO_QUEUED,
            sb("m", "discard"),
            inv("w0", 0, "a"),
            ("w0", "drain_end", {"lane": 0, "outcome": "resubmit", "invoked": 1}),
            disc("m", 0, ["b"]),
        ],
        ONE_PER_DRAIN,
        "seq 9: discard on lane 0 while workers are still busy: w0 (owes lane 0)",
    ),
    # wl113
    "stop_end_failed": (
        [sb("m", "drain"), ("m", "stop_end", {"mode": "drain", "result": "failed"})],
        CONFIG,
        "seq 2: stop_end drain reports that the scheduler failed (its own code raised, and what it had"
        " accepted was reported discarded): no behaviour of the spec fails",
    ),
    # wl105
    "stop_end_of_the_other_mode": (
        [sb("m", "drain"), se("m", "discard")],
        CONFIG,
        "seq 2: stop_end discard for a Stop(drain)",
    ),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_stop_event_is_refused_for_its_true_reason(name: str, engine: str) -> None:
    steps, config, words = REFUSED[name]
    verdict = validate_lines(lines_of(steps, config), engine=engine)
    assert (verdict.code, verdict.rule) == (1, 7), verdict.message
    assert verdict.message == words


PENDING: dict[str, tuple[list[Step], str]] = {
    # wl209, wl252: a stop_rejected's mode is the refused call's own, not the Stop in progress's
    "refused_stop_only": (
        [rej("s1", "discard", "stop_in_progress")],
        "a Stop in progress (its stop_begin not logged yet)",
    ),
    "refused_stop_after_a_post": (
        [*submitted("p0", 0, "a"), rej("s1", "discard", "stop_in_progress")],
        "a Stop in progress (its stop_begin not logged yet)",
    ),
    # wl248: a Stop whose stop_begin was logged is named with its mode and thread
    "stop_begun": ([*submitted("p0", 0, "a"), sb("m", "discard")], "Stop(discard) in progress by m"),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(PENDING))
def test_a_prefix_names_the_stop_in_progress_as_logged(name: str, engine: str) -> None:
    steps, stop = PENDING[name]
    verdict = validate_lines(lines_of(steps), engine=engine)
    assert verdict.code == 0 and verdict.prefix, verdict.message
    pending: dict[str, Any] = verdict.pending
    assert pending.get("stop") == stop and verdict.message.endswith(stop), verdict.message


def _trace(design: str, version: int, config: dict[str, int], events: list[dict[str, Any]]) -> list[str]:
    header = {"trace": "lanecheck", "version": version, "design": design, "config": config}
    return [json.dumps(header)] + [json.dumps({"seq": n, **e}) for n, e in enumerate(events, start=1)]


def _lock_free(*events: dict[str, Any]) -> list[str]:
    return _trace("work-lane-lockfree", 2, CONFIG, list(events))


GATE = {"actors": 2, "workers": 1, "permits": 2, "mailbox_capacity": 1, "max_per_drain": 2}
PUSH = {"thread": "p0", "event": "push", "lane": 0, "item": "a"}
OTHER_DESIGNS: dict[str, tuple[list[str], int, str, str]] = {
    # lf27 (F8): the spec's refused post is no push: its invalid_state was offered as the push's result
    "push_capacity_exceeded_on_an_empty_lane": (
        _lock_free({**PUSH, "result": "capacity_exceeded"}),
        6,
        "a push is ok only below lane_capacity, capacity_exceeded only on a full queue",
        "invalid_state",
    ),
    # lf12 (F11): "has logged no a take"
    "lock_free_submit_refused_with_no_take": (
        _lock_free(
            {**PUSH, "result": "ok"},
            {"thread": "p0", "event": "cas", "lane": 0, "ok": True, "from": "idle", "to": "scheduled"},
            {"thread": "p0", "event": "submit_refused", "lane": 0},
        ),
        7,
        "and p0 has logged no take before",
        "no a ",
    ),
    # sg08 (F11): "has logged no a permit_acquire or admit_begin"
    "gate_publish_without_admission": (
        _trace(
            "schedule-gate",
            1,
            GATE,
            [{"thread": "p0", "event": "publish", "actor": 0, "item": "a", "result": "ok"}],
        ),
        3,
        "and p0 has logged no permit_acquire or admit_begin before",
        "no a ",
    ),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(OTHER_DESIGNS))
def test_the_lane_and_gate_refusals_say_what_the_trace_could_log(name: str, engine: str) -> None:
    lines, rule, said, unsaid = OTHER_DESIGNS[name]
    verdict = validate_lines(lines, engine=engine)
    assert (verdict.code, verdict.rule) == (1, rule), verdict.message
    assert said in verdict.message and unsaid not in verdict.message, verdict.message
