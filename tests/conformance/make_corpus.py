"""Writes the golden corpus (``python -m tests.conformance.make_corpus``): traces + manifest.json.

Each case: events as (thread, event, fields); an expectation: code, and seq+rule
(code 1) or line (code 2). Raw cases give the file's lines verbatim.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from model_checks.designs.work_lane.trace.schema import SCHEMA

HERE = Path(__file__).parent / "corpus"
CONFIG = {"lanes": 2, "workers": 2, "lane_capacity": 2, "max_per_drain": 2, "ready_capacity": 2}
Step = tuple[str, str, dict[str, Any]]
# Every event kind of the Work Lane trace format, as its written contract (the JSON schema) lists
# them: not from the reader's code (``fast.STEPS``, ``parse``), which the corpus is there to check.
EVENTS: tuple[str, ...] = tuple(SCHEMA.document()["$defs"]["event"]["properties"]["event"]["enum"])


def post(t: str, lane: int | None, item: Any, result: str = "ok", submit: bool = False) -> Step:
    return (t, "post", {"lane": lane, "item": item, "result": result, "submit": submit})


def ln(t: str, event: str, lane: int) -> Step:
    return (t, event, {"lane": lane})


def inv(t: str, lane: int, item: Any) -> Step:
    return (t, "invoke", {"lane": lane, "item": item})


def end(t: str, lane: int, outcome: str, n: int) -> Step:
    return (t, "drain_end", {"lane": lane, "outcome": outcome, "invoked": n})


def sb(t: str, mode: str) -> Step:
    return (t, "stop_begin", {"mode": mode})


def se(t: str, mode: str) -> Step:
    return (t, "stop_end", {"mode": mode, "result": "ok"})


def rej(t: str, mode: str, reason: str) -> Step:
    return (t, "stop_rejected", {"mode": mode, "reason": reason})


def disc(t: str, lane: int, items: list[Any]) -> Step:
    return (t, "discard", {"lane": lane, "items": items})


def submitted(p: str, lane: int, item: Any) -> list[Step]:
    """A post that reserves the lane's submission, then the submission it owes."""
    return [post(p, lane, item, submit=True), ln(p, "submit", lane)]


def begin(w: str, lane: int) -> list[Step]:
    """A worker takes the lane from the ready queue and starts draining it."""
    return [ln(w, "take", lane), ln(w, "drain_begin", lane)]


def stopped(mode: str) -> list[Step]:
    """Main stops the scheduler and the stop completes."""
    return [sb("main", mode), se("main", mode)]


def handed_over(invoked: int, item: Any) -> list[Step]:
    """w0 ends its drain of lane 0 by resubmitting it; w1 takes it and runs its one remaining item."""
    return [
        end("w0", 0, "resubmit", invoked),
        ln("w0", "submit", 0),
        *begin("w1", 0),
        inv("w1", 0, item),
        end("w1", 0, "idle", 1),
    ]


def one_item(lane: int = 0, item: str = "a", p: str = "p0", w: str = "w0") -> list[Step]:
    """Post one item and run it to the end of its drain."""
    return [*submitted(p, lane, item), *begin(w, lane), inv(w, lane, item), end(w, lane, "idle", 1)]


def retried_and_resubmitted() -> list[Step]:
    """Three posts to a lane of capacity 2, the third refused and retried once the drainer popped
    one; the drain ends owing a resubmission."""
    return [
        *submitted("p0", 0, "a"),
        post("p0", 0, "b"),
        post("p0", 0, "c", "capacity_exceeded"),
        *begin("w0", 0),
        inv("w0", 0, "a"),
        post("p0", 0, "c"),
        inv("w0", 0, "b"),
        end("w0", 0, "resubmit", 2),
    ]


VALID: dict[str, list[Step]] = {
    "basic_drain": [
        *submitted("p0", 0, "a"),
        post("p0", 0, "b"),
        *begin("w0", 0),
        inv("w0", 0, "a"),
        inv("w0", 0, "b"),
        end("w0", 0, "idle", 2),
        *stopped("drain"),
    ],
    "early_pop_makes_room": [
        *submitted("p0", 0, "a"),
        post("p0", 0, "b"),
        *begin("w0", 0),
        post("p1", 0, "c"),
        inv("w0", 0, "a"),
        inv("w0", 0, "b"),
        *handed_over(2, "c"),
        *stopped("drain"),
    ],
    "post_between_stop_rejected_and_stop_begin": [
        rej("s1", "drain", "stop_in_progress"),
        *submitted("p0", 0, "a"),
        sb("main", "drain"),
        *begin("w0", 0),
        inv("w0", 0, "a"),
        end("w0", 0, "idle", 1),
        post("p0", 0, "b", "invalid_state"),
        se("main", "drain"),
    ],
    "resubmit_below_budget": [
        *submitted("p0", 0, "a"),
        *begin("w0", 0),
        inv("w0", 0, "a"),
        post("p0", 0, "b"),
        *handed_over(1, "b"),
        *stopped("drain"),
    ],
    "discard_while_drain_finishes_budget": [
        *submitted("p0", 0, "a"),
        post("p0", 0, "b"),
        *submitted("p1", 1, "c"),
        *begin("w0", 0),
        inv("w0", 0, "a"),
        sb("main", "discard"),
        ln("w1", "take", 1),
        inv("w0", 0, "b"),
        end("w0", 0, "idle", 2),
        disc("main", 1, ["c"]),
        se("main", "discard"),
    ],
    "callback_stop_rejected": [
        *one_item()[:5],
        rej("w0", "drain", "in_callback"),
        end("w0", 0, "idle", 1),
        *stopped("drain"),
    ],
    "callback_posts_to_other_lane": [
        *one_item()[:5],
        *submitted("w0", 1, "x"),
        end("w0", 0, "idle", 1),
        *begin("w1", 1),
        inv("w1", 1, "x"),
        end("w1", 1, "idle", 1),
        *stopped("drain"),
    ],
    "refusals_and_second_stop": [
        post("main", None, "h", "invalid_argument"),
        post("p0", 0, "a", submit=True),
        post("p1", 0, "b"),
        post("p1", 0, "c", "capacity_exceeded"),
        ln("p0", "submit", 0),
        *begin("w0", 0),
        inv("w0", 0, "a"),
        inv("w0", 0, "b"),
        end("w0", 0, "idle", 2),
        *stopped("drain"),
        post("p1", 0, "c", "invalid_state"),
        post("main", None, "h2", "invalid_argument"),
    ],
    # Rule 7: an item is listed in exactly one discard; a lane's items may take several, in any order.
    "discard_split_any_order_or_empty": [
        *submitted("p0", 0, "a"),
        post("p0", 0, "b"),
        *submitted("p1", 1, "c"),
        sb("main", "discard"),
        disc("main", 0, ["b"]),
        disc("main", 1, []),
        disc("main", 1, ["c"]),
        disc("main", 0, ["a"]),
        se("main", "discard"),
    ],
    "main_posts_then_stops": [
        post("main", 1, 7, submit=True),
        ln("main", "submit", 1),
        sb("main", "discard"),
        disc("main", 1, [7]),
        se("main", "discard"),
    ],
    "prefix_item_pending": [*submitted("p0", 0, "a"), ln("w0", "take", 0)],
    "prefix_submission_owed": [post("p0", 1, "a", submit=True)],
    "prefix_stop_in_progress": [*one_item(), rej("s9", "discard", "stop_in_progress")],
}

# name -> (steps, seq, rule)
INVALID: dict[str, tuple[list[Step], int, int]] = {
    "r1_take_out_of_order": (
        [
            *submitted("p0", 0, "a"),
            *submitted("p1", 1, "b"),
            ln("w0", "take", 1),
        ],
        5,
        1,
    ),
    "r1_take_from_empty_ready_queue": ([post("p0", 0, "a", submit=True), ln("w0", "take", 0)], 2, 1),
    "r2_second_reservation": ([post("p0", 0, "a", submit=True), post("p1", 0, "b", submit=True)], 2, 2),
    "r2_owed_submit_skipped": ([post("p0", 0, "a", submit=True), post("p0", 1, "b", submit=True)], 2, 2),
    "r2_submit_not_owed": (
        [*submitted("p0", 0, "a"), ln("p1", "submit", 0)],
        3,
        2,
    ),
    "r2_worker_resubmit_owed": (
        [*retried_and_resubmitted(), ln("w0", "take", 0)],
        11,
        2,
    ),
    "r3_invoke_without_drain": (
        [*submitted("p0", 0, "a"), inv("w0", 0, "a")],
        3,
        3,
    ),
    "r3_invoke_by_other_thread": ([*one_item()[:4], inv("w1", 0, "a")], 5, 3),
    "r3_over_budget": (
        [
            *submitted("p0", 0, "a"),
            post("p0", 0, "b"),
            *begin("w0", 0),
            inv("w0", 0, "a"),
            inv("w0", 0, "b"),
            post("p0", 0, "c"),
            inv("w0", 0, "c"),
        ],
        9,
        3,
    ),
    "r3_invoked_count_wrong": ([*one_item()[:5], end("w0", 0, "idle", 2)], 6, 3),
    "r3_drain_begin_without_take": (
        [*submitted("p0", 0, "a"), ln("w0", "drain_begin", 0)],
        3,
        3,
    ),
    "r3_resubmit_before_budget": (
        [
            *submitted("p0", 0, "a"),
            post("p0", 0, "b"),
            *begin("w0", 0),
            inv("w0", 0, "a"),
            end("w0", 0, "resubmit", 1),
        ],
        7,
        3,
    ),
    "r4_invoke_out_of_order": (
        [
            *submitted("p0", 0, "a"),
            post("p0", 0, "b"),
            *begin("w0", 0),
            inv("w0", 0, "b"),
        ],
        6,
        4,
    ),
    "r4_invoke_never_posted": ([*one_item()[:4], inv("w0", 0, "zz")], 5, 4),
    "r4_invoke_twice": ([*one_item()[:5], inv("w0", 0, "a")], 6, 4),
    # an item id accepted again while in flight (session 37's review: both accepted and both run)
    "r4_item_accepted_twice": (
        [*submitted("p0", 0, "a"), post("p0", 0, "a"), *begin("w0", 0), inv("w0", 0, "a"), inv("w0", 0, "a")],
        3,
        4,
    ),
    "r4_item_in_flight_posted_to_another_lane": ([*submitted("p0", 0, "a"), *submitted("p1", 1, "a")], 3, 4),
    "r4_invoke_refused_item": (
        [
            *submitted("p0", 0, "a"),
            post("p0", 0, "b"),
            post("p0", 0, "c", "capacity_exceeded"),
            *begin("w0", 0),
            inv("w0", 0, "a"),
            inv("w0", 0, "c"),
        ],
        8,
        4,
    ),
    "r5_lost_wakeup": (
        [
            *submitted("p0", 0, "a"),
            post("p0", 0, "b"),
            *begin("w0", 0),
            inv("w0", 0, "a"),
            end("w0", 0, "idle", 1),
        ],
        7,
        5,
    ),
    "r5_resubmit_empty_lane": ([*one_item()[:5], end("w0", 0, "resubmit", 1)], 6, 5),
    "r5_post_to_idle_lane_without_reservation": ([post("p0", 0, "a")], 1, 5),
    "r6_ok_on_full_lane": (
        [*submitted("p0", 0, "a"), post("p0", 0, "b"), post("p0", 0, "c")],
        4,
        6,
    ),
    "r6_capacity_exceeded_with_room": ([post("p0", 0, "a", "capacity_exceeded")], 1, 6),
    "r7_post_ok_after_stop_begin": ([sb("main", "drain"), post("p0", 0, "a", submit=True)], 2, 7),
    "r7_stop_end_with_item_pending": (
        [*submitted("p0", 0, "a"), *stopped("drain")],
        4,
        7,
    ),
    "r7_drain_begin_after_discard": (
        [
            *submitted("p0", 0, "a"),
            ln("w0", "take", 0),
            sb("main", "discard"),
            ln("w0", "drain_begin", 0),
        ],
        5,
        7,
    ),
    "r7_discard_wrong_items": (
        [
            *submitted("p0", 0, "a"),
            post("p0", 0, "b"),
            sb("main", "discard"),
            disc("main", 0, ["b", "b"]),
        ],
        5,
        7,
    ),
    "r7_discard_leaves_an_item": (
        [
            *submitted("p0", 0, "a"),
            post("p0", 0, "b"),
            sb("main", "discard"),
            disc("main", 0, ["b"]),
            se("main", "discard"),
        ],
        6,
        7,
    ),
    "r7_stop_begin_with_post_in_flight": ([post("p0", 0, "a", submit=True), sb("main", "drain")], 2, 7),
    "r7_discard_in_drain_mode": (
        [*submitted("p0", 0, "a"), sb("main", "drain"), disc("main", 0, ["a"])],
        4,
        7,
    ),
    "r7_callback_stop_outside_callback": ([*one_item()[:4], rej("w0", "drain", "in_callback")], 5, 7),
    # a Stop begun inside a callback (session 37's review: accepted, a complete behaviour, before)
    "r7_stop_begun_in_a_callback": (
        [*one_item()[:5], sb("w0", "drain"), end("w0", 0, "idle", 1), se("w0", "drain")],
        6,
        7,
    ),
    "r7_discard_stop_begun_in_a_callback": (
        [*one_item()[:5], sb("w0", "discard"), end("w0", 0, "idle", 1), se("w0", "discard")],
        6,
        7,
    ),
    "r7_second_stop_begin": ([*stopped("drain"), sb("s1", "drain")], 3, 7),
    "r7_take_after_stop_end": (
        [
            *submitted("p0", 0, "a"),
            sb("main", "discard"),
            disc("main", 0, ["a"]),
            se("main", "discard"),
            ln("w0", "take", 0),
        ],
        6,
        7,
    ),
    "r7_post_after_stop_rejected_not_in_flight": (
        [
            *submitted("p0", 0, "a"),
            rej("s1", "drain", "stop_in_progress"),
            post("p0", 1, "b", submit=True),
            post("p0", 1, "c"),
        ],
        5,
        2,
    ),
}

HEADER = json.dumps({"trace": "lanecheck", "version": 1, "design": "work-lane", "config": CONFIG})
E1 = json.dumps(
    {"seq": 1, "thread": "p0", "event": "post", "lane": 0, "item": "a", "result": "ok", "submit": True}
)
E2 = json.dumps({"seq": 2, "thread": "p0", "event": "submit", "lane": 0})

# name -> (lines, line)
MALFORMED: dict[str, tuple[list[str], int]] = {
    "wf_bad_json": ([HEADER, E1, '{"seq": 2, "thread": "p0", "event": '], 3),
    "wf_missing_header": ([E1, E2], 1),
    "wf_wrong_version": ([HEADER.replace('"version": 1', '"version": 2'), E1], 1),
    "wf_config_missing_field": ([HEADER.replace('"workers": 2, ', ""), E1], 1),
    "wf_unknown_event": (
        [HEADER, E1, json.dumps({"seq": 2, "thread": "p0", "event": "enqueue", "lane": 0})],
        3,
    ),
    "wf_missing_field": (
        [
            HEADER,
            json.dumps({"seq": 1, "thread": "p0", "event": "post", "lane": 0, "item": "a", "result": "ok"}),
        ],
        2,
    ),
    "wf_ill_typed_lane": (
        [HEADER, E1, json.dumps({"seq": 2, "thread": "p0", "event": "submit", "lane": "0"})],
        3,
    ),
    "wf_bool_lane": (
        [HEADER, E1, json.dumps({"seq": 2, "thread": "p0", "event": "submit", "lane": True})],
        3,
    ),
    "wf_lane_out_of_range": (
        [HEADER, E1, json.dumps({"seq": 2, "thread": "p0", "event": "submit", "lane": 5})],
        3,
    ),
    "wf_seq_gap": ([HEADER, E1, E2.replace('"seq": 2', '"seq": 3')], 3),
    "wf_blank_line": ([HEADER, E1, "", E2], 3),
    "wf_submit_on_refused_post": (
        [
            HEADER,
            json.dumps(
                {
                    "seq": 1,
                    "thread": "p0",
                    "event": "post",
                    "lane": 0,
                    "item": "a",
                    "result": "capacity_exceeded",
                    "submit": True,
                }
            ),
        ],
        2,
    ),
    "wf_thread_not_string": (
        [HEADER, E1, json.dumps({"seq": 2, "thread": 3, "event": "submit", "lane": 0})],
        3,
    ),
}


def lines_of(steps: list[Step], config: dict[str, int] | None = None) -> list[str]:
    header = {"trace": "lanecheck", "version": 1, "design": "work-lane", "config": config or CONFIG}
    out = [json.dumps(header)]
    for seq, (thread, event, fields) in enumerate(steps, start=1):
        out.append(json.dumps({"seq": seq, "thread": thread, "event": event, **fields}))
    return out


def main() -> None:
    HERE.mkdir(exist_ok=True)
    manifest: dict[str, dict[str, Any]] = {}
    for name, steps in VALID.items():
        (HERE / f"valid_{name}.jsonl").write_text("\n".join(lines_of(steps)) + "\n")
        manifest[f"valid_{name}.jsonl"] = {"code": 0, "prefix": name.startswith("prefix")}
    for name, (steps, seq, rule) in INVALID.items():
        (HERE / f"invalid_{name}.jsonl").write_text("\n".join(lines_of(steps)) + "\n")
        manifest[f"invalid_{name}.jsonl"] = {"code": 1, "seq": seq, "rule": rule}
    small_ready = dict(CONFIG, ready_capacity=1)
    overflow = [
        *submitted("p0", 0, "a"),
        *submitted("p1", 1, "b"),
    ]
    (HERE / "invalid_r1_ready_queue_overflow.jsonl").write_text(
        "\n".join(lines_of(overflow, small_ready)) + "\n"
    )
    manifest["invalid_r1_ready_queue_overflow.jsonl"] = {"code": 1, "seq": 4, "rule": 1}
    three = dict(CONFIG, lanes=3, ready_capacity=3)
    busy = [
        *submitted("p0", 0, "a"),
        *submitted("p0", 1, "b"),
        *submitted("p0", 2, "c"),
        *begin("w0", 0),
        *begin("w1", 1),
        ln("w2", "take", 2),
    ]
    (HERE / "invalid_r3_too_many_workers.jsonl").write_text("\n".join(lines_of(busy, three)) + "\n")
    manifest["invalid_r3_too_many_workers.jsonl"] = {"code": 1, "seq": 11, "rule": 3}
    # One worker: w0 holds lane 0's work item when w1 takes lane 1. Only Stop(discard) lets a
    # worker give a work item up undrained, and Stop takes effect at its stop_begin (session 37's
    # review: accepted before session 41, the give-up put at an unlogged Stop call before the take).
    one = dict(CONFIG, workers=1)
    taken_twice = [*submitted("p0", 0, "a"), *submitted("p1", 1, "b"), ln("w0", "take", 0)]
    stop_discard = [disc("main", 0, ["a"]), disc("main", 1, ["b"]), se("main", "discard")]
    for name, steps, verdict in (
        (
            "invalid_r3_take_beyond_workers_before_stop_begin",
            [*taken_twice, ln("w1", "take", 1), sb("main", "discard"), *stop_discard],
            {"code": 1, "seq": 6, "rule": 3},
        ),
        (
            "valid_take_beyond_workers_after_stop_begin",
            [*taken_twice, sb("main", "discard"), ln("w1", "take", 1), *stop_discard],
            {"code": 0, "prefix": False},
        ),
    ):
        (HERE / f"{name}.jsonl").write_text("\n".join(lines_of(steps, one)) + "\n")
        manifest[f"{name}.jsonl"] = verdict
    for name, (raw, line) in MALFORMED.items():
        (HERE / f"malformed_{name}.jsonl").write_text("\n".join(raw) + "\n")
        manifest[f"malformed_{name}.jsonl"] = {"code": 2, "line": line}
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
